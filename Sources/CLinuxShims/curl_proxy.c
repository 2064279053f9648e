// The proxies of the configuration (http_proxy, https_proxy, no_proxy keys). FoundationNetworking
// has no proxy setting on Linux (libcurl reads only the daemon's environment, which a systemd
// service does not inherit from a shell), so the proxy is given to libcurl here: each time
// FoundationNetworking sets a request's URL on an easy handle (CFURLSession_easy_setopt_ptr with
// CURLOPT_URL, also for each redirect), the configured proxy for its scheme is set with it. A key
// left empty leaves libcurl to the environment, as before.
//
// It takes the place of FoundationNetworking's setter as curl_host.c's host check does: first in
// symbol lookup when linked dynamically; through --wrap when linked statically.

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "CLinuxShims.h"

enum {
    CURLOPT_URL_OPTION = 10002,
    CURLOPT_PROXY_OPTION = 10004,
    CURLOPT_NOPROXY_OPTION = 10177,
    CURLE_FAILED_INIT_CODE = 2,
};

static pthread_mutex_t proxies_lock = PTHREAD_MUTEX_INITIALIZER;
static char *http_proxy;
static char *https_proxy;
static char *no_proxy;

static void replace(char **slot, const char *value) {
    free(*slot);
    *slot = value && *value ? strdup(value) : NULL;
}

void clinuxshims_set_proxies(const char *http, const char *https, const char *none) {
    pthread_mutex_lock(&proxies_lock);
    replace(&http_proxy, http);
    replace(&https_proxy, https);
    replace(&no_proxy, none);
    pthread_mutex_unlock(&proxies_lock);
}

static CFURLSessionEasyCode set_ptr(void *handle, CFURLSessionOption option, void *value) {
    int (*setopt)(void *, int, ...) = (int (*)(void *, int, ...))dlsym(RTLD_DEFAULT, "curl_easy_setopt");
    if (!setopt) return (CFURLSessionEasyCode){CURLE_FAILED_INIT_CODE};
    int code = setopt(handle, option.value, value);
    if (code != 0 || option.value != CURLOPT_URL_OPTION || !value) return (CFURLSessionEasyCode){code};
    const char *url = value;
    pthread_mutex_lock(&proxies_lock);
    // libcurl copies string options: the configured strings may change after this.
    const char *proxy = strncmp(url, "https:", 6) == 0 ? https_proxy : strncmp(url, "http:", 5) == 0 ? http_proxy : NULL;
    if (proxy) {
        code = setopt(handle, CURLOPT_PROXY_OPTION, proxy);
        if (code == 0) code = setopt(handle, CURLOPT_NOPROXY_OPTION, no_proxy ? no_proxy : "");
    }
    pthread_mutex_unlock(&proxies_lock);
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
