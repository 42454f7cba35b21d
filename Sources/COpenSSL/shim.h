#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H
#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/objects.h>
#include <openssl/opensslv.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

// Function-like macros and variadic functions do not import into Swift; these static inline
// wrappers do (TOOLCHAIN.md §4, pitfalls 1 and 2).
static inline void COpenSSL_free(void *pointer) {
    OPENSSL_free(pointer);
}
static inline long COpenSSL_BIO_get_mem_data(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}

// TLS (PushAPNs, apns-mock)
// Macros over SSL_ctrl / SSL_CTX_ctrl that Swift cannot import (TOOLCHAIN.md §4, pitfall 2).
static inline int COpenSSL_SSL_CTX_set_min_proto_version(SSL_CTX *context, int version) {
    return (int)SSL_CTX_set_min_proto_version(context, version);
}
static inline long COpenSSL_SSL_CTX_set_mode(SSL_CTX *context, long mode) {
    return SSL_CTX_set_mode(context, mode);
}
static inline long COpenSSL_SSL_set_tlsext_host_name(SSL *connection, const char *name) {
    return SSL_set_tlsext_host_name(connection, name);
}
// The partial-write and moving-buffer modes a non-blocking writer needs (SSL_write(3)).
static inline long COpenSSL_SSL_MODE_nonblocking_writes(void) {
    return SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER;
}
static inline int COpenSSL_TLS1_2_VERSION(void) {
    return TLS1_2_VERSION;
}
// ALPN selection on the server: the callback must be a plain C function pointer; `arg` carries
// the wire-format protocol list (length-prefixed names) the server prefers, in order. Without an
// overlap the handshake goes on without ALPN, so the client decides (RFC 7301 §3.2 allows either).
static inline int COpenSSL_alpn_select(SSL *connection, const unsigned char **out, unsigned char *outlen,
                                       const unsigned char *in, unsigned int inlen, void *arg) {
    (void)connection;
    const unsigned char *preferred = (const unsigned char *)arg;
    unsigned int preferredLength = preferred[0];
    unsigned char *selected = NULL;
    unsigned char selectedLength = 0;
    if (SSL_select_next_proto(&selected, &selectedLength, preferred + 1, preferredLength, in, inlen)
        != OPENSSL_NPN_NEGOTIATED) {
        return SSL_TLSEXT_ERR_NOACK;
    }
    *out = selected;
    *outlen = selectedLength;
    return SSL_TLSEXT_ERR_OK;
}
// `protocols` is one length byte for the whole list followed by the wire-format list; it must
// outlive the context (the caller keeps it allocated for the context's lifetime).
static inline void COpenSSL_SSL_CTX_set_alpn_server_protocols(SSL_CTX *context, unsigned char *protocols) {
    SSL_CTX_set_alpn_select_cb(context, COpenSSL_alpn_select, protocols);
}
#endif
