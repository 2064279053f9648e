// FoundationNetworking crashes the daemon when an upload's connection drops mid-body: its file
// body source reads the file with DispatchIO, and a read that completes after libcurl has ended
// the transfer unpauses the easy handle. libcurl answers CURLE_BAD_FUNCTION_ARGUMENT for a handle
// that no longer has a connection, and FoundationNetworking, which treats every error of this call
// as impossible, traps on that answer ("EasyHandle.swift: Fatal error: ... Code=43").
//
// This file defines FoundationNetworking's pause call (CFURLSessionEasyHandleSetPauseState) the
// same way, except that a pause or unpause of a handle whose transfer is over is what it is: a
// no-op, not an error. It takes the place of the original as curl_host.c's host check does:
// - linked dynamically, the executable's definition comes first in symbol lookup;
// - linked statically (--static-swift-stdlib), the executable is linked with
//   --wrap=CFURLSessionEasyHandleSetPauseState and FoundationNetworking's call reaches
//   __wrap_CFURLSessionEasyHandleSetPauseState; the weak definition yields to the archive's.
//
// curl_easy_pause is looked up at run time: FoundationNetworking has already loaded libcurl, and
// the build needs no libcurl headers.

#include <dlfcn.h>
#include "CLinuxShims.h"

enum {
    CURLPAUSE_RECV_BIT = 1 << 0,
    CURLPAUSE_SEND_BIT = 1 << 2,
    CURLE_BAD_FUNCTION_ARGUMENT_CODE = 43,
};

static CFURLSessionEasyCode set_pause_state(void *handle, int send, int receive) {
    int (*pause)(void *, int) = (int (*)(void *, int))dlsym(RTLD_DEFAULT, "curl_easy_pause");
    if (!pause || !handle) return (CFURLSessionEasyCode){CURLE_BAD_FUNCTION_ARGUMENT_CODE};
    int code = pause(handle, (send ? CURLPAUSE_SEND_BIT : 0) | (receive ? CURLPAUSE_RECV_BIT : 0));
    // The only other cause of this code is a handle that is not an easy handle, which
    // FoundationNetworking never passes: the one it passes has ended its transfer.
    if (code == CURLE_BAD_FUNCTION_ARGUMENT_CODE) code = 0;
    return (CFURLSessionEasyCode){code};
}

__attribute__((weak, visibility("default"))) CFURLSessionEasyCode CFURLSessionEasyHandleSetPauseState(
    void *handle, int send, int receive) {
    return set_pause_state(handle, send, receive);
}

__attribute__((visibility("default"))) CFURLSessionEasyCode __wrap_CFURLSessionEasyHandleSetPauseState(
    void *handle, int send, int receive) {
    return set_pause_state(handle, send, receive);
}
