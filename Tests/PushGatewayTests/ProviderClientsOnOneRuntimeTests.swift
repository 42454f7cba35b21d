import PushCrypto
import PushHTTP2
import PushSystem
import PushTestSupport
import Synchronization
import Testing

@testable import PushAPNs
@testable import PushFCM

/// The APNs and FCM clients start no thread of their own: their connections and completions run
/// on the loops of the runtime they are given (docs/decisions/0870).
@Suite("provider clients on the application's one runtime", .tags(.process), .testBodyThreads)
struct ProviderClientsOnOneRuntimeTests {
    /// Where a completion ran.
    struct Place: Sendable, Equatable {
        let threadName: String
        let loopIndex: Int?
    }

    static func place(in runtime: Runtime) -> Place {
        Place(threadName: currentThreadName(), loopIndex: runtime.loops.loops.firstIndex { $0.inEventLoop })
    }

    @Test("an APNs and an FCM client built on one runtime complete on that runtime's event-loop threads")
    func clientsCompleteOnRuntimeLoops() throws {
        let owned = try TestRuntime(loopCount: 2, workerCount: 1)
        let runtime = owned.runtime
        // Nothing listens here: each send ends as a transport failure, reported on its loop.
        let closedPort = UInt16(try freeLoopbackPort())
        let configuration = HTTP2ClientConfiguration(requestTimeout: .seconds(10), connectTimeout: .seconds(5))
        let apns = APNsClient(configuration: configuration, on: runtime.loops.next())
        defer { apns.shutdown() }
        let fcm = FCMClient(configuration: configuration, on: runtime.loops.next(), workers: runtime.workers)
        defer { fcm.shutdown() }

        let places = Mutex<[String: Place]>([:])
        let done = CompletionLatch()
        let record: @Sendable (String) -> Void = { client in
            let place = Self.place(in: runtime)
            if places.withLock({
                $0[client] = place
                return $0.count == 2
            }) {
                done.open()
            }
        }
        let apnsProfile = APNsProfile(
            server: APNsServer(host: "127.0.0.1", port: closedPort), topic: "com.example.buzz",
            credential: .token(teamID: "TEAM123456", keyID: "KEY1234567") { _ in [UInt8](repeating: 1, count: 64) })
        apns.send(
            APNsNotification(deviceToken: [0x0a], requestID: nil, expiresAt: 1_900_000_000), profile: apnsProfile
        ) { result in
            #expect(result.outcome == .retry(retryAfterSeconds: nil))
            record("apns")
        }
        let account = ServiceAccount(
            clientEmail: "gateway@example.iam.gserviceaccount.com", privateKeyID: "key-1", projectID: "example",
            privateKey: try X509SigningKey.rsa(bits: 2048))
        let fcmProfile = FCMProfile(
            projectID: "example", account: account,
            hosts: .google(
                replacingServer: FCMServer(host: "127.0.0.1", port: closedPort),
                tokenEndpoint: FCMServer(host: "127.0.0.1", port: closedPort), tokenPath: nil,
                extraTrustAnchorsFile: nil))
        fcm.send(FCMMessage(registrationToken: "device-token", expiresAt: 1_900_000_000), profile: fcmProfile) {
            result in
            #expect(result.outcome == .retry(retryAfterSeconds: nil))
            record("fcm")
        }

        #expect(done.wait(until: .now().advanced(by: .seconds(60))))
        let seen = places.withLock { $0 }
        #expect(seen["apns"]?.threadName == "event-loop")
        #expect(seen["fcm"]?.threadName == "event-loop")
        #expect(seen["apns"]?.loopIndex == 0, "the first loop the runtime handed out")
        #expect(seen["fcm"]?.loopIndex == 1, "the second loop the runtime handed out")
    }
}
