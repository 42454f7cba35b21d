import Foundation
import Glibc
import PushCrypto
import PushDER
import PushKeyAttestation
import PushTestSupport
import Testing

@Suite(
    "Real Key Attestation chains (Pixel 8a TEE, Pixel 9 Pro StrongBox, Pixel 3 factory RSA, Xperia 10 III factory)",
    .testBodyThreads)
struct RealChainTests {
    let verifier: KeyAttestationVerifier

    init() throws {
        verifier = try KeyAttestationVerifier.google()
    }

    func examine(
        _ chain: RealChain, requirements: KeyAttestationRequirements? = nil,
        statusList: KeyAttestationStatusList? = nil,
        at time: Int64? = nil
    ) -> KeyAttestationReport {
        verifier.examine(
            chain: chain.chain, requirements: requirements ?? chain.requirements, statusList: statusList,
            at: time ?? chain.recordedTime)
    }

    @Test(
        "at its recorded time each chain passes steps 1–3 and every input check; only the device's own state fails",
        arguments: RealChain.all)
    func verifiesAtRecordedTime(chain: RealChain) throws {
        let list = try KeyAttestationStatusList(json: Array(#"{"entries":{}}"#.utf8), fetchedAt: chain.recordedTime)
        let report = examine(chain, statusList: list)
        #expect(report.failures == chain.deviceFailures)
        #expect(report.failures.allSatisfy { !$0.isChainCheck })
        #expect(report.certificates.count == chain.chain.count)
        #expect(
            Hex.encode(try #require(report.rootSubjectPublicKeyInfoSHA256))
                == GoogleAttestationRoots.pinnedSubjectPublicKeyInfoSHA256Hex[0])
    }

    @Test("the StrongBox chain passes all of §5a, also for a StrongBox-only profile, and yields its P-256 key")
    func strongBoxChainEnrolls() throws {
        let caiman = RealChain.all[1]
        let list = try KeyAttestationStatusList(json: Array(#"{"entries":{}}"#.utf8), fetchedAt: caiman.recordedTime)
        let profile = KeyAttestationProfile(
            packageName: caiman.packageName, signingCertificateDigests: [caiman.signingDigest],
            minimumSecurityLevel: .strongBox)
        let attested = try verifier.verify(
            chain: caiman.chain, challenge: caiman.challenge, profile: profile, statusList: list,
            at: caiman.recordedTime)
        let leaf = try AttestationCertificate(derEncoded: caiman.chain[0])
        #expect(attested.publicKey == (try P256PublicKey(subjectPublicKeyInfoDER: leaf.subjectPublicKeyInfoDER)))
        #expect(attested.keyID == SHA256.hash(attested.publicKey.uncompressedPoint))
        // The Pixel 8a's TEE key is refused by a StrongBox profile of its app.
        let akita = RealChain.all[0]
        var strongBoxOnly = akita.requirements
        strongBoxOnly.minimumSecurityLevel = .strongBox
        let teeKey = examine(akita, requirements: strongBoxOnly)
        #expect(teeKey.failures == [.securityLevel, .bootState])
    }

    @Test(
        "today the two RKP chains fail with time (their attestation certificates lived weeks), the factory chains do not"
    )
    func today() {
        let now = Int64(time(nil))
        for chain in RealChain.all {
            let report = examine(chain, at: now)
            let chainFailures = report.failures.filter(\.isChainCheck)
            if chain.isFactoryProvisioned {
                // Their self-signed root copies expired on 2026-05-24, but each is the trust anchor:
                // the pinned key, whose certificate's own dates do not count (§5a step 2).
                #expect(chainFailures.isEmpty, "\(chain.name)")
                let anchorCopy = try? AttestationCertificate(derEncoded: chain.chain[chain.chain.count - 1])
                #expect((anchorCopy?.notAfter ?? .max) < now, "the anchor copy has expired")
            } else {
                #expect(chainFailures == [.time], "\(chain.name)")
                #expect(report.firstFailure == .time, "\(chain.name)")
            }
        }
    }

    @Test(
        "the Xperia 10 III factory chain, whose intermediates expired on 2026-05-24, passes all of §5a today and yields its key"
    )
    func expiredFactoryChainEnrollsToday() throws {
        let sony = try #require(RealChain.all.first { $0.name.hasPrefix("sony") })
        let now = Int64(time(nil))
        let certificates = try sony.chain.map { try AttestationCertificate(derEncoded: $0) }
        let expiry: Int64 = 1_779_643_140  // 2026-05-24T17:19:00Z, the batch certificate's notAfter
        #expect(certificates[1].notAfter == expiry && certificates[1].notAfter < now)
        #expect(certificates[2].notAfter < now && certificates[2].subjectHasSerialNumber)
        let list = try KeyAttestationStatusList(json: Array(#"{"entries":{}}"#.utf8), fetchedAt: now)
        let profile = KeyAttestationProfile(
            packageName: sony.packageName, signingCertificateDigests: [sony.signingDigest])
        let attested = try verifier.verify(
            chain: sony.chain, challenge: sony.challenge, profile: profile, statusList: list, at: now)
        #expect(
            attested.publicKey == (try P256PublicKey(subjectPublicKeyInfoDER: certificates[0].subjectPublicKeyInfoDER)))
    }

    @Test("a wrong challenge fails with challenge, the first failing step", arguments: RealChain.all)
    func wrongChallenge(chain: RealChain) {
        var requirements = chain.requirements
        requirements.challenge = SHA256.hash(chain.challenge)
        let report = examine(chain, requirements: requirements)
        #expect(report.firstFailure == .challenge)
        #expect(report.failures == ([.challenge] + chain.deviceFailures).sorted())
    }

    @Test("another package fails with package; another signing certificate with signing_cert", arguments: RealChain.all)
    func anotherPackage(chain: RealChain) {
        var requirements = chain.requirements
        requirements.packageName = "com.example.other"
        #expect(examine(chain, requirements: requirements).failures == (chain.deviceFailures + [.package]).sorted())
        requirements = chain.requirements
        requirements.packageName = String(chain.packageName.dropLast())
        #expect(examine(chain, requirements: requirements).failures.contains(.package), "a prefix is not the name")
        requirements = chain.requirements
        requirements.signingCertificateDigests = [SHA256.hash(chain.signingDigest)]
        #expect(examine(chain, requirements: requirements).failures == (chain.deviceFailures + [.signingCert]).sorted())
    }

    @Test(
        "a listed serial (any certificate, any status) fails with revoked, the first failing step",
        arguments: RealChain.all)
    func listedSerial(chain: RealChain) throws {
        let certificates = try chain.chain.map { try AttestationCertificate(derEncoded: $0) }
        for (index, certificate) in certificates.enumerated() {
            // Upper case and leading zeros in the list still name the same serial.
            let key = "00" + certificate.serialNumberHex.uppercased()
            let status = index.isMultiple(of: 2) ? "REVOKED" : "SUSPENDED"
            let json = #"{"entries":{"\#(key)":{"status":"\#(status)","reason":"KEY_COMPROMISE"}}}"#
            let list = try KeyAttestationStatusList(json: Array(json.utf8), fetchedAt: chain.recordedTime)
            let report = examine(chain, statusList: list)
            #expect(report.firstFailure == .revoked, "\(chain.name) certificate \(index)")
            #expect(report.failures == ([.revoked] + chain.deviceFailures).sorted())
        }
    }

    @Test("serial numbers print as the status list keys them: lowercase hex without leading zeros")
    func serialNumbers() throws {
        let blueline = try RealChain.all[2].chain.map { try AttestationCertificate(derEncoded: $0).serialNumberHex }
        #expect(blueline == ["1", "12252754451427085025", "388266760658996859d", "e8fa196314d2fa18"])
        let akita = try RealChain.all[0].chain.map { try AttestationCertificate(derEncoded: $0).serialNumberHex }
        #expect(
            akita == [
                "1", "4f47dffaecc3f58346fb7815514e0dcc", "bfc61f12db0cce5bc16832d05e052e488cb284",
                "388266760658996860e",
                "d50ff25ba3f2d6b3",
            ])
    }

    @Test("every parsed KeyDescription field equals the companion JSON Google recorded", arguments: RealChain.all)
    func fieldsEqualCompanion(chain: RealChain) throws {
        let companion = try KeyAttestationFixtures.companion(chain.name)
        let description = try #require(examine(chain).keyDescription)
        #expect(String(description.attestationVersion) == companion["attestationVersion"] as? String)
        #expect(String(description.keyMintVersion) == companion["keyMintVersion"] as? String)
        #expect(
            CompanionNames.securityLevel(description.attestationSecurityLevel) == companion["attestationSecurityLevel"]
                as? String)
        #expect(
            CompanionNames.securityLevel(description.keyMintSecurityLevel) == companion["keyMintSecurityLevel"]
                as? String)
        #expect(Base64.encode(description.attestationChallenge) == companion["attestationChallenge"] as? String)
        #expect(description.attestationChallenge == chain.challenge)
        #expect(Base64.encode(description.uniqueID) == companion["uniqueId"] as? String)
        try CompanionNames.expectList(description.softwareEnforced, equals: companion["softwareEnforced"], chain.name)
        try CompanionNames.expectList(description.hardwareEnforced, equals: companion["hardwareEnforced"], chain.name)
    }
}

/// How the companion files name and write each authorization (android/keyattestation's JSON).
enum CompanionNames {
    static let tags: [String: UInt32] = [
        "purposes": 1, "algorithms": 2, "keySize": 3, "digests": 5, "paddings": 6, "ecCurve": 10,
        "rsaPublicExponent": 200, "noAuthRequired": 503, "creationDateTime": 701, "origin": 702, "rootOfTrust": 704,
        "osVersion": 705, "osPatchLevel": 706, "attestationApplicationId": 709, "attestationIdBrand": 710,
        "attestationIdDevice": 711, "attestationIdProduct": 712, "attestationIdManufacturer": 716,
        "attestationIdModel": 717, "vendorPatchLevel": 718, "bootPatchLevel": 719,
    ]
    static let origins = ["GENERATED": Int64(0), "DERIVED": 1, "IMPORTED": 2, "UNKNOWN": 3, "SECURELY_IMPORTED": 4]
    static let bootStates: [String: VerifiedBootState] = [
        "VERIFIED": .verified, "SELF_SIGNED": .selfSigned, "UNVERIFIED": .unverified, "FAILED": .failed,
    ]

    static func securityLevel(_ level: SecurityLevel) -> String {
        switch level {
        case .software: "SOFTWARE"
        case .trustedEnvironment: "TRUSTED_ENVIRONMENT"
        case .strongBox: "STRONG_BOX"
        }
    }

    /// Every field of `list` is in the companion with the same value, and every companion field is in `list`.
    static func expectList(_ list: AuthorizationList, equals companion: Any?, _ chain: String) throws {
        // `areTagsOrdered` is Google's parser's note on the list's encoding, not a field; the strict
        // reader refuses lists out of order, so it must be true.
        var fields = try #require(companion as? [String: Any], "\(chain)")
        if let ordered = fields.removeValue(forKey: "areTagsOrdered") { #expect(ordered as? Bool == true, "\(chain)") }
        let companionTags = try fields.keys.map { name in try #require(tags[name], "unknown companion field \(name)") }
        #expect(Set(companionTags) == Set(list.entries.map(\.tag)), "\(chain): the same fields")
        #expect(list.entries.map(\.tag) == list.entries.map(\.tag).sorted(), "\(chain): ascending tags")
        for (name, expected) in fields {
            let value = try #require(list.value(tag: tags[name] ?? 0), "\(chain) \(name)")
            try expectField(name, value, list, equals: expected, "\(chain) \(name)")
        }
    }

    static func expectField(
        _ name: String, _ value: DERElement, _ list: AuthorizationList, equals expected: Any, _ label: String
    ) throws {
        switch name {
        case "purposes", "digests", "paddings":
            let members = try AuthorizationListDecoding.integerSet(value)
            #expect(members.map(String.init) == expected as? [String], "\(label)")
            if name == "purposes" { #expect(list.purposes == members, "\(label)") }
        case "noAuthRequired":
            try value.null()
            #expect(expected as? Bool == true, "\(label)")
        case "origin":
            #expect(list.origin == origins[expected as? String ?? ""], "\(label)")
            #expect(try value.integer() == list.origin)
        case "rootOfTrust":
            let fields = try #require(expected as? [String: Any])
            let root = try #require(list.rootOfTrust)
            #expect(Base64.encode(root.verifiedBootKey) == fields["verifiedBootKey"] as? String, "\(label)")
            #expect(root.deviceLocked == fields["deviceLocked"] as? Bool, "\(label)")
            #expect(root.verifiedBootState == bootStates[fields["verifiedBootState"] as? String ?? ""], "\(label)")
            #expect(
                root.verifiedBootHash.map { Base64.encode($0) } == fields["verifiedBootHash"] as? String, "\(label)")
        case "attestationApplicationId":
            let fields = try #require(expected as? [String: Any])
            let application = try #require(list.attestationApplicationID)
            let packages = try #require(fields["packages"] as? [[String: String]])
            #expect(
                application.packages.map { String(decoding: $0.name, as: UTF8.self) } == packages.map { $0["name"] })
            #expect(application.packages.map { String($0.version) } == packages.map { $0["version"] })
            #expect(application.signatureDigests.map { Base64.encode($0) } == fields["signatures"] as? [String])
        case let text where text.hasPrefix("attestationId"):
            #expect(String(decoding: try value.octetString(), as: UTF8.self) == expected as? String, "\(label)")
        default:
            // Plain INTEGER fields (algorithm, sizes, curve, exponent, dates, versions, patch levels).
            #expect(String(try value.integer()) == expected as? String, "\(label)")
            if name == "algorithms" { #expect(list.algorithm == (try value.integer())) }
            if name == "ecCurve" { #expect(list.ecCurve == (try value.integer())) }
        }
    }
}

/// A SET OF INTEGER read with the PushDER reader.
enum AuthorizationListDecoding {
    static func integerSet(_ element: DERElement) throws -> [Int64] {
        var members = try element.reader(expecting: .set)
        var values: [Int64] = []
        while !members.isAtEnd { values.append(try members.read(.integer).integer()) }
        return values
    }
}
