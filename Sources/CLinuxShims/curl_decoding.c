// FoundationNetworking turns on libcurl's content decoding for every request
// (CURLOPT_HTTP_CONTENT_DECODING 1): a body sent with Content-Encoding: gzip reaches the delegate
// decompressed. The daemon asks for `identity`; a server that sends a coding anyway (a .tar.gz
// served with Content-Encoding: gzip, a common misconfiguration) is saved as it was sent, as curl
// and wget save it, so that its bytes, its length and its ranges stay those of the server.
//
// FoundationNetworking also clamps libcurl's receive buffer (CURLOPT_BUFFERSIZE) to 16 KiB, so a
// fast download costs a socket read per 16 KiB. The buffer is raised here to RECEIVE_BUFFER_BYTES,
// which libcurl (7.x) allocates once per transfer: fewer, larger reads. The write callback still
// gets at most CURL_MAX_WRITE_SIZE (16 KiB) at a time, so nothing changes above libcurl.
//
// This file defines FoundationNetworking's CFURLSession_easy_setopt_long the same way, except that
// it keeps content decoding off and the receive buffer at least RECEIVE_BUFFER_BYTES. It takes the place of the original as curl_host.c's host check
// does: first in symbol lookup when linked dynamically; through --wrap when linked statically.
// curl_easy_setopt is looked up at run time: FoundationNetworking has already loaded libcurl.

#include <dlfcn.h>
#include "CLinuxShims.h"

enum {
    CURLOPT_BUFFERSIZE_OPTION = 98,
    CURLOPT_HTTP_CONTENT_DECODING_OPTION = 158,
    RECEIVE_BUFFER_BYTES = 256 * 1024,
    CURLE_FAILED_INIT_CODE = 2,
};

static CFURLSessionEasyCode set_long(void *handle, CFURLSessionOption option, long value) {
    int (*setopt)(void *, int, ...) = (int (*)(void *, int, ...))dlsym(RTLD_DEFAULT, "curl_easy_setopt");
    if (!setopt) return (CFURLSessionEasyCode){CURLE_FAILED_INIT_CODE};
    if (option.value == CURLOPT_HTTP_CONTENT_DECODING_OPTION) value = 0;
    if (option.value == CURLOPT_BUFFERSIZE_OPTION && value < RECEIVE_BUFFER_BYTES) value = RECEIVE_BUFFER_BYTES;
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
