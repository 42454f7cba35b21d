#ifndef CSECP256K1_SHIM_H
#define CSECP256K1_SHIM_H
#include <secp256k1.h>
#include <secp256k1_ecdh.h>
#include <secp256k1_extrakeys.h>
#include <secp256k1_schnorrsig.h>

// secp256k1_context_static is a non-const global pointer: Swift 6 imports it as a shared mutable
// `var` and refuses to read it. A getter sidesteps that.
static inline const secp256k1_context *CSecp256k1_context_static(void) {
    return secp256k1_context_static;
}

// secp256k1_ecdh's default hash function returns SHA-256 of the compressed point; NIP-44 and Marmot
// Push v1 (docs/protocol.md §13) need the x coordinate itself, so this one copies x32.
static inline int CSecp256k1_ecdh_copy_x(unsigned char *output, const unsigned char *x32,
                                         const unsigned char *y32, void *data) {
    (void)y32;
    (void)data;
    for (int index = 0; index < 32; index++) {
        output[index] = x32[index];
    }
    return 1;
}

// secp256k1_ecdh with CSecp256k1_ecdh_copy_x: writes the 32-byte x coordinate of seckey·pubkey.
static inline int CSecp256k1_ecdh_x_only(const secp256k1_context *context, unsigned char *output,
                                         const secp256k1_pubkey *pubkey, const unsigned char *seckey) {
    return secp256k1_ecdh(context, output, pubkey, seckey, CSecp256k1_ecdh_copy_x, NULL);
}
#endif
