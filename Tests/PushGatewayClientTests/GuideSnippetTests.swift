import Foundation
import PushTestSupport
import Testing

/// docs/ios-integration.md's Swift must be the library's API: the blocks that need only Foundation
/// and the library are type-checked against the built module; the ones that need Apple's SDK
/// (UIKit, UserNotifications, the library's DeviceCheck and Keychain types) must name only what the
/// library declares or the SDK provides.
@Suite("docs/ios-integration.md's Swift uses the library as it is", .tags(.process), .testBodyThreads)
struct GuideSnippetTests {
    /// The contents of every ```swift block of the guide.
    static func blocks() throws -> [String] {
        let guide = try String(
            contentsOf: repository.appendingPathComponent("docs/ios-integration.md"), encoding: .utf8)
        return guide.matches(of: /```swift\n((?:.|\n)*?)\n```/).map { String($0.output.1) }
    }

    /// Library types that exist only where Apple's SDK does (`#if canImport`).
    static let appleOnlyLibraryTypes = ["DeviceCheckAppAttestService", "KeychainInstallationStateStore"]

    /// The app's own functions the guide's snippets call.
    static let appFunctions = """
        func publishGrant(_ grant: String, expiresAt: Int64, to relay: String) async throws {}
        func scheduleRetry(after seconds: TimeInterval) {}

        """

    static func needsAppleSDK(_ block: String) -> Bool {
        let imports = block.matches(of: /(?m)^import (\w+)$/).map { String($0.output.1) }
        return imports.contains { !["Foundation", "PushGatewayClient"].contains($0) }
            || appleOnlyLibraryTypes.contains { block.contains($0) }
    }

    /// Where the build put the library's module: next to the running test bundle.
    static func modulesDirectory() throws -> URL {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        for candidate in [bundle.deletingLastPathComponent(), repository.appendingPathComponent(".build/debug")] {
            let modules = candidate.appendingPathComponent("Modules")
            if FileManager.default.fileExists(
                atPath: modules.appendingPathComponent("PushGatewayClient.swiftmodule").path)
            {
                return modules
            }
        }
        throw TestSupportError("no PushGatewayClient.swiftmodule near \(bundle.path)")
    }

    @Test("the blocks that need only Foundation and PushGatewayClient type-check against the built library")
    func portableBlocksTypeCheck() throws {
        let portable = try Self.blocks().filter { !Self.needsAppleSDK($0) }
        #expect(portable.count >= 3)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ios-guide-\(UUID().uuidString).swift")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data((Self.appFunctions + portable.joined(separator: "\n\n")).utf8).write(to: file)
        let outcome = try ToolProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["swiftc", "-typecheck", "-swift-version", "6", "-I", try Self.modulesDirectory().path, file.path])
        #expect(outcome.status == 0, "\(outcome.errors)")
    }

    /// Every name the library's sources declare (public declarations and enum cases).
    static func libraryNames() throws -> Set<String> {
        let directory = repository.appendingPathComponent("Sources/PushGatewayClient")
        var names: Set<String> = []
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(
                of: /public (?:final )?(?:static )?(?:struct|class|enum|protocol|actor|typealias|func|var|let) (\w+)/)
            {
                names.insert(String(match.output.1))
            }
            for match in text.matches(of: /(?m)^\s*case (\w+)/) { names.insert(String(match.output.1)) }
        }
        return names
    }

    /// Types of Apple's SDK and the standard library that the Apple-only blocks use.
    static let platformTypes: Set<String> = [
        "Any", "Bool", "Bundle", "Data", "NSObject", "String", "Task", "UIApplication", "UIApplicationDelegate",
        "LaunchOptionsKey", "UNMutableNotificationContent", "UNNotificationContent", "UNNotificationRequest",
        "UNNotificationServiceExtension", "UIKit", "UserNotifications", "Foundation", "Void",
    ]

    /// The block without comments and string literals.
    static func code(_ block: String) -> String {
        block.replacing(/\/\/[^\n]*/, with: "").replacing(/"[^"\n]*"/, with: "\"\"")
    }

    @Test(
        "the blocks that need Apple's SDK name only types the library or the SDK declare, and library members that exist"
    )
    func appleBlocksNameTheLibrary() throws {
        let library = try Self.libraryNames()
        for name in ["PushGatewayClient", "Configuration", "register", "delegate", "endpoint"]
            + Self.appleOnlyLibraryTypes
        {
            #expect(library.contains(name), "the name scan misses \(name)")
        }
        let blocks = try Self.blocks().filter(Self.needsAppleSDK)
        #expect(blocks.count >= 3)
        for block in blocks.map(Self.code) {
            let declaredHere = Set(
                block.matches(of: /(?:class|struct|enum|func|let|var) (\w+)/).map { String($0.output.1) })
            let types = block.matches(of: /\b([A-Z]\w*)\b/).map { String($0.output.1) }
            let unknownTypes = types.filter {
                !library.contains($0) && !Self.platformTypes.contains($0) && !declaredHere.contains($0)
            }
            #expect(unknownTypes.isEmpty, "the guide names types neither the library nor the platform declares")
            let members = block.matches(of: /\b(?:PushGatewayClient|pushGateway|client)\.(\w+)/).map {
                String($0.output.1)
            }
            #expect(members.filter { !library.contains($0) }.isEmpty, "the guide calls members the library lacks")
        }
    }
}
