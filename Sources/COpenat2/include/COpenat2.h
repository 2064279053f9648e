#ifndef COPENAT2_H
#define COPENAT2_H

/// Opens `path` relative to `dirfd` with openat2(2), resolving it strictly beneath `dirfd` and
/// refusing every symbolic link on the way (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
/// RESOLVE_NO_MAGICLINKS). Returns the descriptor, or -1 with errno set; errno is ENOSYS when the
/// kernel or the headers lack openat2. A C shim because Swift cannot call the variadic syscall(2).
int copenat2_beneath(int dirfd, const char *path, int flags);

/// O_PATH, which Swift's Glibc module does not export (it needs _GNU_SOURCE).
int copenat2_o_path(void);

#endif
