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
        for byte in string.utf8 {
            switch byte {
            case 0x0A: output.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x22: output.append(contentsOf: [0x5C, 0x22])
            case 0x5C: output.append(contentsOf: [0x5C, 0x5C])
            case 0x0D: output.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: output.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x08: output.append(contentsOf: [0x5C, UInt8(ascii: "b")])
            case 0x0C: output.append(contentsOf: [0x5C, UInt8(ascii: "f")])
            case 0x00..<0x20:
                output.append(contentsOf: Array(#"\u00"#.utf8))
                output.append(contentsOf: Hex.encode([byte]).utf8)
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
