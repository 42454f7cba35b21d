import Foundation
import Testing

/// The library goes into apps: it may use the platform and nothing of the gateway's (docs/decisions/0370).
@Suite("PushGatewayClient depends on Foundation and Apple frameworks only")
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
                if module == "Foundation" { continue }
                #expect(
                    ["FoundationNetworking", "CryptoKit", "Security", "DeviceCheck"].contains(module),
                    "\(file) imports \(module)")
                #expect(index > 0 && lines[index - 1] == "#if canImport(\(module))", "\(file): \(module) unguarded")
            }
        }
    }

    @Test("the manifest gives the library target no dependency and makes it a library product")
    func manifest() throws {
        let manifest = try String(contentsOf: repository.appendingPathComponent("Package.swift"), encoding: .utf8)
        #expect(manifest.contains(#".target(name: "PushGatewayClient"),"#))
        #expect(manifest.contains(#".library(name: "PushGatewayClient", targets: ["PushGatewayClient"])"#))
    }
}
