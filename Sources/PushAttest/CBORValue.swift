/// A CBOR data item (RFC 8949) of the kinds App Attest objects use.
public indirect enum CBORValue: Sendable, Equatable {
    /// Major type 0.
    case unsigned(UInt64)
    /// Major type 1: the value is `-1 - n` for the stored `n`.
    case negative(UInt64)
    /// Major type 2.
    case bytes([UInt8])
    /// Major type 3 (valid UTF-8).
    case text(String)
    /// Major type 4.
    case array([CBORValue])
    /// Major type 5, entries in encoded order; keys are unique.
    case map([CBORMapEntry])
    /// Simple values 20 and 21.
    case boolean(Bool)

    /// The value of the entry whose key is the text `key`, in a map; `nil` otherwise.
    public subscript(textKey key: String) -> CBORValue? {
        guard case .map(let entries) = self else { return nil }
        return entries.first { $0.key == .text(key) }?.value
    }

    /// The keys of a map, when every key is text; `nil` otherwise.
    public var textKeys: Set<String>? {
        guard case .map(let entries) = self else { return nil }
        var keys: Set<String> = []
        for entry in entries {
            guard case .text(let key) = entry.key else { return nil }
            keys.insert(key)
        }
        return keys
    }

    /// The payload of a byte string; `nil` for any other kind.
    public var byteString: [UInt8]? {
        if case .bytes(let bytes) = self { return bytes }
        return nil
    }
}

/// One key/value pair of a CBOR map.
public struct CBORMapEntry: Sendable, Equatable {
    public let key: CBORValue
    public let value: CBORValue
}
