import Foundation
import PushCrypto
import PushPostgres
import PushTestSupport
import Testing

@testable import GatewayCredentials
@testable import GatewayLifecycle
@testable import PushGateway

@Suite(
    "Lifecycle storage failures answer 503 and leave nothing behind; authority failures answer 404", .tags(.postgres),
    .testBodyThreads)
struct LifecycleStorageFailureTests {
    @Test("a data exception (SQLSTATE class 22) is 400 invalid_request, never a storage failure")
    func dataExceptionIsNeverUnavailable() throws {
        for sqlState in ["22008", "22003", "22P02", "22007"] {
            let failure = PostgresError(code: .server, sqlState: sqlState, message: "out of range")
            #expect(failure.isDataException && !failure.isUnavailable)
            #expect(LifecycleError.from(failure).code == .invalidRequest)
        }
        // A data exception raised by a real server (docs/decisions/0190).
        try TemporaryDatabase.with { database in
            let connection = try database.connect()
            let failure = try #require(throws: PostgresError.self) {
                try connection.query("SELECT to_timestamp($1::bigint)", [.int64(Int64.min)])
            }
            #expect(failure.sqlState == "22008")
            #expect(LifecycleError.from(failure).code == .invalidRequest)
        }
    }

    @Test("unique-key conflicts are 404; pool exhaustion, outages, timeouts, deadlocks and sealing failures are 503")
    func rejectionMapping() {
        #expect(
            LifecycleError.from(PostgresError(code: .server, sqlState: "23505", message: "duplicate")).code
                == .notAuthorized)
        for failure in [
            PostgresError(code: .poolExhausted, message: "no connection"),
            PostgresError(code: .unavailable, message: "down"),
            PostgresError(code: .server, sqlState: "55P03", message: "lock timeout"),
            PostgresError(code: .server, sqlState: "57014", message: "statement timeout"),
            PostgresError(code: .server, sqlState: "40P01", message: "deadlock"),
            PostgresError(code: .decoding, message: "row"),
        ] {
            #expect(LifecycleError.from(failure).code == .unavailable)
        }
        #expect(LifecycleError.from(CredentialsError(.sealingFailed)).code == .unavailable)
        #expect(LifecycleError.from(LifecycleError(.invalidAttestation)).code == .invalidAttestation)
        #expect(LifecycleError(.unavailable).response.body == Array(#"{"error":"temporarily_unavailable"}"#.utf8))
    }

    @Test("an installation row held locked past the lock timeout gives 503; the same request succeeds afterwards")
    func lockTimeout() throws {
        let gateway = try LifecycleGateway()
        let device = try gateway.makeDevice()
        let handle = try gateway.enroll(device)
        let now = gateway.clock.unixSeconds()
        let body = try device.delegateBody(
            challenge: try gateway.challenge(), epoch: 1, generation: 1, relay: lifecycleRelayKey(), notBefore: now,
            expiresAt: now + 60)
        let before = try gateway.rowCounts()

        let holder = try gateway.database.connect()
        try holder.query("BEGIN")
        try holder.query("SELECT 1 FROM installations WHERE handle = $1::uuid FOR UPDATE", [.text(handle)])
        let blocked = try gateway.post("/v1/delegations", body)
        #expect(blocked.status == 503 && blocked.bodyText == #"{"error":"temporarily_unavailable"}"#)
        try holder.query("ROLLBACK")
        // The challenge consumption was rolled back with everything else.
        #expect(try gateway.rowCounts() == before)
        #expect(try LifecycleFlowTests.counter(gateway, handle) == 0)
        #expect(try gateway.post("/v1/delegations", body).status == 201)
    }

    @Test("on rotate and both revocations, unknown, revoked and wrong-epoch installations give one identical 404")
    func noOracleOnOtherRoutes() throws {
        let gateway = try LifecycleGateway()
        let live = try gateway.makeDevice()
        try gateway.enroll(live)
        let revoked = try gateway.makeDevice()
        try gateway.enroll(revoked)
        #expect(
            try gateway.post(
                "/v1/installations/revoke",
                try revoked.revokeInstallationBody(challenge: try gateway.challenge(), epoch: 1)
            ).status == 200)
        let unknown = try gateway.makeDevice()
        unknown.handle = try CanonicalUUID.version4().text
        let relay = lifecycleRelayKey()
        #expect(try gateway.delegate(live, relay: relay, generation: 1).status == 201)

        let before = try gateway.rowCounts()
        let installations = try gateway.installationsText()
        let token = Hex.encode([0xab, 0xcd, 0xef])
        let cases: [(String, String)] = [
            (
                "/v1/installations/endpoint",
                try unknown.rotateBody(challenge: try gateway.challenge(), epoch: 1, endpoint: token)
            ),
            (
                "/v1/installations/endpoint",
                try revoked.rotateBody(challenge: try gateway.challenge(), epoch: 1, endpoint: token)
            ),
            (
                "/v1/installations/endpoint",
                try live.rotateBody(challenge: try gateway.challenge(), epoch: 2, endpoint: token)
            ),
            (
                "/v1/delegations/revoke",
                try unknown.revokeDelegationBody(challenge: try gateway.challenge(), relay: relay, generation: 1)
            ),
            (
                "/v1/delegations/revoke",
                try revoked.revokeDelegationBody(challenge: try gateway.challenge(), relay: relay, generation: 1)
            ),
            (
                "/v1/delegations/revoke",
                try live.revokeDelegationBody(challenge: try gateway.challenge(), relay: relay, generation: 2)
            ),
            (
                "/v1/delegations/revoke",
                try live.revokeDelegationBody(
                    challenge: try gateway.challenge(), relay: lifecycleRelayKey(), generation: 1)
            ),
            (
                "/v1/installations/revoke",
                try unknown.revokeInstallationBody(challenge: try gateway.challenge(), epoch: 1)
            ),
            // The tombstone is at epoch 2: a "retry" that claims epoch 2 → 3 is not this revocation.
            (
                "/v1/installations/revoke",
                try revoked.revokeInstallationBody(challenge: try gateway.challenge(), epoch: 2)
            ),
            ("/v1/installations/revoke", try live.revokeInstallationBody(challenge: try gateway.challenge(), epoch: 2)),
        ]
        var reference: HTTPTestResponse?
        for (index, (path, body)) in cases.enumerated() {
            let response = try gateway.post(path, body)
            #expect(response.status == 404 && response.bodyText == #"{"error":"not_authorized"}"#, "case \(index)")
            if let reference {
                #expect(response.headers.elementsEqual(reference.headers) { $0 == $1 }, "case \(index)")
            }
            reference = response
        }
        #expect(try gateway.rowCounts() == before)
        #expect(try gateway.installationsText() == installations)
    }

    @Test("the lifecycle routes allow only POST")
    func methods() throws {
        let gateway = try LifecycleGateway()
        for path in [
            "/v1/installations", "/v1/delegations", "/v1/installations/endpoint", "/v1/delegations/revoke",
            "/v1/installations/revoke",
        ] {
            let client = try HTTPTestClient(port: gateway.server.publicPort)
            try client.send("GET \(path) HTTP/1.1\r\nHost: push.buzz.xyz\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 405 && response.bodyText == #"{"error":"invalid_request"}"#)
        }
    }
}
