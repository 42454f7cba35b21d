import Foundation
import PushTestSupport
import Testing

/// Every executable the package builds answers `--help` as `push-gateway --help` does (docs/protocol.md
/// §12): its usage on standard output, exit 0, so that a newcomer can ask any of them what it takes.
@Suite("Every executable of Package.swift prints its usage for --help", .tags(.process), .testBodyThreads)
struct ExecutableUsageTests {
    /// The executables Package.swift declares: its executable products and executable targets (SwiftPM
    /// makes a product of each).
    static func executables() throws -> [String] {
        let manifest = try DocsTests.read("Package.swift")
        let declared = manifest.matches(of: /\.(?:executable|executableTarget)\(\s*name: "([^"]+)"/)
            .map { String($0.output.1) }
        return Array(Set(declared)).sorted()
    }

    /// What a usage text must not do: send the reader into the source tree for what the flags mean.
    static func pointsIntoSources(_ usage: String) -> Bool {
        usage.contains("Sources/") || usage.contains(".swift")
            || usage.firstMatch(of: /\b[A-Z][A-Za-z0-9]+\.[a-z][A-Za-z0-9]+\b/) != nil
    }

    @Test("Package.swift declares the mocks, the benches, the demo, push-fuzz and push-gateway")
    func executablesListed() throws {
        let names = try Self.executables()
        for name in [
            "push-gateway", "apns-mock", "fcm-mock", "webpush-mock", "push-gateway-demo", "apns-bench", "fcm-bench",
            "delivery-bench", "delivery-floor", "marmot-bench", "push-fuzz",
        ] {
            #expect(names.contains(name), "Package.swift lists no executable \(name): \(names)")
        }
    }

    @Test("each built executable prints a usage naming itself on standard output for --help and exits 0")
    func helpOnEveryExecutable() throws {
        for name in try Self.executables() {
            let path = MockAPNsProcess.path(of: name)
            try #require(FileManager.default.isExecutableFile(atPath: path), "\(name) is not built at \(path)")
            let outcome = try ToolProcess.run(URL(fileURLWithPath: path), ["--help"])
            #expect(outcome.status == 0, "\(name) --help exited \(outcome.status): \(outcome.errors)")
            #expect(outcome.outputText.hasPrefix("usage: \(name) "), "\(name) --help printed: \(outcome.outputText)")
            #expect(outcome.errors.isEmpty, "\(name) --help wrote to standard error: \(outcome.errors)")
            #expect(!Self.pointsIntoSources(outcome.outputText), "\(name)'s usage points into the sources")
        }
    }

    @Test("the source-pointer check catches what apns-mock's usage used to say")
    func sourcePointerCheck() {
        #expect(Self.pointsIntoSources("--script FILE   answers to give (see APNsMockScript.parse)"))
        #expect(Self.pointsIntoSources("the format is in Sources/APNsMock/APNsMockScript.swift"))
        #expect(!Self.pointsIntoSources("--record FILE   append one JSON line per request; e.g. xyz.buzz.app"))
    }
}
