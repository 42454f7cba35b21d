import GatewayConfiguration
import GatewayCredentials
import PushCrypto
import PushGateway

/// Endpoint grants under a fixed keyring (key id `fuzz`, key bytes 0x00…0x1f). The first input byte
/// picks the mode: 0 opens the rest as a presented grant string (the envelope parser); anything
/// else seals the rest as plaintext and opens it (the plaintext parser behind the authentication).
enum GrantTarget {
    static let envelope = SealedEnvelope(
        purpose: .endpointGrant, keyring: Keyring(keys: [Keyring.Key(id: "fuzz", bytes: (0..<32).map { UInt8($0) })]))

    static func prepare() { _ = envelope }

    static func run(_ input: [UInt8]) {
        guard let mode = input.first else { return }
        let rest = Array(input.dropFirst())
        let grant: EndpointGrant?
        if mode == 0 {
            grant = EndpointGrant.open(String(decoding: rest, as: UTF8.self), with: envelope)
        } else {
            guard let sealed = try? envelope.seal(rest) else {
                FuzzCheck.require(false, "sealing failed")
                return
            }
            grant = EndpointGrant.open(sealed, with: envelope)
        }
        guard let grant else { return }
        FuzzCheck.require(grant.relayPublicKey.count == 32, "relay key is not 32 bytes")
        guard let resealed = try? grant.sealed(with: envelope) else {
            FuzzCheck.require(false, "an opened grant does not seal again")
            return
        }
        FuzzCheck.require(EndpointGrant.open(resealed, with: envelope) == grant, "grant changed through sealing")
    }
}
