// An LD_PRELOAD library that makes one chosen file-system call fail, for the fault sweep
// (Tests/Faults/README.md). Only calls on files under the paths in FAULT_PATHS count.
//
//   FAULT_PATHS    colon-separated directories whose files count (the state and download directories)
//   FAULT_KIND     write | sync | rename | open | truncate: which kind of call fails
//   FAULT_AT       the Nth call of that kind fails (1-based); 0 or unset: none fails
//   FAULT_ERRNO    ENOSPC (default) | EIO | EDQUOT
//   FAULT_PERSIST  1: every later call of that kind fails too (a disk that stays full)
//   FAULT_COUNTS   a file that receives the number of calls of each kind, updated as they happen
//                  (it survives kill -9 and _exit: the counters are a shared mapping of it)
//
// write: write, pwrite, writev, copy_file_range; sync: fsync, fdatasync; rename: rename,
// renameat, renameat2, linkat; open: open, openat, creat (any mode); truncate: ftruncate, truncate.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

enum kind { K_WRITE, K_SYNC, K_RENAME, K_OPEN, K_TRUNCATE, K_COUNT };
static const char *kind_names[K_COUNT] = {"write", "sync", "rename", "open", "truncate"};

static char prefixes[16][PATH_MAX];
static int prefix_count;
static int fault_kind = -1;
static long fault_at;
static int fault_errno = ENOSPC;
static int fault_persist;
static long local_counts[K_COUNT];
static long *counts = local_counts;

// Per descriptor: 0 unknown, 1 under a prefix, 2 elsewhere. Reset on close.
#define FD_CACHE 65536
static unsigned char fd_class[FD_CACHE];

static int (*real_open)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_close)(int);

static void load(void) __attribute__((constructor));
static void load(void) {
    real_open = dlsym(RTLD_NEXT, "open");
    real_openat = dlsym(RTLD_NEXT, "openat");
    real_close = dlsym(RTLD_NEXT, "close");
    const char *paths = getenv("FAULT_PATHS");
    if (paths) {
        char copy[PATH_MAX * 4];
        snprintf(copy, sizeof copy, "%s", paths);
        for (char *save = NULL, *p = strtok_r(copy, ":", &save); p && prefix_count < 16; p = strtok_r(NULL, ":", &save)) {
            // The real path, since descriptors resolve to real paths.
            char resolved[PATH_MAX];
            snprintf(prefixes[prefix_count++], PATH_MAX, "%s", realpath(p, resolved) ? resolved : p);
        }
    }
    const char *kind = getenv("FAULT_KIND");
    for (int k = 0; kind && k < K_COUNT; k++) if (strcmp(kind, kind_names[k]) == 0) fault_kind = k;
    const char *at = getenv("FAULT_AT");
    fault_at = at ? atol(at) : 0;
    const char *code = getenv("FAULT_ERRNO");
    if (code && strcmp(code, "EIO") == 0) fault_errno = EIO;
    if (code && strcmp(code, "EDQUOT") == 0) fault_errno = EDQUOT;
    const char *persist = getenv("FAULT_PERSIST");
    fault_persist = persist && strcmp(persist, "1") == 0;
    const char *count_file = getenv("FAULT_COUNTS");
    if (count_file) {
        int fd = real_open(count_file, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd >= 0 && ftruncate(fd, sizeof(long) * K_COUNT) == 0) {
            void *shared = mmap(NULL, sizeof(long) * K_COUNT, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (shared != MAP_FAILED) counts = shared;
        }
        if (fd >= 0) real_close(fd);
    }
}

static int under_prefix(const char *path) {
    for (int i = 0; i < prefix_count; i++) {
        size_t n = strlen(prefixes[i]);
        if (strncmp(path, prefixes[i], n) == 0 && (path[n] == '/' || path[n] == 0)) return 1;
    }
    return 0;
}

static int fd_path(int fd, char *out) {
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, out, PATH_MAX - 1);
    if (n < 0) return 0;
    out[n] = 0;
    return 1;
}

static int fd_counts(int fd) {
    if (prefix_count == 0 || fd < 0) return 0;
    unsigned char known = fd < FD_CACHE ? __atomic_load_n(&fd_class[fd], __ATOMIC_RELAXED) : 0;
    if (known) return known == 1;
    char path[PATH_MAX];
    int inside = fd_path(fd, path) && under_prefix(path);
    if (fd < FD_CACHE) __atomic_store_n(&fd_class[fd], inside ? 1 : 2, __ATOMIC_RELAXED);
    return inside;
}

static int at_path_counts(int dirfd, const char *name) {
    if (prefix_count == 0 || !name) return 0;
    if (name[0] == '/') return under_prefix(name);
    char path[PATH_MAX];
    if (dirfd == AT_FDCWD) {
        if (!getcwd(path, sizeof path)) return 0;
    } else if (!fd_path(dirfd, path)) {
        return 0;
    }
    size_t n = strlen(path);
    snprintf(path + n, sizeof path - n, "/%s", name);
    return under_prefix(path);
}

// Counts a call of `kind` on a file that counts; returns nonzero when this one must fail.
static int should_fail(int kind, const char *what) {
    long n = __atomic_add_fetch(&counts[kind], 1, __ATOMIC_SEQ_CST);
    if (kind != fault_kind || fault_at <= 0) return 0;
    if (n == fault_at || (fault_persist && n > fault_at)) {
        if (n == fault_at) {
            char line[PATH_MAX + 128];
            int len = snprintf(line, sizeof line, "faultinject: failing %s #%ld (%s) with %s\n", kind_names[kind], n, what,
                fault_errno == EIO ? "EIO" : fault_errno == EDQUOT ? "EDQUOT" : "ENOSPC");
            if (len > 0) { ssize_t ignored = write(2, line, (size_t)len); (void)ignored; }
        }
        errno = fault_errno;
        return 1;
    }
    return 0;
}

static int fd_fault(int kind, int fd) {
    if (!fd_counts(fd)) return 0;
    char path[PATH_MAX];
    return should_fail(kind, fd_path(fd, path) ? path : "?");
}

#define REAL(name) static __typeof__(&name) real_##name; if (!real_##name) real_##name = (__typeof__(&name))dlsym(RTLD_NEXT, #name)

ssize_t write(int fd, const void *buffer, size_t count) {
    REAL(write);
    if (fd > 2 && fd_fault(K_WRITE, fd)) return -1;
    return real_write(fd, buffer, count);
}

ssize_t pwrite(int fd, const void *buffer, size_t count, off_t offset) {
    REAL(pwrite);
    if (fd_fault(K_WRITE, fd)) return -1;
    return real_pwrite(fd, buffer, count, offset);
}

ssize_t pwrite64(int fd, const void *buffer, size_t count, off_t offset) {
    REAL(pwrite64);
    if (fd_fault(K_WRITE, fd)) return -1;
    return real_pwrite64(fd, buffer, count, offset);
}

ssize_t writev(int fd, const struct iovec *vector, int count) {
    REAL(writev);
    if (fd > 2 && fd_fault(K_WRITE, fd)) return -1;
    return real_writev(fd, vector, count);
}

ssize_t copy_file_range(int in, off_t *in_offset, int out, off_t *out_offset, size_t length, unsigned int flags) {
    REAL(copy_file_range);
    if (fd_fault(K_WRITE, out)) return -1;
    return real_copy_file_range(in, in_offset, out, out_offset, length, flags);
}

int fsync(int fd) {
    REAL(fsync);
    if (fd_fault(K_SYNC, fd)) return -1;
    return real_fsync(fd);
}

int fdatasync(int fd) {
    REAL(fdatasync);
    if (fd_fault(K_SYNC, fd)) return -1;
    return real_fdatasync(fd);
}

int ftruncate(int fd, off_t length) {
    REAL(ftruncate);
    if (fd_fault(K_TRUNCATE, fd)) return -1;
    return real_ftruncate(fd, length);
}

int ftruncate64(int fd, off_t length) {
    REAL(ftruncate64);
    if (fd_fault(K_TRUNCATE, fd)) return -1;
    return real_ftruncate64(fd, length);
}

int truncate(const char *path, off_t length) {
    REAL(truncate);
    if (at_path_counts(AT_FDCWD, path) && should_fail(K_TRUNCATE, path)) return -1;
    return real_truncate(path, length);
}

int rename(const char *from, const char *to) {
    REAL(rename);
    if (at_path_counts(AT_FDCWD, to) && should_fail(K_RENAME, to)) return -1;
    return real_rename(from, to);
}

int renameat(int fromfd, const char *from, int tofd, const char *to) {
    REAL(renameat);
    if (at_path_counts(tofd, to) && should_fail(K_RENAME, to)) return -1;
    return real_renameat(fromfd, from, tofd, to);
}

int renameat2(int fromfd, const char *from, int tofd, const char *to, unsigned int flags) {
    REAL(renameat2);
    if (at_path_counts(tofd, to) && should_fail(K_RENAME, to)) return -1;
    return real_renameat2(fromfd, from, tofd, to, flags);
}

int linkat(int fromfd, const char *from, int tofd, const char *to, int flags) {
    REAL(linkat);
    if (at_path_counts(tofd, to) && should_fail(K_RENAME, to)) return -1;
    return real_linkat(fromfd, from, tofd, to, flags);
}

static mode_t mode_argument(int flags, va_list arguments) {
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(arguments, mode_t) : 0;
}

static int opened(int fd) {
    if (fd >= 0 && fd < FD_CACHE) __atomic_store_n(&fd_class[fd], 0, __ATOMIC_RELAXED);
    return fd;
}

int open(const char *path, int flags, ...) {
    va_list arguments;
    va_start(arguments, flags);
    mode_t mode = mode_argument(flags, arguments);
    va_end(arguments);
    if (!real_open) real_open = dlsym(RTLD_NEXT, "open");
    if (at_path_counts(AT_FDCWD, path) && should_fail(K_OPEN, path)) return -1;
    return opened(real_open(path, flags, mode));
}

int open64(const char *path, int flags, ...) {
    va_list arguments;
    va_start(arguments, flags);
    mode_t mode = mode_argument(flags, arguments);
    va_end(arguments);
    return open(path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...) {
    va_list arguments;
    va_start(arguments, flags);
    mode_t mode = mode_argument(flags, arguments);
    va_end(arguments);
    if (!real_openat) real_openat = dlsym(RTLD_NEXT, "openat");
    if (at_path_counts(dirfd, path) && should_fail(K_OPEN, path)) return -1;
    return opened(real_openat(dirfd, path, flags, mode));
}

int openat64(int dirfd, const char *path, int flags, ...) {
    va_list arguments;
    va_start(arguments, flags);
    mode_t mode = mode_argument(flags, arguments);
    va_end(arguments);
    return openat(dirfd, path, flags, mode);
}

int creat(const char *path, mode_t mode) { return open(path, O_CREAT | O_WRONLY | O_TRUNC, mode); }

int close(int fd) {
    if (!real_close) real_close = dlsym(RTLD_NEXT, "close");
    if (fd >= 0 && fd < FD_CACHE) __atomic_store_n(&fd_class[fd], 0, __ATOMIC_RELAXED);
    return real_close(fd);
}
