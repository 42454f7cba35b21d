internal import CSecp256k1
import PushCrypto

/// The one libsecp256k1 context of the process, created and randomized once.
///
/// `@unchecked Sendable` is safe because the context is never mutated after `init`: libsecp256k1
/// documents that a context may be used concurrently by many threads for verification, signing and
/// key parsing as long as no thread calls `secp256k1_context_randomize` or destroys it meanwhile,
/// and both happen only in `init` and `deinit` here.
final class Secp256k1Context: @unchecked Sendable {
    static let shared = Secp256k1Context()

    let pointer: OpaquePointer

    private init() {
        guard let context = secp256k1_context_create(UInt32(SECP256K1_CONTEXT_NONE)) else {
            // Only fails on allocation failure or a misconfigured library; nothing can run without it.
            fatalError("secp256k1_context_create failed")
        }
        // Randomization blinds signing against side channels; it is hardening only, so an unusable
        // random source leaves a correct (unblinded) context rather than no context.
        if let seed = try? SecureRandom.bytes(32) {
            _ = secp256k1_context_randomize(context, seed)
        }
        pointer = context
    }

    deinit {
        secp256k1_context_destroy(pointer)
    }
}
