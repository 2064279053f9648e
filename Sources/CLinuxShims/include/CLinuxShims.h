#ifndef CLINUXSHIMS_H
#define CLINUXSHIMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// malloc_trim(3): returns free heap memory to the kernel. Swift's Glibc module does not export
/// <malloc.h>.
int clinuxshims_malloc_trim(size_t pad);

/// mallopt(M_ARENA_MAX, arenas): at most this many malloc arenas. glibc otherwise makes up to
/// eight per core, one per thread that allocates, each keeping the memory freed in it.
int clinuxshims_limit_malloc_arenas(int arenas);

/// mallopt(M_MMAP_THRESHOLD, M_TRIM_THRESHOLD, M_TOP_PAD): allocations below `mmapThreshold` come
/// from the heap, and up to `trimThreshold` (keeping `topPad`) of free heap stays mapped instead of
/// going back to the kernel at each free. Returns 1 when all three were set.
int clinuxshims_keep_heap_blocks(int mmapThreshold, int trimThreshold, int topPad);

/// Whether libcurl reads `expectedHost` as the host of `url`, an IPv6 literal's brackets aside.
/// Takes the place of FoundationNetworking's check of the same name (see curl_host.c).
bool CFURLSessionCurlHostIsEqual(const char *url, const char *expectedHost);

/// FoundationNetworking's result of a libcurl easy call (its CFURLSessionEasyCode).
typedef struct CFURLSessionEasyCode {
    int value;
} CFURLSessionEasyCode;

/// Pauses or unpauses sending and receiving on a libcurl easy handle; a handle whose transfer has
/// ended is left as it is without an error. Takes the place of FoundationNetworking's call of the
/// same name (see curl_pause.c).
CFURLSessionEasyCode CFURLSessionEasyHandleSetPauseState(void *handle, int send, int receive);

/// A libcurl option's number, as FoundationNetworking passes it (its CFURLSessionOption).
typedef struct CFURLSessionOption {
    int value;
} CFURLSessionOption;

/// Sets a long option of a libcurl easy handle, keeping content decoding off: a body is kept as
/// the server sent it. Takes the place of FoundationNetworking's call of the same name (see
/// curl_decoding.c).
CFURLSessionEasyCode CFURLSession_easy_setopt_long(void *handle, CFURLSessionOption option, long value);

/// Sets a pointer option of a libcurl easy handle; with a request's URL, also the configured proxy
/// for its scheme and client certificate for its host; with its headers, the CA certificates to
/// trust and the length of a streamed body (the header X-Transferd-Body-Length, never sent). Takes
/// the place of FoundationNetworking's call of the same name (see curl_options.c).
CFURLSessionEasyCode CFURLSession_easy_setopt_ptr(void *handle, CFURLSessionOption option, void *value);

/// libcurl's write callback, as FoundationNetworking sets it.
typedef size_t (*clinuxshims_write_callback)(char *, size_t, size_t, void *);

/// Sets a callback option of a libcurl easy handle; a response body's write callback is put behind
/// a trampoline that hands what one socket read brings on in blocks of up to 256 KiB. Takes the place of
/// FoundationNetworking's call of the same name (see curl_coalesce.c).
CFURLSessionEasyCode CFURLSession_easy_setopt_wc(void *handle, CFURLSessionOption option, clinuxshims_write_callback function);

/// FoundationNetworking's result of a libcurl multi call (its CFURLSessionMultiCode).
typedef struct CFURLSessionMultiCode {
    int value;
} CFURLSessionMultiCode;

/// Lets libcurl act on a socket of a multi handle; the body bytes its writes gathered meanwhile are
/// handed on before it returns (see curl_coalesce.c).
CFURLSessionMultiCode CFURLSessionMultiHandleAction(void *multi, int socket, int bitmask, int *running);

/// libcurl's socket callback (CURLMOPT_SOCKETFUNCTION), as FoundationNetworking sets it.
typedef int (*clinuxshims_socket_callback)(void *, int, int, void *, void *);

/// Sets a callback option of a libcurl multi handle; the socket callback is put behind a
/// trampoline that has FoundationNetworking stop watching a socket for writing once libcurl no
/// longer asks for it. Takes the place of FoundationNetworking's call of the same name (see
/// curl_sockets.c).
CFURLSessionMultiCode CFURLSession_multi_setopt_sf(void *multi, CFURLSessionOption option, clinuxshims_socket_callback function);

/// The socket callbacks FoundationNetworking gets when libcurl asks for `what` (a CURL_POLL value)
/// on a socket it last asked `before` for: `what` alone, or CURL_POLL_REMOVE first when `what`
/// stops watching it for writing (see curl_sockets.c). Fills `calls` and returns their count.
int clinuxshims_socket_calls(int before, int what, int calls[2]);

/// FoundationNetworking's report of a finished transfer (its CFURLSessionMultiHandleInfo).
typedef struct CFURLSessionMultiHandleInfo {
    void *easyHandle;
    CFURLSessionEasyCode resultCode;
} CFURLSessionMultiHandleInfo;

/// Reads the next finished transfer of a libcurl multi handle, after handing on the body bytes
/// the trampoline still holds for it (see curl_coalesce.c).
CFURLSessionMultiHandleInfo CFURLSessionMultiHandleInfoRead(void *multi, int *queued);

/// Frees a libcurl easy handle and what the trampoline kept for it (see curl_coalesce.c).
void CFURLSessionEasyHandleDeinit(void *handle);

/// The write callback's user data libcurl is to get for `handle`, standing for FoundationNetworking's
/// `userdata` (see curl_coalesce.c).
void *clinuxshims_coalescing_userdata(void *handle, void *userdata);

/// A new request on `handle`: what the trampoline held of an earlier one is dropped.
void clinuxshims_coalescing_reset(void *handle);

/// The proxies for http and https URLs and the hosts reached without one (libcurl's NOPROXY list);
/// NULL or "" leaves that one to libcurl's reading of the environment.
void clinuxshims_set_proxies(const char *http, const char *https, const char *none);

/// The CA certificates every request trusts (PEM, `length` bytes; NULL: libcurl's default), and the
/// client certificates, as lines of "host<TAB>certificate file<TAB>key file" (NULL: none).
void clinuxshims_set_trust(const char *pem, size_t length, const char *client_certificates);

/// The CA certificates a job trusts besides those (PEM; NULL: none any more), for the requests that
/// carry the header `X-Transferd-Trust: token`. Returns 0 when it could not be stored.
int clinuxshims_set_job_trust(const char *token, const char *pem, size_t length);

/// CRC-32C of `count` bytes, continuing `crc` (0 to start); uses the processor's instruction where
/// there is one (see crc32c.c).
uint32_t clinuxshims_crc32c(uint32_t crc, const void *bytes, size_t count);

/// copy_file_range(2) with explicit offsets (a reflink where the filesystem can), which Swift's
/// Glibc module does not export.
long long clinuxshims_copy_file_range(int in, long long *inOffset, int out, long long *outOffset, size_t length);

/// sync_file_range(2) with SYNC_FILE_RANGE_WRITE: starts writing `length` bytes at `offset` of
/// `fd` to the disk without waiting for them to reach it (it may block while the device's queue is
/// full), so that a later fsync(2) has less left to wait for. Durability still needs the fsync.
/// Swift's Glibc module does not export it.
int clinuxshims_start_writeback(int fd, long long offset, long long length);

/// fgetxattr(2) and fsetxattr(2), which Swift's Glibc module does not reach: the validators a
/// conditional download leaves on its file.
long clinuxshims_fgetxattr(int fd, const char *name, void *value, size_t size);
int clinuxshims_fsetxattr(int fd, const char *name, const void *value, size_t size);

#endif
