import PushAttest

/// Strict CBOR under the attestation-object limits and the tighter assertion limits.
enum CBORTarget {
    static func run(_ input: [UInt8]) {
        let loose = try? CBORReader.decode(input, limits: .attestationObject)
        if input.count > CBORLimits.attestationObject.maximumByteCount {
            FuzzCheck.require(loose == nil, "input over the byte limit decoded")
        }
        // Everything the tighter limits accept, the looser ones accept as the same value.
        if let tight = try? CBORReader.decode(input, limits: .assertion) {
            FuzzCheck.require(tight == loose, "assertion limits accept what attestation limits refuse")
        }
        if let loose {
            _ = loose.textKeys
            _ = loose.byteString
            _ = loose[textKey: "fmt"]
            _ = loose[textKey: "authData"]
        }
    }
}
