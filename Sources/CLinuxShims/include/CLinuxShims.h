#ifndef CLINUXSHIMS_H
#define CLINUXSHIMS_H

#include <stdbool.h>
#include <stddef.h>

/// malloc_trim(3): returns free heap memory to the kernel. Swift's Glibc module does not export
/// <malloc.h>.
int clinuxshims_malloc_trim(size_t pad);

/// Whether libcurl reads `expectedHost` as the host of `url`, an IPv6 literal's brackets aside.
/// Takes the place of FoundationNetworking's check of the same name (see curl_host.c).
bool CFURLSessionCurlHostIsEqual(const char *url, const char *expectedHost);

/// copy_file_range(2) with explicit offsets (a reflink where the filesystem can), which Swift's
/// Glibc module does not export.
long long clinuxshims_copy_file_range(int in, long long *inOffset, int out, long long *outOffset, size_t length);

#endif
