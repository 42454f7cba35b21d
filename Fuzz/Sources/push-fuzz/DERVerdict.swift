#if !PUSH_LIBFUZZER
    import PushDER
    import PushKeyAttestation

    /// `push-fuzz --differential der`: the input as strict DER under the certificate limits, then as an
    /// attestation certificate and as a KeyDescription extension value (docs/reliability.md,
    /// "Differential testing"). `{"verdict":"reject","code":"…"}` when the strict reader refuses it,
    /// else `{"verdict":"accept","tree":node,"certificate":…,"key_description":…}` where a node is
    /// `{"t":"class.form.number","x":hex}` (primitive; an OBJECT IDENTIFIER adds `"oid"`) or
    /// `{"t":…,"e":[node…]}` (constructed), and the two readings are null or what was read.
    enum DERVerdict {
        static func write(_ input: [UInt8], into output: inout DifferentialOutput) {
            let element: DERElement
            do {
                element = try DER.parse(input, limits: .certificate)
            } catch {
                output.append("{\"verdict\":\"reject\",\"code\":\"\(error.code.name)\"}")
                return
            }
            output.append("{\"verdict\":\"accept\",\"tree\":")
            node(element, into: &output)
            output.append(",\"certificate\":")
            certificate(input, into: &output)
            output.append(",\"key_description\":")
            if let description = try? KeyDescription(extensionValue: input[...]) {
                keyDescription(description, into: &output)
            } else {
                output.append("null")
            }
            output.append("}")
        }

        static func node(_ element: DERElement, into output: inout DifferentialOutput) {
            let tag = element.tag
            output.append(
                "{\"t\":\"\(tag.tagClass.rawValue).\(tag.isConstructed ? "c" : "p").\(tag.number)\"")
            if tag.isConstructed {
                output.append(",\"e\":[")
                var children = DERReader(element.contents)
                var first = true
                while !children.isAtEnd, let child = try? children.next() {
                    if !first { output.append(",") }
                    first = false
                    node(child, into: &output)
                }
                output.append("]}")
                return
            }
            output.append(",\"x\":")
            output.appendHex(element.contents)
            if tag == .objectIdentifier {
                output.append(",\"oid\":")
                if let dotted = try? element.objectIdentifier() {
                    output.append("\"\(dotted)\"")
                } else {
                    output.append("null")
                }
            }
            output.append("}")
        }

        /// `{"serial":"hex","not_before":s,"not_after":s,"spki":hex,"key_description":hex|null}` or null.
        static func certificate(_ input: [UInt8], into output: inout DifferentialOutput) {
            guard let certificate = try? AttestationCertificate(derEncoded: input) else {
                output.append("null")
                return
            }
            output.append("{\"serial\":\"\(certificate.serialNumberHex)\"")
            output.append(",\"not_before\":\(certificate.notBefore),\"not_after\":\(certificate.notAfter)")
            output.append(",\"spki\":")
            output.appendHex(certificate.subjectPublicKeyInfoDER)
            output.append(",\"key_description\":")
            if let value = certificate.extensionValue(oid: KeyDescription.extensionOID) {
                output.appendHex(value)
            } else {
                output.append("null")
            }
            output.append("}")
        }

        static func keyDescription(_ description: KeyDescription, into output: inout DifferentialOutput) {
            output.append("{\"attestation_version\":\(description.attestationVersion)")
            output.append(",\"attestation_security_level\":\(description.attestationSecurityLevel.rawValue)")
            output.append(",\"keymint_version\":\(description.keyMintVersion)")
            output.append(",\"keymint_security_level\":\(description.keyMintSecurityLevel.rawValue)")
            output.append(",\"challenge\":")
            output.appendHex(description.attestationChallenge)
            output.append(",\"unique_id\":")
            output.appendHex(description.uniqueID)
            output.append(",\"software\":")
            authorizationList(description.softwareEnforced, into: &output)
            output.append(",\"hardware\":")
            authorizationList(description.hardwareEnforced, into: &output)
            output.append("}")
        }

        /// `{"tags":[n…],"purposes":[n…]|null,"algorithm":n|null,"ec_curve":…,"origin":…,
        /// "root_of_trust":{…}|null,"application_id":{"packages":[[hex,n]…],"digests":[hex…]}|null}`.
        static func authorizationList(_ list: AuthorizationList, into output: inout DifferentialOutput) {
            func number(_ value: Int64?) -> String { value.map(String.init) ?? "null" }
            output.append("{\"tags\":[\(list.entries.map { String($0.tag) }.joined(separator: ","))]")
            output.append(
                ",\"purposes\":\(list.purposes.map { "[\($0.map(String.init).joined(separator: ","))]" } ?? "null")")
            output.append(",\"algorithm\":\(number(list.algorithm)),\"ec_curve\":\(number(list.ecCurve))")
            output.append(",\"origin\":\(number(list.origin)),\"root_of_trust\":")
            if let root = list.rootOfTrust {
                output.append("{\"key\":")
                output.appendHex(root.verifiedBootKey)
                output.append(",\"locked\":\(root.deviceLocked),\"state\":\(root.verifiedBootState.rawValue),\"hash\":")
                if let hash = root.verifiedBootHash { output.appendHex(hash) } else { output.append("null") }
                output.append("}")
            } else {
                output.append("null")
            }
            output.append(",\"application_id\":")
            guard let application = list.attestationApplicationID else {
                output.append("null}")
                return
            }
            output.append("{\"packages\":[")
            for (index, package) in application.packages.enumerated() {
                output.append(index == 0 ? "[" : ",[")
                output.appendHex(package.name)
                output.append(",\(package.version)]")
            }
            output.append("],\"digests\":[")
            for (index, digest) in application.signatureDigests.enumerated() {
                if index > 0 { output.append(",") }
                output.appendHex(digest)
            }
            output.append("]}}")
        }
    }
#endif
