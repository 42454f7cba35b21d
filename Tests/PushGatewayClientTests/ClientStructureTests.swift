import Foundation
import PushTestSupport
import Testing

/// The library goes into apps: it may use the platform and nothing of the gateway's but PushWire,
/// which imports nothing (docs/decisions/0370).
@Suite("PushGatewayClient depends on Foundation and Apple frameworks only", .testBodyThreads)
struct ClientStructureTests {
    static let sources = repository.appendingPathComponent("Sources/PushGatewayClient")

    @Test("every import is Foundation, or an Apple framework (or FoundationNetworking) behind its own #if canImport")
    func imports() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.sources.path).filter {
            $0.hasSuffix(".swift")
        }
        #expect(files.count >= 10)
        for file in files {
            let lines = try String(contentsOf: Self.sources.appendingPathComponent(file), encoding: .utf8)
                .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            for (index, line) in lines.enumerated() {
                guard let match = line.wholeMatch(of: /(?:@\w+ )?(?:\w+ )?import (\w+)/) else { continue }
                let module = String(match.output.1)
                if module == "Foundation" || module == "PushWire" { continue }
                #expect(
                    ["FoundationNetworking", "CryptoKit", "Security", "DeviceCheck"].contains(module),
                    "\(file) imports \(module)")
                #expect(index > 0 && lines[index - 1] == "#if canImport(\(module))", "\(file): \(module) unguarded")
            }
        }
    }

    @Test("PushWire, the client's one target dependency, imports nothing")
    func wireImportsNothing() throws {
        let wire = repository.appendingPathComponent("Sources/PushWire")
        let files = try FileManager.default.contentsOfDirectory(atPath: wire.path).filter { $0.hasSuffix(".swift") }
        #expect(!files.isEmpty)
        for file in files {
            let text = try String(contentsOf: wire.appendingPathComponent(file), encoding: .utf8)
            #expect(text.firstMatch(of: /(?m)^(?:@\w+ )?(?:\w+ )?import \w+/) == nil, "\(file) imports a module")
        }
    }

    @Test("the manifest gives the library target PushWire alone and makes it a library product")
    func manifest() throws {
        let manifest = try String(contentsOf: repository.appendingPathComponent("Package.swift"), encoding: .utf8)
        #expect(manifest.contains(#".target(name: "PushGatewayClient", dependencies: ["PushWire"]),"#))
        #expect(manifest.contains(#".target(name: "PushWire"),"#))
        #expect(manifest.contains(#".library(name: "PushGatewayClient", targets: ["PushGatewayClient"])"#))
    }
}
