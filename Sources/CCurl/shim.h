#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H
#include <curl/curl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

// curl_easy_setopt and curl_easy_getinfo are variadic and do not import into Swift: one typed
// wrapper per argument kind.
static inline CURLcode CCurl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode CCurl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode CCurl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode CCurl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode CCurl_setopt_write_function(CURL *handle, curl_write_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}
static inline CURLcode CCurl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode CCurl_setopt_header_function(CURL *handle, curl_write_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, callback);
}
static inline CURLcode CCurl_setopt_opensocket_function(CURL *handle, curl_opensocket_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, callback);
}
static inline CURLMcode CCurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}
static inline CURLMcode CCurl_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value) {
    return curl_multi_setopt(multi, option, value);
}
static inline CURLMcode CCurl_multi_setopt_socket_function(CURLM *multi, curl_socket_callback callback) {
    return curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, callback);
}
static inline CURLMcode CCurl_multi_setopt_timer_function(CURLM *multi, curl_multi_timer_callback callback) {
    return curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, callback);
}

// The pinning veto of CURLOPT_OPENSOCKETFUNCTION: the address libcurl is about to connect to, as
// its family (AF_INET or AF_INET6), its 4 or 16 network-order bytes and its port. Returns the byte
// count, 0 for another family.
static inline int CCurl_socket_address(const struct curl_sockaddr *address, unsigned char bytes[16], int *port) {
    if (address->family == AF_INET && address->addrlen >= sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *ipv4 = (const struct sockaddr_in *)&address->addr;
        memcpy(bytes, &ipv4->sin_addr, 4);
        *port = ntohs(ipv4->sin_port);
        return 4;
    }
    if (address->family == AF_INET6 && address->addrlen >= sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *ipv6 = (const struct sockaddr_in6 *)&address->addr;
        memcpy(bytes, &ipv6->sin6_addr, 16);
        *port = ntohs(ipv6->sin6_port);
        return 16;
    }
    return 0;
}
// What libcurl's default open-socket does: a socket of the address's family, type and protocol.
static inline curl_socket_t CCurl_open_socket(const struct curl_sockaddr *address) {
    return socket(address->family, address->socktype, address->protocol);
}
#endif
