// FoundationNetworking watches a socket with one DispatchSource for each direction libcurl asks
// for (CURLMOPT_SOCKETFUNCTION), but never removes a source when libcurl stops asking for its
// direction: it only adds the missing one. So once a request is sent and libcurl waits to read
// the answer (CURL_POLL_OUT, then CURL_POLL_IN), the write source stays; a connected socket is
// always writable, so it fires without pause, and every firing has libcurl look at the socket
// again: a transfer waiting for a slow server's first byte kept a core busy.
//
// This file puts a trampoline in front of FoundationNetworking's socket callback. When libcurl
// stops watching a socket for writing, the trampoline has FoundationNetworking remove the
// socket's sources (CURL_POLL_REMOVE, the way libcurl itself does before it watches a socket
// again) and then watch it for what libcurl asks now, with no sources yet (a null socket
// pointer, so that FoundationNetworking makes and assigns new ones). FoundationNetworking's own
// care for a socket whose sources are being cancelled (its postponed creation) covers the pair.
// A read source left behind is kept: a socket is rarely readable while libcurl does not read it,
// and replacing the sources costs a few system calls, so only the direction that always fires
// is worth them (once a request, when it is sent).
// Every other call goes on unchanged.
//
// The trampoline is installed where FoundationNetworking sets the callback
// (CFURLSession_multi_setopt_sf), taken over as curl_host.c's host check is: first in symbol
// lookup when linked dynamically; through --wrap when linked statically.

#include <dlfcn.h>
#include "CLinuxShims.h"

enum {
    POLL_NONE = 0,
    POLL_OUT = 2,
    POLL_DIRECTIONS = 3, // CURL_POLL_IN | CURL_POLL_OUT
    POLL_REMOVE = 4,
    CURLMOPT_SOCKETFUNCTION_OPTION = 20001,
    CURLM_INTERNAL_ERROR_CODE = 4,
    // Sockets with a descriptor past this go on unchanged.
    WATCHED_SOCKETS = 65536,
};

// FoundationNetworking's callback: the same function for every multi handle.
static clinuxshims_socket_callback original;
// The directions each socket is watched for, as libcurl last asked.
static unsigned char watching[WATCHED_SOCKETS];

int clinuxshims_socket_calls(int before, int what, int calls[2]) {
    int dropped = what != POLL_NONE && what != POLL_REMOVE && (before & POLL_OUT) != 0 && (what & POLL_OUT) == 0;
    if (dropped) calls[0] = POLL_REMOVE;
    calls[dropped] = what;
    return dropped + 1;
}

static int trampoline(void *easy, int socket, int what, void *userp, void *socketp) {
    clinuxshims_socket_callback forward = __atomic_load_n(&original, __ATOMIC_ACQUIRE);
    if (!forward) return -1;
    if (socket < 0 || socket >= WATCHED_SOCKETS) return forward(easy, socket, what, userp, socketp);
    int before = __atomic_load_n(&watching[socket], __ATOMIC_RELAXED);
    if (what != POLL_NONE) __atomic_store_n(&watching[socket], (unsigned char)(what & POLL_DIRECTIONS), __ATOMIC_RELAXED);
    int calls[2];
    // Without sources (no socket pointer) there is nothing to remove.
    if (clinuxshims_socket_calls(before, what, calls) == 1 || !socketp) return forward(easy, socket, what, userp, socketp);
    int removed = forward(easy, socket, calls[0], userp, socketp);
    if (removed != 0) return removed;
    return forward(easy, socket, calls[1], userp, NULL);
}

static CFURLSessionMultiCode set_socket_callback(void *multi, CFURLSessionOption option, clinuxshims_socket_callback function) {
    int (*setopt)(void *, int, ...) = (int (*)(void *, int, ...))dlsym(RTLD_DEFAULT, "curl_multi_setopt");
    if (!setopt) return (CFURLSessionMultiCode){CURLM_INTERNAL_ERROR_CODE};
    if (option.value == CURLMOPT_SOCKETFUNCTION_OPTION && function) {
        clinuxshims_socket_callback expected = NULL;
        // Another callback than the first one set goes in unchanged: the trampoline serves one.
        if (__atomic_compare_exchange_n(&original, &expected, function, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) || expected == function) {
            return (CFURLSessionMultiCode){setopt(multi, option.value, trampoline)};
        }
    }
    return (CFURLSessionMultiCode){setopt(multi, option.value, function)};
}

__attribute__((weak, visibility("default"))) CFURLSessionMultiCode CFURLSession_multi_setopt_sf(
    void *multi, CFURLSessionOption option, clinuxshims_socket_callback function) {
    return set_socket_callback(multi, option, function);
}

__attribute__((visibility("default"))) CFURLSessionMultiCode __wrap_CFURLSession_multi_setopt_sf(
    void *multi, CFURLSessionOption option, clinuxshims_socket_callback function) {
    return set_socket_callback(multi, option, function);
}
