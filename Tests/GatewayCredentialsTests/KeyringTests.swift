import GatewayConfiguration
import PushTestSupport
import Testing

@testable import GatewayCredentials

/// The keyring (docs/protocol.md §7): the first key seals, any key opens by its id, and the key
/// bytes are never printed (§11).
@Suite("the keyring", .testBodyThreads)
struct KeyringTests {
    /// 32 bytes of 0x71 and of 0x72.
    static let ring =
        "new:cXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXFxcXE=,old_1-A:cnJycnJycnJycnJycnJycnJycnJycnJycnJycnJycnI="

    @Test("a configured keyring's keys in order: the first seals, each opens by its id, an unknown id finds none")
    func configuredOrder() throws {
        let keyring = Keyring(try ConfiguredKeyring.parse(Self.ring, variable: "PUSH_GATEWAY_GRANT_KEYS").get())
        #expect(keyring.keys.map(\.id) == ["new", "old_1-A"])
        #expect(keyring.sealingKey.id == "new" && keyring.sealingKey.bytes == [UInt8](repeating: 0x71, count: 32))
        #expect(keyring.key(id: "old_1-A")?.bytes == [UInt8](repeating: 0x72, count: 32))
        #expect(keyring.key(id: "missing") == nil && keyring.key(id: "ne") == nil)
    }

    @Test("printing, debug-printing or dumping a keyring shows key ids, never key bytes")
    func redacted() throws {
        let keyring = Keyring(keys: [Keyring.Key(id: "g1", bytes: [UInt8](repeating: 0x5a, count: 32))])
        var dumped = ""
        dump(keyring, to: &dumped)
        for rendering in ["\(keyring)", String(reflecting: keyring), dumped, "\(keyring.sealingKey)"] {
            #expect(rendering.contains("g1"), "\(rendering)")
            #expect(!rendering.contains("90") && !rendering.contains("0x5a") && !rendering.contains("WlpaWlpa"))
        }
    }
}
