import Foundation
import PushCrypto

@testable import PushNostr

/// Hex in either case (the BIP-340 CSV is uppercase) to bytes; nil for anything else.
func bytes(fromHex hex: String) -> [UInt8]? {
    Hex.decode(hex)
}

enum FixtureError: Error {
    case missing(String)
}

func fixture(_ name: String) throws -> Data {
    guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures") else {
        throw FixtureError.missing(name)
    }
    return try Data(contentsOf: url)
}
