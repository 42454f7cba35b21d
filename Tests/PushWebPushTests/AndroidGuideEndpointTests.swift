import Foundation
import PushTestSupport
import Testing

@testable import PushWebPush

/// docs/android-integration.md's UnifiedPush section shows an endpoint string as the app enrolls it
/// (docs/protocol.md §8b): it must be one the gateway's parser accepts, cut where the guide says.
@Suite("docs/android-integration.md: the Web Push endpoint example parses as §8b's string", .testBodyThreads)
struct AndroidGuideEndpointTests {
    static let guide = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/android-integration.md")

    @Test("the guide's endpoint example parses, with the keys and URL at the positions the guide names")
    func exampleParses() throws {
        let text = try String(contentsOf: Self.guide, encoding: .utf8)
        let examples = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
            $0.firstMatch(of: /^[A-Za-z0-9_-]{87}\.[A-Za-z0-9_-]{22}\.https:\/\/\S+$/) != nil
        }
        try #require(examples.count == 1, "\(examples)")
        let example = examples[0]
        let endpoint = try #require(WebPushEndpoint(example), "the gateway refuses the guide's example")
        #expect(endpoint.url == String(example.dropFirst(111)))
        #expect(endpoint.host == "ntfy.example.org")
        #expect(WebPushEndpoint(example + "#fragment") == nil)
        #expect(WebPushEndpoint(example.replacingOccurrences(of: "https://", with: "http://")) == nil)
    }
}
