// libcurl hands a response body to its write callback at most CURL_MAX_WRITE_SIZE (16 KiB) at a
// time, whatever its receive buffer, and FoundationNetworking turns every call into a `Data`, an
// operation on the session's delegate queue and a new timer: for a fast download that is most of
// the daemon's CPU. This file puts a trampoline between libcurl and FoundationNetworking's write
// callback that gathers what one socket read brings (up to 256 KiB, curl_decoding.c's receive
// buffer) and hands it on in blocks of up to COALESCE_BYTES:
//
// - the writes that come while FoundationNetworking has libcurl act on a socket
//   (CFURLSessionMultiHandleAction) are gathered, and what is left of them is handed on before
//   that call returns: no byte waits for the next read, however long the server pauses;
// - a write outside such a call goes on at once;
// - libcurl's report of a transfer's end (CFURLSessionMultiHandleInfoRead) hands on whatever is
//   still there first, so every byte reaches the delegate before the task ends;
// - a new request on the handle (its URL set again) drops what a cancelled one left; the block goes
//   when the transfer ends, and the rest when the handle does (CFURLSessionEasyHandleDeinit).
//
// Every byte still goes through the one URLSession: this only changes how many at a time. The
// trampoline is installed where FoundationNetworking sets the write callback and its user data
// (CFURLSession_easy_setopt_wc and _ptr), and the calls are taken over as curl_host.c's host check
// is: first in symbol lookup when linked dynamically; through --wrap when linked statically.
// libcurl's functions are looked up at run time: FoundationNetworking has already loaded libcurl.

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "CLinuxShims.h"

enum {
    CURLOPT_WRITEDATA_OPTION = 10001,
    CURLOPT_WRITEFUNCTION_OPTION = 20011,
    CURLE_FAILED_INIT_CODE = 2,
    CURLM_INTERNAL_ERROR_CODE = 4,
    CURLMSG_DONE_VALUE = 1,
    COALESCE_BYTES = 256 * 1024,
    BUCKETS = 1024,
};

typedef clinuxshims_write_callback write_callback;

struct coalescer {
    void *handle;
    void *userdata;          // FoundationNetworking's, handed to `original`
    write_callback original; // FoundationNetworking's write callback
    char *block;             // COALESCE_BYTES, while bytes are gathered
    size_t used;
    int gathering;           // on this thread's `gathered` list
    struct coalescer *next;  // in its bucket
    struct coalescer *next_gathered;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct coalescer *buckets[BUCKETS];
// The calls on this thread's stack that let libcurl act on a socket, and the coalescers that
// gathered bytes meanwhile. A multi handle is driven on one thread at a time.
static __thread int acting;
static __thread struct coalescer *gathered;

// libcurl's function `name`, looked up once: the socket and message calls come for every read.
static void *curl_function(void **cache, const char *name) {
    void *function = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (!function) {
        function = dlsym(RTLD_DEFAULT, name);
        __atomic_store_n(cache, function, __ATOMIC_RELEASE);
    }
    return function;
}

static size_t bucket_of(void *handle) { return ((size_t)handle >> 4) % BUCKETS; }

// Under `lock`: the handle's coalescer; made when `make` and there is none (NULL when it cannot be).
static struct coalescer *find(void *handle, int make) {
    for (struct coalescer *c = buckets[bucket_of(handle)]; c; c = c->next) {
        if (c->handle == handle) return c;
    }
    if (!make) return NULL;
    struct coalescer *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->handle = handle;
    c->next = buckets[bucket_of(handle)];
    buckets[bucket_of(handle)] = c;
    return c;
}

// Hands what is gathered to FoundationNetworking; returns whether it took all of it.
static int hand_on(struct coalescer *c) {
    size_t used = c->used;
    c->used = 0;
    if (used == 0) return 1;
    return c->original(c->block, 1, used, c->userdata) == used;
}

static size_t trampoline(char *bytes, size_t size, size_t count, void *userdata) {
    struct coalescer *c = userdata;
    size_t length = size * count;
    if (!c->original) return 0;
    if (c->used + length > COALESCE_BYTES && !hand_on(c)) return 0;
    if (!acting || length >= COALESCE_BYTES) return c->original(bytes, size, count, c->userdata);
    if (!c->block) c->block = malloc(COALESCE_BYTES);
    // Without a block, the bytes go on as they came.
    if (!c->block) return c->original(bytes, size, count, c->userdata);
    memcpy(c->block + c->used, bytes, length);
    c->used += length;
    if (!c->gathering) {
        c->gathering = 1;
        c->next_gathered = gathered;
        gathered = c;
    }
    if (c->used == COALESCE_BYTES && !hand_on(c)) return 0;
    return length;
}

// The user data libcurl is to pass the write callback for `handle`: its coalescer, which passes
// FoundationNetworking's `userdata` on.
void *clinuxshims_coalescing_userdata(void *handle, void *userdata) {
    pthread_mutex_lock(&lock);
    struct coalescer *c = find(handle, 1);
    if (c) c->userdata = userdata;
    pthread_mutex_unlock(&lock);
    return c ? (void *)c : userdata;
}

// A new request on `handle`: bytes a cancelled one left are not its.
void clinuxshims_coalescing_reset(void *handle) {
    pthread_mutex_lock(&lock);
    struct coalescer *c = find(handle, 0);
    if (c) c->used = 0;
    pthread_mutex_unlock(&lock);
}

static CFURLSessionEasyCode set_write_callback(void *handle, CFURLSessionOption option, write_callback function) {
    int (*setopt)(void *, int, ...) = (int (*)(void *, int, ...))dlsym(RTLD_DEFAULT, "curl_easy_setopt");
    if (!setopt) return (CFURLSessionEasyCode){CURLE_FAILED_INIT_CODE};
    if (option.value == CURLOPT_WRITEFUNCTION_OPTION) {
        pthread_mutex_lock(&lock);
        struct coalescer *c = find(handle, 1);
        if (c) c->original = function;
        pthread_mutex_unlock(&lock);
        if (c) {
            // Its user data is set (again) with the coalescer, whichever of the two came first.
            int code = setopt(handle, CURLOPT_WRITEDATA_OPTION, (void *)c);
            if (code != 0) return (CFURLSessionEasyCode){code};
            return (CFURLSessionEasyCode){setopt(handle, option.value, trampoline)};
        }
    }
    return (CFURLSessionEasyCode){setopt(handle, option.value, function)};
}

__attribute__((weak, visibility("default"))) CFURLSessionEasyCode CFURLSession_easy_setopt_wc(
    void *handle, CFURLSessionOption option, write_callback function) {
    return set_write_callback(handle, option, function);
}

__attribute__((visibility("default"))) CFURLSessionEasyCode __wrap_CFURLSession_easy_setopt_wc(
    void *handle, CFURLSessionOption option, write_callback function) {
    return set_write_callback(handle, option, function);
}

static CFURLSessionMultiCode act(void *multi, int socket, int bitmask, int *running) {
    static void *cache;
    int (*socket_action)(void *, int, int, int *) = (int (*)(void *, int, int, int *))curl_function(&cache, "curl_multi_socket_action");
    if (!socket_action) return (CFURLSessionMultiCode){CURLM_INTERNAL_ERROR_CODE};
    acting++;
    int code = socket_action(multi, socket, bitmask, running);
    acting--;
    if (acting == 0) {
        // What the writes of this call left goes on now: none waits for the next read.
        while (gathered) {
            struct coalescer *c = gathered;
            gathered = c->next_gathered;
            c->gathering = 0;
            (void)hand_on(c);
        }
    }
    return (CFURLSessionMultiCode){code};
}

__attribute__((weak, visibility("default"))) CFURLSessionMultiCode CFURLSessionMultiHandleAction(
    void *multi, int socket, int bitmask, int *running) {
    return act(multi, socket, bitmask, running);
}

__attribute__((visibility("default"))) CFURLSessionMultiCode __wrap_CFURLSessionMultiHandleAction(
    void *multi, int socket, int bitmask, int *running) {
    return act(multi, socket, bitmask, running);
}

struct curl_message {
    int msg;
    void *easy_handle;
    union {
        void *whatever;
        int result;
    } data;
};

static CFURLSessionMultiHandleInfo read_info(void *multi, int *queued) {
    CFURLSessionMultiHandleInfo info = {0};
    static void *cache;
    struct curl_message *(*info_read)(void *, int *) = (struct curl_message * (*)(void *, int *))curl_function(&cache, "curl_multi_info_read");
    if (!info_read) return info;
    struct curl_message *message = info_read(multi, queued);
    if (!message || message->msg != CURLMSG_DONE_VALUE) return info;
    info.easyHandle = message->easy_handle;
    info.resultCode = (CFURLSessionEasyCode){message->data.result};
    // Every byte gathered reaches FoundationNetworking before it hears of the end.
    pthread_mutex_lock(&lock);
    struct coalescer *c = find(info.easyHandle, 0);
    pthread_mutex_unlock(&lock);
    if (c && c->original) {
        (void)hand_on(c);
        free(c->block);
        c->block = NULL;
    }
    return info;
}

__attribute__((weak, visibility("default"))) CFURLSessionMultiHandleInfo CFURLSessionMultiHandleInfoRead(void *multi, int *queued) {
    return read_info(multi, queued);
}

__attribute__((visibility("default"))) CFURLSessionMultiHandleInfo __wrap_CFURLSessionMultiHandleInfoRead(void *multi, int *queued) {
    return read_info(multi, queued);
}

static void cleanup(void *handle) {
    pthread_mutex_lock(&lock);
    struct coalescer **link = &buckets[bucket_of(handle)];
    while (*link && (*link)->handle != handle) link = &(*link)->next;
    struct coalescer *c = *link;
    if (c) *link = c->next;
    pthread_mutex_unlock(&lock);
    void (*easy_cleanup)(void *) = (void (*)(void *))dlsym(RTLD_DEFAULT, "curl_easy_cleanup");
    if (easy_cleanup) easy_cleanup(handle);
    if (c) {
        free(c->block);
        free(c);
    }
}

__attribute__((weak, visibility("default"))) void CFURLSessionEasyHandleDeinit(void *handle) { cleanup(handle); }

__attribute__((visibility("default"))) void __wrap_CFURLSessionEasyHandleDeinit(void *handle) { cleanup(handle); }
