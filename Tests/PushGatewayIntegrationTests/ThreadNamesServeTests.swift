import Foundation
import PushTestSupport
import Testing

@Suite("serve's threads carry the names docs/architecture.md lists", .tags(.process))
struct ThreadNamesServeTests {
    /// The thread names the "Threads" section of docs/architecture.md lists (the backticked words
    /// of its naming paragraph), and the main thread's, the executable's name.
    static func documentedNames() throws -> Set<String> {
        let repository = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: repository.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        let start = try #require(text.range(of: "Each is named"))
        let end = try #require(text.range(of: "Who starts what:", range: start.upperBound..<text.endIndex))
        let paragraph = text[start.upperBound..<end.lowerBound]
        let quoted = paragraph.split(separator: "`").enumerated().filter { $0.offset % 2 == 1 }.map {
            String($0.element)
        }
        // Code spans that are not names (the call that sets them, the /proc path) are skipped.
        let names = quoted.filter { !$0.contains("(") && !$0.contains("/") && !$0.contains(" ") }
        return Set(names + ["push-gateway"])
    }

    /// The names of `serve`'s threads once it answers readiness, for `environment` without a database.
    static func threadNames(_ environment: ConfigurationTestEnvironment) throws -> [String] {
        let gateway = try ServeProcess(
            environment: environment.with("DATABASE_URL", "postgresql://nobody@127.0.0.1:1/none")
                .with("PUSH_GATEWAY_LOG_LEVEL", "error").variables)
        defer { _ = gateway.stop() }
        // The listeners accept as soon as they are bound; an answer from the private listener's
        // readiness route (run on a worker) proves its loop and a worker have started and named
        // themselves, and the services before the listeners have started. A thread not yet named
        // still shows its starter's (listed) name.
        let client = try HTTPTestClient(port: gateway.privatePort, timeout: .seconds(30))
        try client.send("GET /_readiness HTTP/1.1\r\nHost: t\r\n\r\n")
        _ = try client.readResponse()
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(gateway.pid)/task")
        return tasks.compactMap { task in
            (try? String(contentsOfFile: "/proc/\(gateway.pid)/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .newlines)
        }
    }

    @Test("every thread of a running serve has a name the thread section of docs/architecture.md lists")
    func threadNamesMatchTheDocs() throws {
        let names = try Self.threadNames(try ConfigurationTestEnvironment())
        let documented = try Self.documentedNames()
        #expect(names.contains("http-loop") && names.contains("http-worker"), "\(names)")
        // Every starter in serve names its threads; the APNs client of the ios profile runs on the
        // runtime's loops and starts none of its own (docs/decisions/0870).
        #expect(!names.contains("apns-client") && !names.contains("push-thread"), "\(names)")
        let undocumented = Set(names).subtracting(documented)
        #expect(
            undocumented.isEmpty,
            "threads named \(undocumented.sorted()); docs/architecture.md lists \(documented.sorted())")
    }

    @Test("serve starts the Key Attestation status-list fetcher with its other services, on the thread the docs name")
    func statusListFetcherStartsWithServe() throws {
        let environment = try ConfigurationTestEnvironment()
            .withAndroidProfile(authority: try SyntheticKeyAttestationAuthority(), statusList: nil)
            .with("PUSH_GATEWAY_ANDROID_ATTESTATION_STATUS_URL", "https://127.0.0.1:1/status")
        let names = try Self.threadNames(environment)
        #expect(names.contains("status-list"), "\(names)")
        // The FCM client of the android profile runs on the runtime's loops and workers (docs/decisions/0870).
        #expect(!names.contains("fcm-client") && !names.contains("fcm-renewal"), "\(names)")
        let undocumented = Set(names).subtracting(try Self.documentedNames())
        #expect(undocumented.isEmpty, "threads named \(undocumented.sorted())")
    }
}
