import GatewayAPI
import GatewayConfiguration
import GatewayCredentials
import GatewayLifecycle
import PushAttest
import PushCrypto
import PushHTTP
import PushJSON
import PushPostgres
import PushSystem

extension LifecycleRoutes {
    /// `POST /v1/installations` (docs/protocol.md §4.2).
    func enroll(_ request: Request) -> Response {
        enroll(EnrollRequest.self, request) {
            (enroll, profile, environment, now) throws(LifecycleError) -> AttestedEnrollmentKey in
            let head = enroll.head
            try flows.checkChallenge(id: head.challengeID.value, challenge: head.challenge.value, now: now)

            // §3: the enrollment transcript bytes are the App Attest clientData.
            let transcript = AppAttestTranscript.enroll(
                origin: configuration.origin.text, challengeID: head.challengeID.text, challenge: head.challenge.text,
                keyID: enroll.keyID.text, appProfile: head.appProfile, endpoint: head.endpoint,
                endpointEpoch: head.endpointEpoch, expiresAt: head.expiresAt)
            guard let attestationVerifier else { throw LifecycleError(.unavailable) }
            do {
                let attested = try stages.time(.appAttestVerification) {
                    try attestationVerifier.verify(
                        attestationObject: enroll.attestation, clientDataHash: transcript.clientDataHash,
                        keyID: enroll.keyID.value, appID: profile.appID, environment: environment, at: now.seconds)
                }
                return AttestedEnrollmentKey(
                    keyID: attested.keyID, publicKey: attested.publicKey, receipt: attested.receipt)
            } catch {
                throw LifecycleError(.invalidAttestation)
            }
        }
    }

    /// One enrollment (§4.2, §4.2a): the body, a profile the route enrolls into and an expiry within
    /// the installation lifetime (400), then the lifecycle token (429); then `attest`, which checks
    /// the challenge and the route's attestation; then the flow stores the installation, and the
    /// route answers its `201`.
    func enroll<Body: EnrollmentBody>(
        _: Body.Type, _ request: Request,
        attest: (Body, AppProfile, Body.Requirements, Now) throws(LifecycleError) -> AttestedEnrollmentKey
    ) -> Response {
        respond { () throws(LifecycleError) in
            let now = Now(unixMilliseconds: clock.unixMilliseconds())
            guard let body = try? Body(body: request.body),
                let profile = configuration.profile(id: body.head.appProfile),
                let requirements = Body.requirements(of: profile),
                let endpoint = flows.endpoint(body.head.endpoint, profile: profile),
                now.seconds < body.head.expiresAt,
                body.head.expiresAt <= now.seconds + configuration.maxInstallationLifetimeSeconds
            else { throw LifecycleError(.invalidRequest) }
            try takeLifecycleToken(request)
            let key = try attest(body, profile, requirements, now)
            let handle = try flows.enroll(
                Enrollment(
                    platform: Body.platform, profile: profile, key: key, endpoint: endpoint,
                    expiresAt: body.head.expiresAt, challengeID: body.head.challengeID.value,
                    deadline: request.deadline, route: Body.route),
                now: now)
            return Self.enrolled(handle: handle, expiresAt: body.head.expiresAt)
        }
    }

    /// The `201` of both enrollment routes (docs/protocol.md §4.2, §4.2a).
    static func enrolled(handle: CanonicalUUID, expiresAt: Int64) -> Response {
        var writer = JSONWriter(reservingCapacity: 96)
        writer.beginObject()
        writer.member("installation_handle", handle.text)
        writer.member("endpoint_epoch", 1)
        writer.member("expires_at", expiresAt)
        writer.endObject()
        return .json(status: 201, writer.bytes)
    }
}

/// The body of one of the two enrollment routes (docs/protocol.md §4.2, §4.2a).
protocol EnrollmentBody {
    /// What the route's attestation check needs of the profile.
    associatedtype Requirements
    /// The platform the route enrolls.
    static var platform: AppProfile.Platform { get }
    /// The route's label in storage-failure logs.
    static var route: String { get }
    init(body: [UInt8]) throws(APIError)
    var head: EnrollmentHead { get }
    /// nil when the route does not enroll into `profile`.
    static func requirements(of profile: AppProfile) -> Requirements?
}

extension EnrollRequest: EnrollmentBody {
    static let platform = AppProfile.Platform.ios
    static let route = AppAttestTranscript.Route.enroll.rawValue

    /// §4.2: an iOS profile only; its App Attest environment.
    static func requirements(of profile: AppProfile) -> AppAttestEnvironment? {
        guard profile.platform == .ios else { return nil }
        return profile.appAttestEnvironment == .development ? .development : .production
    }
}
