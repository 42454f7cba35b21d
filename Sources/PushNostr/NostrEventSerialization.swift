import PushCrypto

/// The NIP-01 event id serialization.
///
/// NIP-01 fixes the escaping so every implementation hashes the same bytes: no whitespace; `\n`, `"`,
/// `\`, `\r`, `\t`, backspace and form feed as their two-character escapes; everything else verbatim,
/// so `/` is not escaped (Foundation's JSONEncoder does escape it) and non-ASCII stays raw UTF-8. The
/// remaining C0 controls would be invalid JSON verbatim; they are written `\u00xx` with lowercase hex,
/// as JSON.stringify, serde_json and go-nostr do (docs/decisions/0041-nip01-control-characters.md).
public enum NostrEventSerialization {
    /// UTF-8 bytes of `[0,"<pubkey hex>",<created_at>,<kind>,<tags>,"<content>"]`.
    public static func idPreimage(
        publicKey: XOnlyPublicKey, createdAt: Int64, kind: Int64, tags: [[String]], content: String
    ) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(100 + content.utf8.count)
        output.append(contentsOf: #"[0,""#.utf8)
        output.append(contentsOf: publicKey.hex.utf8)
        output.append(contentsOf: #"","#.utf8)
        output.append(contentsOf: String(createdAt).utf8)
        output.append(UInt8(ascii: ","))
        output.append(contentsOf: String(kind).utf8)
        output.append(UInt8(ascii: ","))
        appendTags(tags, to: &output)
        output.append(UInt8(ascii: ","))
        appendString(content, to: &output)
        output.append(UInt8(ascii: "]"))
        return output
    }

    /// Compact JSON in NIP-01 member order from `{"id"` through the content, unclosed: an event
    /// appends its `sig` and the closing brace, a rumor only the brace.
    static func unsignedMembersJSON(
        id: [UInt8], publicKey: XOnlyPublicKey, createdAt: Int64, kind: Int64, tags: [[String]], content: String
    ) -> [UInt8] {
        var output: [UInt8] = []
        output.append(contentsOf: #"{"id":""#.utf8)
        output.append(contentsOf: Hex.encode(id).utf8)
        output.append(contentsOf: #"","pubkey":""#.utf8)
        output.append(contentsOf: publicKey.hex.utf8)
        output.append(contentsOf: #"","created_at":"#.utf8)
        output.append(contentsOf: String(createdAt).utf8)
        output.append(contentsOf: #","kind":"#.utf8)
        output.append(contentsOf: String(kind).utf8)
        output.append(contentsOf: #","tags":"#.utf8)
        appendTags(tags, to: &output)
        output.append(contentsOf: #","content":"#.utf8)
        appendString(content, to: &output)
        return output
    }

    static func appendTags(_ tags: [[String]], to output: inout [UInt8]) {
        output.append(UInt8(ascii: "["))
        for (tagIndex, tag) in tags.enumerated() {
            if tagIndex > 0 { output.append(UInt8(ascii: ",")) }
            output.append(UInt8(ascii: "["))
            for (elementIndex, element) in tag.enumerated() {
                if elementIndex > 0 { output.append(UInt8(ascii: ",")) }
                appendString(element, to: &output)
            }
            output.append(UInt8(ascii: "]"))
        }
        output.append(UInt8(ascii: "]"))
    }

    static func appendString(_ string: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        // Native strings are read in place; others are copied once.
        if string.utf8.withContiguousStorageIfAvailable({ appendEscaped($0, to: &output) }) == nil {
            Array(string.utf8).withUnsafeBufferPointer { appendEscaped($0, to: &output) }
        }
        output.append(UInt8(ascii: "\""))
    }

    /// Runs of bytes that need no escape are appended whole.
    private static func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
        var runStart = 0
        for (index, byte) in bytes.enumerated() where byte < 0x20 || byte == 0x22 || byte == 0x5C {
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
            runStart = index + 1
            output.append(0x5C)
            switch byte {
            case 0x0A: output.append(UInt8(ascii: "n"))
            case 0x0D: output.append(UInt8(ascii: "r"))
            case 0x09: output.append(UInt8(ascii: "t"))
            case 0x08: output.append(UInt8(ascii: "b"))
            case 0x0C: output.append(UInt8(ascii: "f"))
            case 0x22, 0x5C: output.append(byte)
            default:
                output.append(contentsOf: "u00".utf8)
                output.append(contentsOf: Hex.encode([byte]).utf8)
            }
        }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
    }
}
