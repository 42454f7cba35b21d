import PushNostr

/// NIP-98 `Authorization` header values checked against a fixed delivery request: URL, body and
/// "now" match Fuzz/corpus/nip98/valid.txt, which verifies.
enum NIP98Target {
    static let requestURL: ReceivedRequestURL = {
        guard
            let url = ReceivedRequestURL(
                host: "push.example.com", forwardedProto: "https", requestTarget: "/v1/deliveries/apns")
        else { fatalError("the fixed request URL does not parse") }
        return url
    }()
    static let body = Array(#"{"v":1}"#.utf8)
    static let now: Int64 = 1_800_000_000
    static let verifier = NIP98Verifier(allowedPublicOrigins: ["https://push.example.com"])

    static func prepare() { _ = requestURL }

    static func run(_ input: [UInt8]) {
        let header = String(decoding: input, as: UTF8.self)
        let result = verifier.verify(
            authorization: header, requestURL: requestURL, method: "POST", body: body, now: now)
        guard case .success(let authorization) = result else { return }
        FuzzCheck.require(input.count <= NIP98Verifier.maximumHeaderLength, "over-long header accepted")
        let age = now - authorization.createdAt
        FuzzCheck.require(
            age <= NIP98Verifier.maximumAge && age >= -NIP98Verifier.maximumLead, "event outside the time window")
        FuzzCheck.require(authorization.eventID.count == 32, "event id is not 32 bytes")
        // The same header for another body must fail: the payload tag binds the body.
        let otherBody = verifier.verify(
            authorization: header, requestURL: requestURL, method: "POST", body: body + [0x20], now: now)
        guard case .failure(let failure) = otherBody, failure.code == .payloadMismatch else {
            FuzzCheck.require(false, "header accepted for a different body")
            return
        }
    }
}
