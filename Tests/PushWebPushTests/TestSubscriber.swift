import PushCrypto
import PushWebPush

/// A user agent's side of a fresh subscription: its key pair, its authentication secret and the
/// §8b endpoint string the app would enroll.
struct TestSubscriber {
    let key: P256PrivateKey
    let secret: [UInt8]
    let endpoint: WebPushEndpoint

    init(url: String = "https://push.example.net/x") throws {
        key = try P256PrivateKey.generate()
        secret = try SecureRandom.bytes(16)
        let text =
            Base64.encodeURLNoPadding(key.publicKey.uncompressedPoint) + "." + Base64.encodeURLNoPadding(secret)
            + "." + url
        guard let endpoint = WebPushEndpoint(text) else { throw CryptoError(.invalidKey) }
        self.endpoint = endpoint
    }
}
