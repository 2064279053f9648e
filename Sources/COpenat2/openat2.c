#define _GNU_SOURCE
#include "COpenat2.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(SYS_openat2) && __has_include(<linux/openat2.h>)
#include <linux/openat2.h>

int copenat2_beneath(int dirfd, const char *path, int flags) {
    struct open_how how = {
        .flags = (unsigned long long)(unsigned int)flags,
        .mode = 0,
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
}
#else
int copenat2_beneath(int dirfd, const char *path, int flags) {
    (void)dirfd;
    (void)path;
    (void)flags;
    errno = ENOSYS;
    return -1;
}
#endif

int copenat2_o_path(void) { return O_PATH; }
