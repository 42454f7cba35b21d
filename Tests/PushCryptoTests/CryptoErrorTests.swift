import PushCrypto
import Testing

@Suite("PushCrypto's one error")
struct CryptoErrorTests {
    @Test("a TLS context that cannot load its trust anchors reads \"TLS configuration: …\" and names no path")
    func tlsConfigurationDescription() throws {
        let path = "/nonexistent/push-gateway-anchors.pem"
        let error = try #require(throws: CryptoError.self) {
            _ = try TLSContext.client(extraTrustAnchorsFile: path, useSystemTrustStore: false)
        }
        #expect(error.code == .configuration)
        #expect(error.description.hasPrefix("TLS configuration: extra trust anchors file: "))
        #expect(!error.description.contains(path))
    }

    @Test("an operation code prints its name and OpenSSL's strings, not the TLS prefix")
    func operationDescription() {
        let error = CryptoError(.invalidKey, openSSLErrors: ["error:1E08010C:DECODER routines::unsupported"])
        #expect(error.description == "crypto invalidKey (error:1E08010C:DECODER routines::unsupported)")
    }
}
