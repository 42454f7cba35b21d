import Foundation
import PushDelivery
import PushTestSupport
import Testing

@testable import GatewayConfiguration

/// Two ways a page misleads a newcomer that no name check catches: calling itself unfinished, and
/// denying a capability the build has ("this build enrolls `ios` profiles only" after Android
/// enrollment landed). Each checker is a pure function over text, shown to catch a planted sample.
enum DocsWording {
    /// Phrases by which a page says it is unfinished. Matched case-insensitively, except the
    /// upper-case markers, which are words of their own.
    static let unfinishedPhrases = [
        "written so far", "so far:", "exists so far", "to be written", "not written yet", "not yet written",
        "unfinished", "work in progress", "coming soon", "not finished yet", "still to be documented",
    ]
    static let unfinishedMarkers = ["TODO", "TBD", "FIXME"]

    /// Every unfinished phrase or marker in `text`, each as whole words (`unfinishedPhrases`, a name
    /// in a sentence about this check, is not the word).
    static func unfinishedPhrases(in text: String) -> [String] {
        let lowered = text.lowercased()
        var found = unfinishedPhrases.filter { phrase in
            let ending = phrase.last.map { $0.isLetter || $0.isNumber } == true ? "\\b" : ""
            return lowered.contains(try! Regex("\\b" + NSRegularExpression.escapedPattern(for: phrase) + ending))
        }
        for marker in unfinishedMarkers where text.contains(try! Regex("\\b\(marker)\\b")) {
            found.append(marker)
        }
        return found
    }

    /// The platforms, push services and modes the build has, as the words a page names them by:
    /// `AppProfile.Platform`'s raw values, the registered providers' services, and `marmot` while
    /// the configuration reads the Marmot variables.
    static func capabilities() -> [String] {
        AppProfile.Platform.allCases.map(\.rawValue) + PushProviderModules.standard.all.map(\.service.rawValue)
            + (GatewayConfiguration.marmotVariables.isEmpty ? [] : ["marmot"])
    }

    /// Sentences of a Markdown or YAML text: split at sentence ends, blank lines and table cells.
    static func sentences(_ text: String) -> [String] {
        text.split(separator: /[.!?]\s+|\n\s*\n|\|/).map {
            $0.replacingOccurrences(of: "\n", with: " ")
        }
    }

    /// Sentences that deny `capabilities` (any of their words, as a whole word, any case, outside
    /// paths such as `docs/decisions/0390-marmot-…` or `/v1/deliveries/apns`): "this build … only",
    /// "not … yet", "not built", "not supported", "not implemented".
    static func capabilityDenials(in text: String, capabilities: [String]) -> [String] {
        let denial =
            /(?i)\bthis build\b.*\bonly\b|\bonly\b.*\bthis build\b|\b(?:not|n't)\b.*\byet\b|\bnot (?:built|supported|implemented)\b/
        return sentences(text).filter { sentence in
            guard sentence.contains(denial) else { return false }
            let words = sentence.replacing(/\S*\/\S*/, with: " ").lowercased()
            return capabilities.contains { words.contains(try! Regex("\\b\($0)\\b")) }
        }
    }
}

@Suite("No page calls itself unfinished or denies what the build does", .testBodyThreads)
struct DocsWordingTests {
    @Test("the unfinished-page checker catches planted phrases and passes ordinary text")
    func unfinishedCheckerCatchesPlants() {
        #expect(DocsWording.unfinishedPhrases(in: "The mode (so far: how a client encrypts a token).") == ["so far:"])
        #expect(DocsWording.unfinishedPhrases(in: "What is written so far covers iOS.") == ["written so far"])
        #expect(DocsWording.unfinishedPhrases(in: "This section is to be written.") == ["to be written"])
        #expect(DocsWording.unfinishedPhrases(in: "Rotation: TODO") == ["TODO"])
        #expect(DocsWording.unfinishedPhrases(in: "An Unfinished page.") == ["unfinished"])
        #expect(DocsWording.unfinishedPhrases(in: "The relay has not finished the subscription.").isEmpty)
        #expect(DocsWording.unfinishedPhrases(in: "todos and mastodon are words, not markers.").isEmpty)
        #expect(DocsWording.unfinishedPhrases(in: "`DocsWording.unfinishedPhrases` holds the list.").isEmpty)
    }

    @Test("no document of the documentation set calls itself unfinished")
    func noUnfinishedPage() throws {
        let documents = try DocsConsistencyTests.documents()
        #expect(documents.count > 20)
        for document in documents {
            let found = DocsWording.unfinishedPhrases(in: document.text)
            #expect(found.isEmpty, "\(document.path) calls itself unfinished: \(found)")
        }
    }

    @Test("the capability-denial checker catches the stale sentences this build outgrew, and passes others")
    func denialCheckerCatchesPlants() {
        let capabilities = DocsWording.capabilities()
        #expect(Set(["ios", "android", "apns", "fcm", "marmot"]).isSubset(of: Set(capabilities)))
        for stale in [
            "Both paths deliver the same grants. This build enrolls `ios` profiles only, so both are equal.",
            "`android` (Key Attestation and FCM; this build enrolls Android devices but does not deliver to FCM yet)",
            "Both behave identically for `ios` grants, the only kind this build enrolls.",
            "The Marmot mode is not built yet.",
        ] {
            #expect(DocsWording.capabilityDenials(in: stale, capabilities: capabilities).count == 1, "\(stale)")
        }
        for fine in [
            "Challenges issued but not yet used expire after 300 s.",
            "The `/apns` path takes grants of `ios` profiles only.",
            "Some libraries do not implement the extended length yet.",
            "It needs NIP-44's extended length, which some libraries do not implement yet (see "
                + "docs/decisions/0390-marmot-push-building-blocks.md).",
        ] {
            #expect(DocsWording.capabilityDenials(in: fine, capabilities: capabilities).isEmpty, "\(fine)")
        }
    }

    /// Pages whose sentences are not judged: docs/status.md, whose one job is to say what is not
    /// built (the consistency test checks its names against the code), and the decision records,
    /// each a record of what held when it was taken.
    static func isJudged(_ path: String) -> Bool {
        path != "docs/status.md" && !path.hasPrefix("docs/decisions/")
    }

    @Test("no document denies a platform, push service or mode the build has")
    func noDenialOfBuiltCapabilities() throws {
        let capabilities = DocsWording.capabilities()
        for document in try DocsConsistencyTests.documents() where Self.isJudged(document.path) {
            for sentence in DocsWording.capabilityDenials(in: document.text, capabilities: capabilities) {
                Issue.record("\(document.path) denies what the build does: \(sentence)")
            }
        }
    }
}
