import PushCrypto
import Testing

@Suite("JSON Web Signature compact serialization, the form of every bearer token the gateway signs")
struct JSONWebSignatureTests {
    // RFC 7515 Appendix A.1: the HS256 example, its header and payload with their CR LF bytes.
    static let header = Array("{\"typ\":\"JWT\",\r\n \"alg\":\"HS256\"}".utf8)
    static let claims = Array("{\"iss\":\"joe\",\r\n \"exp\":1300819380,\r\n \"http://example.com/is_root\":true}".utf8)
    static let key = Base64.decodeURLNoPadding(
        "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow")
    static let signingInput =
        "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9"
        + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"

    @Test("RFC 7515 A.1 is reproduced byte for byte: the signing input, and the token its signature completes")
    func reproducesTheRFCExample() throws {
        let key = HMACSHA256.Key(try #require(Self.key))
        #expect(JSONWebSignature.signingInput(header: Self.header, claims: Self.claims) == Self.signingInput)
        let token = JSONWebSignature.sign(header: Self.header, claims: Self.claims) { key.authenticationCode($0) }
        #expect(token == Self.signingInput + ".dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
    }

    @Test("the signer is handed exactly the ASCII signing input, and its failure is the token's failure")
    func signerSeesTheSigningInput() {
        var seen: [UInt8] = []
        _ = JSONWebSignature.sign(header: Self.header, claims: Self.claims) { input -> [UInt8] in
            seen = input
            return []
        }
        #expect(seen == Array(Self.signingInput.utf8))
        #expect(throws: CryptoError.self) {
            try JSONWebSignature.sign(header: Self.header, claims: Self.claims) {
                (_: [UInt8]) throws(CryptoError) -> [UInt8] in
                throw CryptoError(.operationFailed)
            }
        }
    }
}
