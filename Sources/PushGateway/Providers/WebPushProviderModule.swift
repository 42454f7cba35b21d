import Foundation
import GatewayConfiguration
import PushCrypto
import PushCurl
import PushDelivery
import PushMetrics
import PushSystem
import PushWebPush
import Synchronization

/// Web Push (docs/protocol.md §8b) as a provider module: `android` profiles whose installations
/// enroll a §8b subscription string and are woken through the push service it names
/// (docs/decisions/0840).
struct WebPushProviderModule: PushProviderModule {
    var service: PushService { .webpush }
    var platform: AppProfile.Platform { .android }
    var displayName: String { "Web Push" }
    var endpointSyntax: String {
        "the Web Push subscription string <p256dh>.<auth>.<url> of docs/protocol.md §8b (at most 1200 bytes)"
    }

    /// docs/protocol.md §8b: the string's UTF-8 bytes are the endpoint, once every rule holds.
    func endpoint(_ text: String) -> [UInt8]? {
        WebPushEndpoint(text) == nil ? nil : Array(text.utf8)
    }

    /// §12: a profile's `…_WEBPUSH_ALLOWED_HOSTS` is checked at enrollment and rotation too.
    func endpoint(_ text: String, profile: AppProfile) -> [UInt8]? {
        guard let endpoint = WebPushEndpoint(text) else { return nil }
        if let allowed = try? WebPushProfileSettings.allowedHosts(profile), !allowed.permits(endpoint.host) {
            return nil
        }
        return Array(text.utf8)
    }

    /// §8b: the fingerprint covers the push resource alone, so varying `p256dh` and `auth` cannot
    /// hold one push resource in several live installations.
    func fingerprintInput(_ endpoint: [UInt8]) -> [UInt8] {
        WebPushEndpoint(String(decoding: endpoint, as: UTF8.self)).map { Array($0.url.utf8) } ?? endpoint
    }

    func problems(_ profile: AppProfile, configuration: GatewayConfiguration) -> [ConfigurationError.Problem] {
        WebPushProfileSettings.problems(profile)
    }

    /// The `k=` value an app registers with its distributor (§8b, §12 `check-config`).
    func published(_ profile: AppProfile) -> [String] {
        guard let settings = try? WebPushProfileSettings(profile) else { return [] }
        return ["profile \(profile.id): webpush vapid public key: \(settings.vapid.publicKey)"]
    }

    func reasonLabel(_ report: PushReport) -> String? { WebPushStatusLabel(report)?.rawValue }

    func makeMetrics(profileIDs: [String]) -> any PushProviderMetrics {
        WebPushProviderMetrics(profileIDs: profileIDs)
    }

    /// Every `webpush` profile shares one `WebPushPushProvider` and so one sender: the per-origin
    /// buckets and the connection cap are the replica's (§8b).
    func makeProvider(
        profiles: [AppProfile], configuration: GatewayConfiguration, runtime: Runtime
    ) throws(PushProviderStartError) -> any PushProvider {
        let webPushProfiles = try WebPushProfileSettings.loaded(profiles).mapValues {
            WebPushProfile(vapid: $0.vapid, allowedHosts: $0.allowedHosts)
        }
        let webPush = configuration.webPush
        var settings = WebPushSender.Settings()
        settings.originRatePerSecond = Double(webPush.originRatePerSecond)
        settings.addressRule = WebPushAddressRule(
            extraNAT64Prefixes: webPush.nat64Prefixes, denied: webPush.deniedRanges,
            allowsLoopback: webPush.allowsLoopback)
        if let timeout = configuration.pushRequestTimeout { settings.requestTimeout = timeout }
        let client = CurlMultiClient.Configuration(
            maximumConnections: webPush.maximumConnections,
            proxy: configuration.egressProxy.map { proxy in
                "http://" + (proxy.host.contains(":") ? "[\(proxy.host)]" : proxy.host) + ":\(proxy.port)"
            }, extraTrustAnchorFile: webPush.extraTrustAnchorFile)
        return WebPushPushProvider(
            profiles: webPushProfiles, settings: settings, client: client, on: runtime.loops.next(),
            workers: runtime.workers)
    }

    func describe(_ profile: AppProfile) -> String {
        let key = (try? WebPushProfileSettings(profile))?.vapid.publicKey ?? "none"
        return "webpush, vapid key \(key)"
    }
}

/// A `webpush` profile's settings from its `…_WEBPUSH_*` values (docs/protocol.md §12), each
/// refusal naming its variable.
struct WebPushProfileSettings: ProviderProfileSettings {
    static let keyFile = "WEBPUSH_VAPID_KEY_FILE"
    static let subject = "WEBPUSH_VAPID_SUBJECT"
    static let allowedHostsSuffix = "WEBPUSH_ALLOWED_HOSTS"
    static let known = [keyFile, subject, allowedHostsSuffix]

    let vapid: VAPIDSigner
    let allowedHosts: WebPushAllowedHosts?

    init(_ profile: AppProfile) throws(ProviderSettingsRefusal) {
        let values = profile.providerValues
        func refuse(_ suffix: String, _ problem: String) -> ProviderSettingsRefusal {
            ProviderSettingsRefusal(variable: profile.variable(suffix), problem: problem)
        }
        if let unknown = values.keys.sorted().first(where: { !Self.known.contains($0) }) {
            throw refuse(unknown, "is not a webpush profile variable (check its spelling)")
        }
        guard let path = values[Self.keyFile], !path.isEmpty else { throw refuse(Self.keyFile, "is required") }
        guard let data = FileManager.default.contents(atPath: path), !data.isEmpty else {
            throw refuse(Self.keyFile, "names a file that cannot be read or is empty")
        }
        let key: P256PrivateKey
        do {
            key = try P256PrivateKey(pem: String(decoding: data, as: UTF8.self))
        } catch {
            throw refuse(
                Self.keyFile, "does not hold an unencrypted P-256 private key (PEM, SEC 1 EC PRIVATE KEY or PKCS#8)")
        }
        guard let subject = values[Self.subject], !subject.isEmpty else { throw refuse(Self.subject, "is required") }
        guard Self.isContactURI(subject) else {
            throw refuse(Self.subject, "must be a mailto: or https: URI of printable ASCII without spaces")
        }
        vapid = VAPIDSigner(key: key, subject: subject)
        allowedHosts = try Self.allowedHosts(profile)
    }

    /// `…_WEBPUSH_ALLOWED_HOSTS`, nil when unset.
    static func allowedHosts(_ profile: AppProfile) throws(ProviderSettingsRefusal) -> WebPushAllowedHosts? {
        guard let text = profile.providerValues[allowedHostsSuffix] else { return nil }
        guard let hosts = WebPushAllowedHosts(text) else {
            throw ProviderSettingsRefusal(
                variable: profile.variable(allowedHostsSuffix),
                problem:
                    "must be a comma list of lowercase host names or *.suffix patterns (A-labels, no spaces, no repeats)"
            )
        }
        return hosts
    }

    /// RFC 8292 §2.1: the contact is a `mailto:` or `https:` URI; it goes into a JWT claim, so
    /// printable ASCII only.
    static func isContactURI(_ text: String) -> Bool {
        (text.hasPrefix("mailto:") || text.hasPrefix("https://")) && text.utf8.count <= 256
            && text.utf8.count > (text.hasPrefix("mailto:") ? 7 : 8)
            && text.utf8.allSatisfy {
                (0x21...0x7e).contains($0) && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\")
            }
    }
}

/// `push_gateway_webpush_responses_total`'s `status` label (docs/protocol.md §9): the answer's
/// status class, `transport` for a request without an answer, `refused_address` for an endpoint
/// whose host resolved only to refused addresses (docs/decisions/0840).
enum WebPushStatusLabel: String, CaseIterable {
    case success = "2xx"
    case notFound = "404"
    case gone = "410"
    case payloadTooLarge = "413"
    case tooManyRequests = "429"
    case clientError = "4xx"
    case serverError = "5xx"
    case transport
    case refusedAddress = "refused_address"

    /// nil for a send that ended before any request for another reason (the origin's bucket,
    /// resolution, the allowed hosts, the VAPID signature).
    init?(_ report: PushReport) {
        if let status = report.status {
            switch status {
            case 200...299: self = .success
            case 404: self = .notFound
            case 410: self = .gone
            case 413: self = .payloadTooLarge
            case 429: self = .tooManyRequests
            case 500...599: self = .serverError
            // A redirect is never followed: like a 4xx it is a request that can never succeed.
            default: self = .clientError
            }
            return
        }
        switch report.webPushReason {
        case .refusedAddress: self = .refusedAddress
        case .timeout, .transport, .responseTooLarge: self = .transport
        default: return nil
        }
    }
}

/// `push_gateway_webpush_requests_total{outcome}` and
/// `push_gateway_webpush_responses_total{profile,status}` (docs/protocol.md §9).
package final class WebPushProviderMetrics: PushProviderMetrics {
    let requests: CounterFamily
    let responses: CounterFamily
    /// `push_gateway_webpush_refusing_origins` (docs/decisions/0856), read from the one provider.
    let refusingOrigins: SampledGaugeFamily
    private let observed: ObservedWebPushProvider

    init(profileIDs: [String]) {
        requests = CounterFamily(
            name: "push_gateway_webpush_requests_total", help: "Web Push requests, by outcome.",
            labelNames: ["outcome"],
            series: profileIDs.isEmpty ? [] : PushRequestOutcome.allCases.map { [$0.rawValue] })
        responses = CounterFamily(
            name: "push_gateway_webpush_responses_total",
            help: "Web Push answers, by profile and status class; transport and refused_address without one.",
            labelNames: ["profile", "status"],
            series: profileIDs.flatMap { profile in WebPushStatusLabel.allCases.map { [profile, $0.rawValue] } })
        let observed = ObservedWebPushProvider()
        self.observed = observed
        refusingOrigins = SampledGaugeFamily(
            name: "push_gateway_webpush_refusing_origins",
            help: "Distinct Web Push origins that answered 401 or 403 in the last 10 minutes, on this replica."
        ) {
            let provider: WebPushPushProvider? = observed.provider.withLock { $0 }
            return provider.map { [([], Double($0.refusingOriginCount))] } ?? []
        }
    }

    package var families: [any MetricFamily] { [requests, responses, refusingOrigins] }

    package func observe(_ provider: any PushProvider, profileID: String) {
        guard let webPush = provider as? WebPushPushProvider else { return }
        observed.provider.withLock { $0 = webPush }
    }

    package func record(_ report: PushReport, profile: String) {
        if let outcome = report.requestOutcome {
            requests.add(UInt64(report.requests), labelValues: [outcome.rawValue])
        }
        if let label = WebPushStatusLabel(report) { responses.add(1, labelValues: [profile, label.rawValue]) }
    }
}

/// The provider `observe` was given, read at scrape time.
private final class ObservedWebPushProvider: Sendable {
    let provider = Mutex<WebPushPushProvider?>(nil)
}
