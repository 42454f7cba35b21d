import Foundation
import PushCrypto
import PushTestSupport
import Testing

@testable import GatewayCredentials
@testable import PushGateway

/// A JSON object body as an ordered list of members with raw JSON values, to derive malformed
/// variants from a valid body one defect at a time.
struct LifecycleBody {
    var members: [(name: String, value: String)]

    /// Parses a flat object whose values contain no `,` or `:` outside strings (the bodies built here).
    init(_ text: String) throws {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        var members: [(String, String)] = []
        // Keep the order of the text: find each name's position.
        for name in object.keys.sorted(by: {
            text.range(of: "\"\($0)\":")!.lowerBound < text.range(of: "\"\($1)\":")!.lowerBound
        }) {
            let value = object[name]!
            members.append((name, value is String ? "\"\(value)\"" : "\(value)"))
        }
        self.members = members
    }

    var text: String { "{" + members.map { "\"\($0.name)\":\($0.value)" }.joined(separator: ",") + "}" }

    func replacing(_ name: String, with value: String) -> String {
        var copy = self
        copy.members = members.map { $0.name == name ? (name, value) : $0 }
        return copy.text
    }

    func removing(_ name: String) -> String {
        var copy = self
        copy.members.removeAll { $0.name == name }
        return copy.text
    }

    func adding(_ name: String, _ value: String) -> String {
        var copy = self
        copy.members.append((name, value))
        return copy.text
    }

    /// Defects every route shares (docs/protocol.md §1): missing, unknown and duplicate members, `v`,
    /// wrong types, trailing bytes, not an object.
    var commonDefects: [String] {
        var bodies = members.map { removing($0.name) }
        bodies += [
            adding("extra", "1"), adding(members[1].name, members[1].value), replacing("v", with: "2"),
            replacing("v", with: "1.0"), replacing("v", with: "\"1\""), text + "x", text + "{}", "[" + text + "]",
            "", "null", text.replacingOccurrences(of: "{\"v\":1", with: "{\"v\":1,\"v\":1"),
        ]
        for member in members where member.value.hasPrefix("\"") {
            bodies.append(replacing(member.name, with: "1"))
            bodies.append(replacing(member.name, with: "null"))
        }
        for member in members where !member.value.hasPrefix("\"") && member.name != "v" {
            bodies += [
                replacing(member.name, with: member.value + ".5"), replacing(member.name, with: "1e3"),
                replacing(member.name, with: "\"\(member.value)\""),
                replacing(member.name, with: "9223372036854775808"),
            ]
        }
        return bodies
    }

    /// Wrong formats of the values named in docs/protocol.md §1.
    func formatDefects(now: Int64) -> [String] {
        var bodies: [String] = []
        for member in members {
            let value = String(member.value.dropFirst().dropLast())
            switch member.name {
            case "challenge_id", "installation_handle":
                bodies += [
                    replacing(member.name, with: "\"\(value.uppercased())\""),
                    replacing(member.name, with: "\"\(value.replacingOccurrences(of: "-", with: ""))\""),
                    replacing(member.name, with: "\"{\(value)}\""),
                ]
            case "challenge":
                bodies += [
                    replacing(member.name, with: "\"\(value.dropLast())\""),
                    replacing(member.name, with: "\"\(value)=\""),
                    replacing(member.name, with: "\"+\(value.dropFirst())\""),
                ]
            case "key_id":
                bodies.append(replacing(member.name, with: "\"\(Base64.encode([UInt8](repeating: 1, count: 31)))\""))
            case "relay_pubkey":
                bodies += [
                    replacing(member.name, with: "\"\(value.uppercased())\""),
                    replacing(member.name, with: "\"\(value.dropLast())\""),
                    // x ≥ the field prime: not a curve point.
                    replacing(member.name, with: "\"\(String(repeating: "f", count: 64))\""),
                ]
            case "endpoint":
                bodies += [
                    replacing(member.name, with: "\"\""), replacing(member.name, with: "\"abc\""),
                    replacing(member.name, with: "\"\(value.uppercased())\""),
                    replacing(member.name, with: "\"\(String(repeating: "ab", count: 513))\""),
                ]
            case "assertion", "attestation":
                bodies += [
                    replacing(member.name, with: "\"\""), replacing(member.name, with: "\"!!!!\""),
                    replacing(
                        member.name,
                        with:
                            "\"\(Base64.encode([UInt8](repeating: 1, count: member.name == "assertion" ? 1025 : 16385)))\""
                    ),
                ]
            default:
                break
            }
        }
        return bodies
    }
}

@Suite(
    "Lifecycle rejections: exact 400 bodies that write nothing, and no existence oracle", .tags(.postgres),
    .testBodyThreads)
struct LifecycleRejectionTests {
    static let invalidRequest = #"{"error":"invalid_request"}"#

    /// Posts every body and expects the exact 400, then checks no table changed.
    static func expectAllRejected(
        _ gateway: LifecycleGateway, _ path: String, _ bodies: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let before = try gateway.rowCounts()
        let installations = try gateway.installationsText()
        for body in bodies {
            let response = try gateway.post(path, body)
            #expect(
                response.status == 400 && response.bodyText == Self.invalidRequest, "\(path) accepted \(body)",
                sourceLocation: sourceLocation)
        }
        #expect(try gateway.rowCounts() == before, sourceLocation: sourceLocation)
        #expect(try gateway.installationsText() == installations, sourceLocation: sourceLocation)
    }

    @Test("malformed enrollment bodies and enrollment rule violations are 400 invalid_request")
    func malformedEnrollment() throws {
        let gateway = try LifecycleGateway()
        let device = try gateway.makeDevice()
        let now = gateway.clock.unixSeconds()
        let valid = try LifecycleBody(
            try device.enrollBody(challenge: try gateway.challenge(), endpoint: device.endpoint, expiresAt: now + 600))
        let maximum = gateway.configuration.maxInstallationLifetimeSeconds
        let rules = [
            valid.replacing("endpoint_epoch", with: "2"), valid.replacing("endpoint_epoch", with: "0"),
            valid.replacing("expires_at", with: "\(now)"), valid.replacing("expires_at", with: "\(now + maximum + 1)"),
            valid.replacing("app_profile", with: "\"buzz-ios-sandbox\""), valid.replacing("app_profile", with: "\"\""),
        ]
        try Self.expectAllRejected(
            gateway, "/v1/installations", valid.commonDefects + valid.formatDefects(now: now) + rules)
        // The valid body itself is accepted, so each rejection above came from its one defect.
        #expect(try gateway.post("/v1/installations", valid.text).status == 201)
        // The longest allowed lifetime is accepted too.
        let longest = try gateway.makeDevice()
        let edge = try longest.enrollBody(
            challenge: try gateway.challenge(), endpoint: longest.endpoint, expiresAt: now + maximum)
        #expect(try gateway.post("/v1/installations", edge).status == 201)
    }

    @Test("malformed assertion-route bodies and route rule violations are 400 invalid_request")
    func malformedAssertionRoutes() throws {
        let gateway = try LifecycleGateway()
        let device = try gateway.makeDevice()
        try gateway.enroll(device)
        let now = gateway.clock.unixSeconds()
        let relay = lifecycleRelayKey()
        let maximumGrant = gateway.configuration.maxGrantLifetimeSeconds

        let delegate = try LifecycleBody(
            try device.delegateBody(
                challenge: try gateway.challenge(), epoch: 1, generation: 1, relay: relay, notBefore: now,
                expiresAt: now + 600))
        try Self.expectAllRejected(
            gateway, "/v1/delegations",
            delegate.commonDefects + delegate.formatDefects(now: now) + [
                delegate.replacing("generation", with: "0"), delegate.replacing("endpoint_epoch", with: "0"),
                delegate.replacing("not_before", with: "\(now + 301)"),
                delegate.replacing("not_before", with: "\(now + 600)"),
                delegate.replacing("expires_at", with: "\(now + maximumGrant + 1)"),
            ])

        let rotate = try LifecycleBody(
            try device.rotateBody(challenge: try gateway.challenge(), epoch: 1, endpoint: Hex.encode([0xab, 0xcd])))
        try Self.expectAllRejected(
            gateway, "/v1/installations/endpoint",
            rotate.commonDefects + rotate.formatDefects(now: now) + [
                rotate.replacing("new_endpoint_epoch", with: "3"), rotate.replacing("new_endpoint_epoch", with: "1"),
                rotate.replacing("endpoint_epoch", with: "0"),
                rotate.replacing("endpoint_epoch", with: "\(Int64.max)").replacingOccurrences(
                    of: "\"new_endpoint_epoch\":2", with: "\"new_endpoint_epoch\":\(Int64.min)"),
            ])

        let revokeDelegation = try LifecycleBody(
            try device.revokeDelegationBody(challenge: try gateway.challenge(), relay: relay, generation: 1))
        try Self.expectAllRejected(
            gateway, "/v1/delegations/revoke",
            revokeDelegation.commonDefects + revokeDelegation.formatDefects(now: now) + [
                revokeDelegation.replacing("generation", with: "0"),
                revokeDelegation.replacing("generation", with: "-1"),
            ])

        let revokeInstallation = try LifecycleBody(
            try device.revokeInstallationBody(challenge: try gateway.challenge(), epoch: 1))
        try Self.expectAllRejected(
            gateway, "/v1/installations/revoke",
            revokeInstallation.commonDefects + revokeInstallation.formatDefects(now: now) + [
                revokeInstallation.replacing("new_endpoint_epoch", with: "1"),
                revokeInstallation.replacing("endpoint_epoch", with: "0"),
            ])
        // Each valid body still works (the counter-ordered ones in signing order).
        #expect(try gateway.post("/v1/delegations", delegate.text).status == 201)
        #expect(try gateway.post("/v1/installations/endpoint", rotate.text).status == 200)
        #expect(try gateway.post("/v1/delegations/revoke", revokeDelegation.text).status == 200)
    }

    @Test("invalid UTF-8, a non-JSON content type and oversized bodies are refused and write nothing")
    func framingRejections() throws {
        let gateway = try LifecycleGateway()
        let device = try gateway.makeDevice()
        let now = gateway.clock.unixSeconds()
        let valid = try device.enrollBody(
            challenge: try gateway.challenge(), endpoint: device.endpoint, expiresAt: now + 600)
        let before = try gateway.rowCounts()

        var invalidUTF8 = Array(valid.utf8)
        let profileRange = try #require(valid.range(of: LifecycleGateway.profile))
        invalidUTF8[valid.utf8.distance(from: valid.utf8.startIndex, to: profileRange.lowerBound)] = 0xff
        let client = try HTTPTestClient(port: gateway.server.publicPort)
        try client.send(
            "POST /v1/installations HTTP/1.1\r\nHost: push.buzz.xyz\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(invalidUTF8.count)\r\n\r\n")
        try client.send(invalidUTF8)
        let utf8Response = try client.readResponse()
        #expect(utf8Response.status == 400 && utf8Response.bodyText == Self.invalidRequest)

        let textPlain = try gateway.post("/v1/installations", valid, contentType: "text/plain")
        #expect(textPlain.status == 400 && textPlain.bodyText == Self.invalidRequest)

        // 23896 bytes is the enrollment limit and 8192 every other route's.
        let padded = valid + String(repeating: " ", count: 23896 - valid.utf8.count)
        #expect(try gateway.post("/v1/installations", padded + " ").status == 413)
        for path in [
            "/v1/delegations", "/v1/installations/endpoint", "/v1/delegations/revoke", "/v1/installations/revoke",
        ] {
            let oversized = try gateway.post(path, "{" + String(repeating: " ", count: 8191) + "}")
            #expect(oversized.status == 413 && oversized.bodyText == Self.invalidRequest)
        }
        #expect(try gateway.rowCounts() == before)
        // At exactly the limit the body is read and accepted.
        #expect(try gateway.post("/v1/installations", padded).status == 201)
    }

    @Test(
        "unknown, revoked, expired, wrong epoch, stale generation, used, expired and forged challenge: one identical 404"
    )
    func noExistenceOracle() throws {
        let gateway = try LifecycleGateway()
        let expiring = try gateway.makeDevice()
        try gateway.enroll(expiring, expiresIn: 50)
        // Both the installation (50 s) and this challenge (300 s) expire.
        let oldChallenge = try gateway.challenge()
        gateway.clock.advance(seconds: 301)
        let now = gateway.clock.unixSeconds()

        let live = try gateway.makeDevice()
        try gateway.enroll(live)
        let relay = lifecycleRelayKey()
        #expect(try gateway.delegate(live, relay: relay, generation: 3).status == 201)
        let revoked = try gateway.makeDevice()
        try gateway.enroll(revoked)
        #expect(
            try gateway.post(
                "/v1/installations/revoke",
                try revoked.revokeInstallationBody(challenge: try gateway.challenge(), epoch: 1)
            ).status == 200)
        let usedChallenge = try gateway.challenge()
        let spending = try gateway.post(
            "/v1/delegations",
            try live.delegateBody(
                challenge: usedChallenge, epoch: 1, generation: 1, relay: lifecycleRelayKey(), notBefore: now,
                expiresAt: now + 60))
        #expect(spending.status == 201)

        func delegateBody(
            _ device: LifecycleDevice, challenge: LifecycleChallenge? = nil, epoch: Int64 = 1, generation: Int64 = 10,
            handle: String? = nil
        ) throws -> String {
            try device.delegateBody(
                challenge: try challenge ?? gateway.challenge(), epoch: epoch, generation: generation, relay: relay,
                notBefore: now, expiresAt: now + 30, handle: handle)
        }
        let forged = LifecycleChallenge(
            id: usedChallenge.id, challenge: Base64.encodeURLNoPadding((0..<32).map { _ in UInt8.random(in: 0...255) }))
        let cases: [(String, String)] = [
            ("unknown installation", try delegateBody(live, handle: try CanonicalUUID.version4().text)),
            ("revoked installation", try delegateBody(revoked)),
            ("expired installation", try delegateBody(expiring)),
            ("wrong epoch", try delegateBody(live, epoch: 2)),
            ("stale generation", try delegateBody(live, generation: 3)),
            ("used challenge", try delegateBody(live, challenge: usedChallenge)),
            ("expired challenge", try delegateBody(live, challenge: oldChallenge)),
            ("forged challenge", try delegateBody(live, challenge: forged)),
        ]
        let before = try gateway.rowCounts()
        let installations = try gateway.installationsText()
        var reference: HTTPTestResponse?
        for (name, body) in cases {
            let response = try gateway.post("/v1/delegations", body)
            #expect(response.status == 404, "\(name)")
            #expect(response.bodyText == #"{"error":"not_authorized"}"#, "\(name)")
            if let reference {
                #expect(response.body == reference.body, "\(name)")
                #expect(response.headers.elementsEqual(reference.headers) { $0 == $1 }, "\(name)")
            } else {
                reference = response
            }
        }
        #expect(try gateway.rowCounts() == before)
        #expect(try gateway.installationsText() == installations)
    }
}
