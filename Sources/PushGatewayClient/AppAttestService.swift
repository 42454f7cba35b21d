import Foundation

#if canImport(DeviceCheck)
    import DeviceCheck
#endif

/// The three App Attest calls the client makes, shaped like `DCAppAttestService` so that an app
/// passes ``DeviceCheckAppAttestService`` and tests pass a synthetic authority.
public protocol AppAttestService: Sendable {
    var isSupported: Bool { get }
    /// A new key in the Secure Enclave; its id in standard base64.
    func generateKey() async throws -> String
    /// Apple's attestation of the key over `clientDataHash` (once per key).
    func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data
    /// An assertion over `clientDataHash`; its counter grows with each call.
    func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data
}

/// The App Attest failures the client acts on, mapped from `DCError`.
public enum AppAttestError: Error, Sendable, Equatable {
    /// `DCError.featureUnsupported`.
    case unsupported
    /// `DCError.serverUnavailable`: Apple's service was unreachable; retry with the same key and the
    /// same `clientDataHash`.
    case serverUnavailable
    /// `DCError.invalidKey`: the key is unusable (already attested, never attested, or refused).
    case invalidKey
    /// Any other failure, with the `DCError` code.
    case failed(code: Int)
}

#if canImport(DeviceCheck)
    /// ``AppAttestService`` through `DCAppAttestService.shared` (iOS 14 and later).
    @available(iOS 14.0, macOS 11.0, *)
    public struct DeviceCheckAppAttestService: AppAttestService {
        public init() {}

        public var isSupported: Bool { DCAppAttestService.shared.isSupported }

        public func generateKey() async throws -> String {
            try await Self.mapped { try await DCAppAttestService.shared.generateKey() }
        }

        public func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data {
            try await Self.mapped {
                try await DCAppAttestService.shared.attestKey(keyID, clientDataHash: clientDataHash)
            }
        }

        public func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data {
            try await Self.mapped {
                try await DCAppAttestService.shared.generateAssertion(keyID, clientDataHash: clientDataHash)
            }
        }

        private static func mapped<Value>(_ call: () async throws -> Value) async throws -> Value {
            do {
                return try await call()
            } catch let error as DCError {
                switch error.code {
                case .featureUnsupported: throw AppAttestError.unsupported
                case .serverUnavailable: throw AppAttestError.serverUnavailable
                case .invalidKey: throw AppAttestError.invalidKey
                default: throw AppAttestError.failed(code: error.code.rawValue)
                }
            }
        }
    }
#endif
