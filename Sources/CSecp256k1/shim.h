#ifndef CSECP256K1_SHIM_H
#define CSECP256K1_SHIM_H
#include <secp256k1.h>
#include <secp256k1_extrakeys.h>
#include <secp256k1_schnorrsig.h>

// secp256k1_context_static is a non-const global pointer: Swift 6 imports it as a shared mutable
// `var` and refuses to read it. A getter sidesteps that.
static inline const secp256k1_context *CSecp256k1_context_static(void) {
    return secp256k1_context_static;
}
#endif
