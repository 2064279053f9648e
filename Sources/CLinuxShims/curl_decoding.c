// FoundationNetworking turns on libcurl's content decoding for every request
// (CURLOPT_HTTP_CONTENT_DECODING 1): a body sent with Content-Encoding: gzip reaches the delegate
// decompressed. The daemon asks for `identity`; a server that sends a coding anyway (a .tar.gz
// served with Content-Encoding: gzip, a common misconfiguration) is saved as it was sent, as curl
// and wget save it, so that its bytes, its length and its ranges stay those of the server.
//
// This file defines FoundationNetworking's CFURLSession_easy_setopt_long the same way, except that
// it keeps content decoding off. It takes the place of the original as curl_host.c's host check
// does: first in symbol lookup when linked dynamically; through --wrap when linked statically.
// curl_easy_setopt is looked up at run time: FoundationNetworking has already loaded libcurl.

#include <dlfcn.h>
#include "CLinuxShims.h"

enum {
    CURLOPT_HTTP_CONTENT_DECODING_OPTION = 158,
    CURLE_FAILED_INIT_CODE = 2,
};

static CFURLSessionEasyCode set_long(void *handle, CFURLSessionOption option, long value) {
    int (*setopt)(void *, int, ...) = (int (*)(void *, int, ...))dlsym(RTLD_DEFAULT, "curl_easy_setopt");
    if (!setopt) return (CFURLSessionEasyCode){CURLE_FAILED_INIT_CODE};
    if (option.value == CURLOPT_HTTP_CONTENT_DECODING_OPTION) value = 0;
    return (CFURLSessionEasyCode){setopt(handle, option.value, value)};
}

__attribute__((weak, visibility("default"))) CFURLSessionEasyCode CFURLSession_easy_setopt_long(
    void *handle, CFURLSessionOption option, long value) {
    return set_long(handle, option, value);
}

__attribute__((visibility("default"))) CFURLSessionEasyCode __wrap_CFURLSession_easy_setopt_long(
    void *handle, CFURLSessionOption option, long value) {
    return set_long(handle, option, value);
}
