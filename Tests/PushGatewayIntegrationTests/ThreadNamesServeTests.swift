import Foundation
import PushTestSupport
import Testing

@Suite("serve's threads carry the names docs/architecture.md lists", .tags(.process), .testBodyThreads)
struct ThreadNamesServeTests {
    /// The thread names the "Threads" section of docs/architecture.md lists (the backticked words
    /// of its naming paragraph), and the main thread's, the executable's name.
    static func documentedNames() throws -> Set<String> {
        let repository = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: repository.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        let start = try #require(text.range(of: "Each thread is named"))
        let end = try #require(text.range(of: "Who starts what:", range: start.upperBound..<text.endIndex))
        let paragraph = text[start.upperBound..<end.lowerBound]
        let quoted = paragraph.split(separator: "`").enumerated().filter { $0.offset % 2 == 1 }.map {
            String($0.element)
        }
        // Code spans that are not names (the call that sets them, the /proc path) are skipped.
        let names = quoted.filter { !$0.contains("(") && !$0.contains("/") && !$0.contains(" ") }
        return Set(names + ["push-gateway"])
    }

    /// The names of `serve`'s threads once it answers readiness and `started` holds, for
    /// `environment` without a database.
    static func threadNames(
        _ environment: ConfigurationTestEnvironment, once started: () -> Bool = { true }
    ) throws -> [String] {
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
        #expect(eventually(within: 30) { started() }, "serve did not start what the test waits for")
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(gateway.pid)/task")
        return tasks.compactMap { task in
            (try? String(contentsOfFile: "/proc/\(gateway.pid)/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .newlines)
        }
    }

    /// Loops and workers the tests ask `serve` for, so that the counts below are the configured ones.
    static let loops = 3
    static let workers = 5

    /// The environment with the runtime's size set.
    static func sized(_ environment: ConfigurationTestEnvironment) -> ConfigurationTestEnvironment {
        environment.with("PUSH_GATEWAY_EVENT_LOOPS", "\(loops)").with("PUSH_GATEWAY_WORKERS", "\(workers)")
    }

    /// How many threads carry each name.
    static func counted(_ names: [String]) -> [String: Int] {
        names.reduce(into: [:]) { $0[$1, default: 0] += 1 }
    }

    @Test(
        "a running serve is its main thread, the runtime's loops and its workers and nothing else, each named as docs/architecture.md lists"
    )
    func threadNamesMatchTheDocs() throws {
        let names = try Self.threadNames(Self.sized(try ConfigurationTestEnvironment()))
        // docs/decisions/0870: the listeners, the APNs client of the ios profile, the reaper and the
        // certificate warnings all run on the one runtime: `PUSH_GATEWAY_EVENT_LOOPS` loops and
        // `PUSH_GATEWAY_WORKERS` + 2 workers.
        #expect(
            Self.counted(names) == ["push-gateway": 1, "event-loop": Self.loops, "worker": Self.workers + 2],
            "\(names)")
        let documented = try Self.documentedNames()
        let undocumented = Set(names).subtracting(documented)
        #expect(
            undocumented.isEmpty,
            "threads named \(undocumented.sorted()); docs/architecture.md lists \(documented.sorted())")
    }

    @Test(
        "serve with an android profile fetches the Key Attestation status list at start on the runtime, with no thread of its own for it or for FCM"
    )
    func statusListFetcherStartsWithServe() throws {
        let server = try StatusListTestServer(body: #"{"entries":{}}"#)
        let environment = try ConfigurationTestEnvironment()
            .withAndroidProfile(authority: try SyntheticKeyAttestationAuthority(), statusList: nil)
            .with("PUSH_GATEWAY_ANDROID_ATTESTATION_STATUS_URL", server.url)
            .with("PUSH_GATEWAY_FCM_CA_FILE", try StatusListTestServer.caFile)
        let names = try Self.threadNames(Self.sized(environment)) { server.requestCount == 1 }
        // libcurl's threaded resolver may show a short-lived thread under its starter's name, `worker`.
        let counts = Self.counted(names)
        #expect(
            counts["push-gateway"] == 1 && counts["event-loop"] == Self.loops
                && (Self.workers + 2...Self.workers + 3).contains(counts["worker"] ?? 0) && counts.count == 3,
            "\(names)")
    }
}
