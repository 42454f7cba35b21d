import Foundation
import PushHTTP
import PushSystem
import PushTestSupport
import Testing

@testable import GatewayConfiguration
@testable import PushGateway
@testable import PushGatewayCommands

/// The real `push-gateway` binary run to completion, with what it printed.
enum GatewayBinary {
    struct Outcome {
        let exitCode: Int32
        let standardOutput: String
        let standardError: String
    }

    /// Runs `push-gateway arguments…` with exactly `environment`; its output is small, so it is
    /// read once the process has exited.
    /// A configuration `serve` starts with (no database: readiness fails, the listeners run) on
    /// free loopback ports, or `publicPort`.
    static func serveEnvironment(publicPort: Int? = nil) throws -> ConfigurationTestEnvironment {
        try ConfigurationTestEnvironment()
            .with("DATABASE_URL", "postgresql://nobody@127.0.0.1:1/none")
            .with("PUSH_GATEWAY_LISTEN", "127.0.0.1:\(try publicPort ?? freeLoopbackPort())")
            .with("PUSH_GATEWAY_HEALTH_LISTEN", "127.0.0.1:\(try freeLoopbackPort())")
    }

    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Outcome {
        let outcome = try ToolProcess.run(try ReaperServeTests.executable(), arguments, environment: environment)
        return Outcome(exitCode: outcome.status, standardOutput: outcome.outputText, standardError: outcome.errors)
    }
}

@Suite("Command-line conventions (docs/protocol.md §12)", .tags(.process), .testBodyThreads)
struct CommandLineConventionsTests {
    static let commands = [
        "serve", "migrate", "check-config", "keygen", "verify-attestation", "verify-assertion",
        "verify-android-attestation", "deliver", "send-test-push", "verify-marmot-trigger",
    ]

    @Test("--help, -h and help print the usage to standard output and exit 0")
    func help() throws {
        for flag in ["--help", "-h", "help"] {
            let outcome = try GatewayBinary.run([flag])
            #expect(outcome.exitCode == 0, "\(flag)")
            #expect(outcome.standardOutput == CommandLineTool.usage, "\(flag)")
            #expect(outcome.standardError == "", "\(flag)")
        }
    }

    @Test("--version and version print push-gateway and the build's version, exit 0")
    func version() throws {
        for flag in ["--version", "version"] {
            let outcome = try GatewayBinary.run([flag])
            #expect(outcome.exitCode == 0)
            #expect(outcome.standardOutput == "push-gateway \(GatewayVersion.current)\n")
        }
        // A build from a checkout that was not stamped from a release tag says so.
        #expect(GatewayVersion.current == (GatewayVersion.stamped ?? "development"))
    }

    @Test("an unknown command is named before the usage, on standard error, exit 2")
    func unknownCommand() throws {
        let outcome = try GatewayBinary.run(["bogus"])
        #expect(outcome.exitCode == 2)
        #expect(outcome.standardOutput == "")
        #expect(outcome.standardError == "push-gateway: unknown command 'bogus'\n" + CommandLineTool.usage)
        let none = try GatewayBinary.run([])
        #expect(none.exitCode == 2 && none.standardError == CommandLineTool.usage)
    }

    @Test("<command> --help prints that command's usage to standard output and exits 0, running nothing")
    func commandHelp() throws {
        for command in Self.commands {
            for flag in ["--help", "-h"] {
                let outcome = try GatewayBinary.run([command, flag])
                #expect(outcome.exitCode == 0, "\(command) \(flag)")
                #expect(outcome.standardOutput.hasPrefix("usage: push-gateway \(command)"), "\(command) \(flag)")
                #expect(outcome.standardError == "", "\(command) \(flag)")
            }
        }
    }

    @Test("usage errors of every subcommand start with push-gateway <command>:")
    func oneErrorStyle() throws {
        for command in Self.commands {
            let outcome = try GatewayBinary.run([command, "--no-such-flag", "x"])
            #expect(outcome.exitCode == 2, "\(command)")
            #expect(
                outcome.standardError.hasPrefix("push-gateway \(command): "), "\(command): \(outcome.standardError)")
        }
        let checked = CheckConfigCommand.execute(arguments: [], environment: [:])
        #expect(checked.exitCode == 1)
        let lines = checked.standardError.split(separator: "\n")
        #expect(!lines.isEmpty && lines.allSatisfy { $0.hasPrefix("push-gateway check-config: ") })
    }

    @Test("deliver names the argument and the system's reason when the key file cannot be read")
    func deliverKeyFileReason() throws {
        let outcome = try GatewayBinary.run([
            "deliver", "--url", "http://127.0.0.1:1/v1/deliveries/apns", "--relay-key-file", "/nonexistent/relay.key",
            "--grant", "g",
        ])
        #expect(outcome.exitCode == 2)
        #expect(
            outcome.standardError
                == "push-gateway deliver: --relay-key-file cannot be read: No such file or directory\n")
        let unknown = try GatewayBinary.run(["deliver", "--gran", "g"])
        #expect(unknown.standardError.hasPrefix("push-gateway deliver: unknown argument '--gran'\n"))
    }

    @Test("check-config warns about each unknown PUSH_GATEWAY_ variable by name, ignoring Kubernetes service variables")
    func unknownVariables() throws {
        let environment = try ConfigurationTestEnvironment()
            .with("PUSH_GATEWAY_LOGLEVEL", "debug")
            .with("PUSH_GATEWAY_REAPER_INTERVAL", "5")
            .with("PUSH_GATEWAY_SERVICE_HOST", "10.0.0.1")
            .with("PUSH_GATEWAY_SERVICE_PORT", "8080")
            .with("PUSH_GATEWAY_SERVICE_PORT_HTTP", "8080")
            .with("PUSH_GATEWAY_PORT", "tcp://10.0.0.1:8080")
            .with("PUSH_GATEWAY_PORT_8080_TCP_ADDR", "10.0.0.1")
            .with("PUSH_GATEWAY_METRICS_PORT_8081_TCP", "tcp://10.0.0.1:8081")
            .with("PUSH_GATEWAY_DB_POOL_SIZE", "8")
            .with("PUSH_GATEWAY_WORKERS", "8")
            .with("PUSH_GATEWAY_MAX_CONNECTIONS_PER_PEER", "64")
            .with("PUSH_GATEWAY_APNS_PROXY", "http://127.0.0.1:3128")
        let checked = CheckConfigCommand.execute(arguments: [], environment: environment.variables)
        #expect(
            checked.standardError
                == "push-gateway check-config: warning: PUSH_GATEWAY_LOGLEVEL: unknown variable, ignored (check its "
                + "spelling)\npush-gateway check-config: warning: PUSH_GATEWAY_REAPER_INTERVAL: unknown variable, "
                + "ignored (check its spelling)\n")
        #expect(!checked.standardError.contains("debug"), "a warning names the variable, never its value")
        // Also when the configuration is otherwise wrong: a misspelt name is often the cause.
        let broken = CheckConfigCommand.execute(
            arguments: [], environment: ["PUSH_GATEWAY_LOGLEVEL": "debug"])
        #expect(broken.exitCode == 1)
        #expect(broken.standardError.contains("push-gateway check-config: warning: PUSH_GATEWAY_LOGLEVEL: unknown"))
    }

    @Test("serve logs a warning naming each unknown PUSH_GATEWAY_ variable at start")
    func serveWarnsAboutUnknownVariables() throws {
        let configuration = try #require(ConfigurationTestEnvironment().configuration())
        let warnings = StartupChecks.warnings(
            configuration, environment: ["PUSH_GATEWAY_LOGLEVEL": "debug", "PUSH_GATEWAY_SERVICE_HOST": "10.0.0.1"])
        #expect(warnings == ["PUSH_GATEWAY_LOGLEVEL: unknown variable, ignored (check its spelling)"])
    }

    @Test("a listener that cannot bind is named with its variable and address, and serve exits 1")
    func bindErrorNamesTheListener() throws {
        let taken = try TCPListener(listening: "127.0.0.1:0")
        defer { taken.close() }
        let environment = try GatewayBinary.serveEnvironment(publicPort: taken.port)
        let outcome = try GatewayBinary.run(["serve"], environment: environment.variables)
        #expect(outcome.exitCode == 1)
        #expect(
            outcome.standardError.contains(
                "push-gateway serve: cannot listen on the public listener 127.0.0.1:\(taken.port) "
                    + "(PUSH_GATEWAY_LISTEN): bind failed: Address already in use"), "\(outcome.standardError)")
    }
}

@Suite("The version has one source: GatewayVersion, stamped from a release tag", .tags(.process), .testBodyThreads)
struct VersionStampTests {
    static let script = PrometheusServer.repository.appendingPathComponent("scripts/stamp-version").path
    static let source = PrometheusServer.repository.appendingPathComponent(
        "Sources/GatewayConfiguration/GatewayVersion.swift")

    /// Runs scripts/stamp-version on a copy of GatewayVersion.swift; returns its exit status and the copy.
    static func stamp(_ tag: String) throws -> (exitCode: Int32, file: String) {
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("GatewayVersion-\(UUID()).swift")
        defer { try? FileManager.default.removeItem(at: copy) }
        try FileManager.default.copyItem(at: source, to: copy)
        let outcome = try ToolProcess.run(URL(fileURLWithPath: script), [tag, copy.path])
        return (outcome.status, try String(contentsOf: copy, encoding: .utf8))
    }

    @Test("a release tag is stamped into the one constant; anything else is refused and leaves it alone")
    func stampsTheTag() throws {
        let committed = try String(contentsOf: Self.source, encoding: .utf8)
        #expect(
            committed.contains("    static let stamped: String? = nil\n"), "the repository holds a development build")
        let release = try Self.stamp("v1.4.0")
        #expect(release.exitCode == 0)
        #expect(release.file == committed.replacing("= nil\n", with: "= \"v1.4.0\"\n"))
        let hostile = try Self.stamp(#"v1" + evil + ""#)
        #expect(hostile.exitCode == 2)
        #expect(hostile.file == committed)
    }
}

@Suite("serve's start: the version and the warnings in its log", .tags(.process), .testBodyThreads)
struct ServeStartLogTests {
    @Test("serve logs each unknown variable and a near certificate expiry, then listening with the version")
    func startLines() throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("serve-start-\(UUID()).log")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: log) }
        let environment = try GatewayBinary.serveEnvironment()
            .with("PUSH_GATEWAY_LOGLEVEL", "debug")
            .with("PUSH_GATEWAY_SERVICE_PORT", "8080")
            .withCertificateProfile(notAfter: SystemWallClock().unixSeconds() + 3 * 86_400)
        let process = Process()
        process.executableURL = try ReaperServeTests.executable()
        process.arguments = ["serve"]
        process.environment = environment.variables
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        func text() -> String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
        try #require(
            eventually(within: 15) { text().contains(#""msg":"listening""#) }, "serve did not start: \(text())")
        let lines = text().split(separator: "\n")
        #expect(
            lines.contains { $0.contains(#""msg":"listening","version":"\#(GatewayVersion.current)""#) },
            "the start line names the version")
        let unknown = lines.filter { $0.contains("unknown variable") }
        #expect(unknown.count == 1)
        #expect(unknown.first?.contains(#""level":"warning""#) == true)
        #expect(unknown.first?.contains("PUSH_GATEWAY_LOGLEVEL") == true)
        #expect(
            lines.contains { $0.contains(#""level":"warning""#) && $0.contains("profile buzz-ios-cert expires in") })
    }
}
