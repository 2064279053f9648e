#define _GNU_SOURCE
#include <unistd.h>
#include "CLinuxShims.h"

long long clinuxshims_copy_file_range(int in, long long *inOffset, int out, long long *outOffset, size_t length) {
    off_t inAt = (off_t)*inOffset;
    off_t outAt = (off_t)*outOffset;
    ssize_t copied = copy_file_range(in, &inAt, out, &outAt, length, 0);
    *inOffset = (long long)inAt;
    *outOffset = (long long)outAt;
    return (long long)copied;
}
