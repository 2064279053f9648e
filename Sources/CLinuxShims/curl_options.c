// What FoundationNetworking has no setting for on Linux, given to libcurl when FoundationNetworking
// sets a request's options on an easy handle (CFURLSession_easy_setopt_ptr):
// - with the request's URL (CURLOPT_URL, also for each redirect): the configured proxy for its
//   scheme (http_proxy, https_proxy, no_proxy keys; an empty key leaves libcurl to the
//   environment), and the client certificate configured for its host (client_certificates);
// - with the request's headers (CURLOPT_HTTPHEADER): the CA certificates to trust (the system's
//   bundle and ca_file, read at start and reload; plus a job's own, named by the private header
//   X-Transferd-Trust, which is emptied here so that libcurl never sends it);
// - with the request's headers as well: the length of a body sent from a stream, named by the
//   private header X-Transferd-Body-Length. FoundationNetworking gives libcurl the length -1
//   (unknown) for a stream, and libcurl then sends the body chunked, which S3-style servers refuse.
//   FoundationNetworking sets the length (CURLOPT_INFILESIZE_LARGE) before the headers, so the one
//   set here stands: libcurl sends `Content-Length: N` and a plain body of N bytes. The marker
//   becomes "Expect:", which keeps libcurl from sending `Expect: 100-continue` and waiting for an
//   answer to it, as FoundationNetworking does itself for a body whose length it knows; and
//   libcurl's upload buffer becomes 1 MiB, so that the stream is read in large pieces.
//
// It takes the place of FoundationNetworking's setter as curl_host.c's host check does: first in
// symbol lookup when linked dynamically; through --wrap when linked statically. libcurl copies
// every string and blob option, so the configured values may change after each call.

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "CLinuxShims.h"

enum {
    CURLOPT_WRITEDATA_OPTION = 10001,
    CURLOPT_URL_OPTION = 10002,
    CURLOPT_PROXY_OPTION = 10004,
    CURLOPT_HTTPHEADER_OPTION = 10023,
    CURLOPT_SSLCERT_OPTION = 10025,
    CURLOPT_SSLKEY_OPTION = 10087,
    CURLOPT_NOPROXY_OPTION = 10177,
    CURLOPT_CAINFO_BLOB_OPTION = 40309,
    CURLOPT_INFILESIZE_LARGE_OPTION = 30115,
    CURLOPT_UPLOAD_BUFFERSIZE_OPTION = 280,
    STREAMED_BODY_BUFFER_BYTES = 1 << 20,
    CURLE_FAILED_INIT_CODE = 2,
    CURLE_OUT_OF_MEMORY_CODE = 27,
    CURL_BLOB_COPY_FLAG = 1,
    MAX_JOB_TRUSTS = 4096,
};

struct curl_slist_node {
    char *data;
    struct curl_slist_node *next;
};

struct curl_blob_value {
    void *data;
    size_t len;
    unsigned int flags;
};

typedef int (*setopt_function)(void *, int, ...);
// libcurl's curl_off_t: a 64-bit signed integer on every platform FoundationNetworking runs on.
typedef int64_t curl_off_value;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *http_proxy;
static char *https_proxy;
static char *no_proxy;
static char *trusted;        // PEM: the system's bundle and ca_file; NULL: libcurl's default
static size_t trusted_length;
static char *certificates;   // "host\tcertificate\tkey\n" lines
static struct {
    char token[64];
    char *pem;
    size_t length;
} jobs[MAX_JOB_TRUSTS];

static char *copy(const char *value) { return value && *value ? strdup(value) : NULL; }

void clinuxshims_set_proxies(const char *http, const char *https, const char *none) {
    pthread_mutex_lock(&lock);
    free(http_proxy);
    free(https_proxy);
    free(no_proxy);
    http_proxy = copy(http);
    https_proxy = copy(https);
    no_proxy = copy(none);
    pthread_mutex_unlock(&lock);
}

void clinuxshims_set_trust(const char *pem, size_t length, const char *client_certificates) {
    char *bundle = NULL;
    if (pem && length) {
        bundle = malloc(length);
        if (bundle) memcpy(bundle, pem, length);
    }
    pthread_mutex_lock(&lock);
    free(trusted);
    trusted = bundle;
    trusted_length = bundle ? length : 0;
    free(certificates);
    certificates = copy(client_certificates);
    pthread_mutex_unlock(&lock);
}

int clinuxshims_set_job_trust(const char *token, const char *pem, size_t length) {
    if (!token || strlen(token) >= sizeof jobs[0].token) return 0;
    pthread_mutex_lock(&lock);
    int slot = -1;
    for (int i = 0; i < MAX_JOB_TRUSTS; i++) {
        if (jobs[i].pem && strcmp(jobs[i].token, token) == 0) { slot = i; break; }
        if (!jobs[i].pem && slot < 0) slot = i;
    }
    int stored = 0;
    if (slot >= 0) {
        free(jobs[slot].pem);
        jobs[slot].pem = NULL;
        if (pem && length) {
            jobs[slot].pem = malloc(length);
            if (jobs[slot].pem) {
                memcpy(jobs[slot].pem, pem, length);
                jobs[slot].length = length;
                strcpy(jobs[slot].token, token);
                stored = 1;
            }
        }
    }
    pthread_mutex_unlock(&lock);
    return stored;
}

static const char marker[] = "X-Transferd-Trust:";

// Under `lock`: the trust for a request whose headers are `list`, blanking the marker header
// (`plain`: the request is http, and needs none).
static int apply_trust(void *handle, struct curl_slist_node *list, setopt_function setopt, int plain) {
    const char *job_pem = NULL;
    size_t job_length = 0;
    for (struct curl_slist_node *node = list; node; node = node->next) {
        if (!node->data || strncasecmp(node->data, marker, sizeof marker - 1) != 0) continue;
        const char *token = node->data + sizeof marker - 1;
        while (*token == ' ') token++;
        for (int i = 0; i < MAX_JOB_TRUSTS; i++) {
            if (jobs[i].pem && strcmp(jobs[i].token, token) == 0) {
                job_pem = jobs[i].pem;
                job_length = jobs[i].length;
                break;
            }
        }
        // "Name:" with nothing after it: libcurl sends no such header.
        node->data[sizeof marker - 1] = 0;
    }
    if (plain) return 0;
    if (!job_pem) {
        if (!trusted) return 0;
        struct curl_blob_value blob = {trusted, trusted_length, CURL_BLOB_COPY_FLAG};
        return setopt(handle, CURLOPT_CAINFO_BLOB_OPTION, &blob);
    }
    char *both = malloc(trusted_length + job_length + 1);
    if (!both) return CURLE_OUT_OF_MEMORY_CODE;
    if (trusted) memcpy(both, trusted, trusted_length);
    both[trusted_length] = '\n';
    memcpy(both + trusted_length + 1, job_pem, job_length);
    struct curl_blob_value blob = {both, trusted_length + job_length + 1, CURL_BLOB_COPY_FLAG};
    int code = setopt(handle, CURLOPT_CAINFO_BLOB_OPTION, &blob);
    free(both);
    return code;
}

static const char length_marker[] = "X-Transferd-Body-Length:";
static const char no_expect[] = "Expect:";

// The body length a request's headers `list` name, set as the length libcurl sends; the marker
// header becomes "Expect:" (shorter, so it fits in place). No lock: nothing shared is read.
static int apply_body_length(void *handle, struct curl_slist_node *list, setopt_function setopt) {
    for (struct curl_slist_node *node = list; node; node = node->next) {
        if (!node->data || strncasecmp(node->data, length_marker, sizeof length_marker - 1) != 0) continue;
        const char *digits = node->data + sizeof length_marker - 1;
        while (*digits == ' ') digits++;
        char *end = NULL;
        errno = 0;
        long long length = strtoll(digits, &end, 10);
        int valid = end != digits && *end == 0 && errno == 0 && length >= 0;
        memcpy(node->data, no_expect, sizeof no_expect);
        // A marker that names no length leaves FoundationNetworking's as it was.
        if (!valid) return 0;
        int code = setopt(handle, CURLOPT_INFILESIZE_LARGE_OPTION, (curl_off_value)length);
        // libcurl asks the stream for this much at a time (64 KiB by default): fewer, larger reads,
        // each one a callback through FoundationNetworking, which allocates a buffer of this size
        // for each. Below the heap's mmap threshold (HeapPolicy), so that buffer is reused from the
        // heap instead of mapped and faulted in afresh every time. One per request.
        if (code == 0) code = setopt(handle, CURLOPT_UPLOAD_BUFFERSIZE_OPTION, (long)STREAMED_BODY_BUFFER_BYTES);
        return code;
    }
    return 0;
}

// The host of `url` as libcurl reads it, or 0 when it has none; `host` holds `size` bytes.
static int url_host(const char *url, char *host, size_t size) {
    const char *start = strstr(url, "://");
    if (!start) return 0;
    start += 3;
    const char *end = start + strcspn(start, "/?#");
    const char *at = memchr(start, '@', (size_t)(end - start));
    if (at) start = at + 1;
    const char *stop = start;
    if (*stop == '[') {
        const char *close = memchr(stop, ']', (size_t)(end - stop));
        if (!close) return 0;
        start++;
        stop = close;
    } else {
        stop = memchr(start, ':', (size_t)(end - start));
        if (!stop) stop = end;
    }
    size_t length = (size_t)(stop - start);
    if (length == 0 || length >= size) return 0;
    memcpy(host, start, length);
    host[length] = 0;
    return 1;
}

// Under `lock`: the proxy for the URL's scheme and the client certificate for its host.
static int apply_url(void *handle, const char *url, setopt_function setopt) {
    int code = 0;
    const char *proxy = strncasecmp(url, "https:", 6) == 0 ? https_proxy : strncasecmp(url, "http:", 5) == 0 ? http_proxy : NULL;
    if (proxy) {
        code = setopt(handle, CURLOPT_PROXY_OPTION, proxy);
        if (code == 0) code = setopt(handle, CURLOPT_NOPROXY_OPTION, no_proxy ? no_proxy : "");
    }
    if (code != 0 || !certificates) return code;
    char host[256];
    char *certificate = NULL;
    char *key = NULL;
    if (strncasecmp(url, "https:", 6) == 0 && url_host(url, host, sizeof host)) {
        // Lines of "host\tcertificate\tkey".
        for (char *line = certificates; *line;) {
            char *next = strchr(line, '\n');
            size_t line_length = next ? (size_t)(next - line) : strlen(line);
            char *tab = memchr(line, '\t', line_length);
            if (tab && (size_t)(tab - line) == strlen(host) && strncasecmp(line, host, strlen(host)) == 0) {
                char *second = memchr(tab + 1, '\t', line_length - (size_t)(tab + 1 - line));
                if (second) {
                    certificate = strndup(tab + 1, (size_t)(second - tab - 1));
                    key = strndup(second + 1, line_length - (size_t)(second + 1 - line));
                }
                break;
            }
            if (!next) break;
            line = next + 1;
        }
    }
    // Set or cleared at every URL: a redirect to another host presents nothing.
    code = setopt(handle, CURLOPT_SSLCERT_OPTION, certificate);
    if (code == 0) code = setopt(handle, CURLOPT_SSLKEY_OPTION, key);
    free(certificate);
    free(key);
    return code;
}

// The handle whose URL this thread set last, and whether that URL is https: FoundationNetworking
// sets a request's URL and then its headers on one thread, so a plain http request skips the CA
// bundle (a copy of some 200 KB libcurl would not read).
static __thread void *last_url_handle;
static __thread int last_url_is_plain;

static CFURLSessionEasyCode set_ptr(void *handle, CFURLSessionOption option, void *value) {
    setopt_function setopt = (setopt_function)dlsym(RTLD_DEFAULT, "curl_easy_setopt");
    if (!setopt) return (CFURLSessionEasyCode){CURLE_FAILED_INIT_CODE};
    // The write callback's user data goes through the trampoline of curl_coalesce.c; a new URL is a
    // new request, which owes nothing to what an earlier one left there.
    if (option.value == CURLOPT_WRITEDATA_OPTION) value = clinuxshims_coalescing_userdata(handle, value);
    if (option.value == CURLOPT_URL_OPTION) clinuxshims_coalescing_reset(handle);
    int code = setopt(handle, option.value, value);
    if (code != 0 || !value) return (CFURLSessionEasyCode){code};
    if (option.value == CURLOPT_URL_OPTION) {
        last_url_handle = handle;
        last_url_is_plain = strncasecmp(value, "http:", 5) == 0;
        pthread_mutex_lock(&lock);
        code = apply_url(handle, value, setopt);
        pthread_mutex_unlock(&lock);
    } else if (option.value == CURLOPT_HTTPHEADER_OPTION) {
        pthread_mutex_lock(&lock);
        code = apply_trust(handle, value, setopt, last_url_handle == handle && last_url_is_plain);
        pthread_mutex_unlock(&lock);
        if (code == 0) code = apply_body_length(handle, value, setopt);
    }
    return (CFURLSessionEasyCode){code};
}

__attribute__((weak, visibility("default"))) CFURLSessionEasyCode CFURLSession_easy_setopt_ptr(
    void *handle, CFURLSessionOption option, void *value) {
    return set_ptr(handle, option, value);
}

__attribute__((visibility("default"))) CFURLSessionEasyCode __wrap_CFURLSession_easy_setopt_ptr(
    void *handle, CFURLSessionOption option, void *value) {
    return set_ptr(handle, option, value);
}
