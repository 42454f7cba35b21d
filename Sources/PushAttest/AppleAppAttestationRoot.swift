import PushCrypto

/// The Apple App Attestation Root CA, built into the binary (docs/protocol.md §5 step 2).
public enum AppleAppAttestationRoot {
    /// SHA-256 of the root's DER encoding, as published in docs/protocol.md §5.
    public static let pinnedFingerprintHex = "1cb9823ba28ba6ad2d33a006941de2ae4f513ef1d4e831b9f7e0fa7b6242c932"

    /// The built-in certificate, PEM as distributed by Apple
    /// (https://www.apple.com/certificateauthority/Apple_App_Attestation_Root_CA.pem).
    static let pem = """
        -----BEGIN CERTIFICATE-----
        MIICITCCAaegAwIBAgIQC/O+DvHN0uD7jG5yH2IXmDAKBggqhkjOPQQDAzBSMSYw
        JAYDVQQDDB1BcHBsZSBBcHAgQXR0ZXN0YXRpb24gUm9vdCBDQTETMBEGA1UECgwK
        QXBwbGUgSW5jLjETMBEGA1UECAwKQ2FsaWZvcm5pYTAeFw0yMDAzMTgxODMyNTNa
        Fw00NTAzMTUwMDAwMDBaMFIxJjAkBgNVBAMMHUFwcGxlIEFwcCBBdHRlc3RhdGlv
        biBSb290IENBMRMwEQYDVQQKDApBcHBsZSBJbmMuMRMwEQYDVQQIDApDYWxpZm9y
        bmlhMHYwEAYHKoZIzj0CAQYFK4EEACIDYgAERTHhmLW07ATaFQIEVwTtT4dyctdh
        NbJhFs/Ii2FdCgAHGbpphY3+d8qjuDngIN3WVhQUBHAoMeQ/cLiP1sOUtgjqK9au
        Yen1mMEvRq9Sk3Jm5X8U62H+xTD3FE9TgS41o0IwQDAPBgNVHRMBAf8EBTADAQH/
        MB0GA1UdDgQWBBSskRBTM72+aEH/pwyp5frq5eWKoTAOBgNVHQ8BAf8EBAMCAQYw
        CgYIKoZIzj0EAwMDaAAwZQIwQgFGnByvsiVbpTKwSga0kP0e8EeDS4+sQmTvb7vn
        53O5+FRXgeLhpJ06ysC5PrOyAjEAp5U4xDgEgllF7En3VcE3iexZZtKeYnpqtijV
        oyFraWVIyd/dganmrduC1bmTBGwD
        -----END CERTIFICATE-----

        """

    /// The built-in root after checking its SHA-256 against ``pinnedFingerprintHex``. Callers treat
    /// a failure as fatal at start-up: nothing may be verified against an unknown root.
    public static func certificate() throws(AppAttestError) -> X509Certificate {
        try load(pem: pem, expectedFingerprintHex: pinnedFingerprintHex)
    }

    /// Whether `candidate` is Apple's root (used to decide whether an operator-supplied root file
    /// is an insecure setting, docs/protocol.md §12).
    public static func isAppleRoot(_ candidate: X509Certificate) -> Bool {
        Hex.encode(candidate.sha256Fingerprint) == pinnedFingerprintHex
    }

    static func load(pem: String, expectedFingerprintHex: String) throws(AppAttestError) -> X509Certificate {
        guard let certificate = try? X509Certificate(pem: pem),
            ConstantTime.equals(
                Array(Hex.encode(certificate.sha256Fingerprint).utf8), Array(expectedFingerprintHex.utf8))
        else { throw AppAttestError(.rootIntegrity) }
        return certificate
    }
}
