// FoundationNetworking refuses a URL unless libcurl reads the same host from it as Foundation
// does (CFURLSessionCurlHostIsEqual, called from _EasyHandle.set(url:)). For an IPv6 literal
// libcurl keeps the brackets ("[::1]") and Foundation drops them ("::1"), so every
// http://[addr]/ URL failed with NSURLErrorBadURL (-1000) before a byte was sent.
//
// This file defines the same check, accepting exactly that difference:
// - linked dynamically, the executable's definition comes first in symbol lookup, so
//   libFoundationNetworking.so's call through its PLT reaches this one;
// - linked statically (--static-swift-stdlib), the executable is linked with
//   --wrap=CFURLSessionCurlHostIsEqual, so FoundationNetworking's call reaches
//   __wrap_CFURLSessionCurlHostIsEqual, and the weak definition below yields to the archive's.
//
// libcurl's URL API is looked up at run time: FoundationNetworking has already loaded libcurl,
// and the build needs no libcurl headers.

#include <dlfcn.h>
#include <stdbool.h>
#include <string.h>
#include "CLinuxShims.h"

typedef void CURLU;
enum { URLPART_URL = 0, URLPART_HOST = 5 };

static bool same_host(const char *url, const char *expected) {
    CURLU *(*new_url)(void) = (CURLU * (*)(void)) dlsym(RTLD_DEFAULT, "curl_url");
    int (*set_part)(CURLU *, int, const char *, unsigned int) =
        (int (*)(CURLU *, int, const char *, unsigned int))dlsym(RTLD_DEFAULT, "curl_url_set");
    int (*get_part)(CURLU *, int, char **, unsigned int) =
        (int (*)(CURLU *, int, char **, unsigned int))dlsym(RTLD_DEFAULT, "curl_url_get");
    void (*cleanup)(CURLU *) = (void (*)(CURLU *))dlsym(RTLD_DEFAULT, "curl_url_cleanup");
    void (*release)(void *) = (void (*)(void *))dlsym(RTLD_DEFAULT, "curl_free");
    if (!new_url || !set_part || !get_part || !cleanup || !release || !url || !expected) return false;

    bool equal = false;
    CURLU *handle = new_url();
    if (!handle) return false;
    char *host = NULL;
    if (set_part(handle, URLPART_URL, url, 0) == 0 && get_part(handle, URLPART_HOST, &host, 0) == 0 && host) {
        size_t length = strlen(host), expectedLength = strlen(expected);
        equal = (length == expectedLength && memcmp(host, expected, length) == 0)
            || (length == expectedLength + 2 && host[0] == '[' && host[length - 1] == ']'
                && memcmp(host + 1, expected, expectedLength) == 0);
        release(host);
    }
    cleanup(handle);
    return equal;
}

__attribute__((weak, visibility("default"))) bool CFURLSessionCurlHostIsEqual(const char *url, const char *expectedHost) {
    return same_host(url, expectedHost);
}

__attribute__((visibility("default"))) bool __wrap_CFURLSessionCurlHostIsEqual(const char *url, const char *expectedHost) {
    return same_host(url, expectedHost);
}
