#ifndef CDESCRIPTORPASSING_H
#define CDESCRIPTORPASSING_H

#include <stddef.h>
#include <sys/types.h>

/// Sends `length` bytes of `bytes` on the Unix socket `socket` with the descriptor `descriptor`
/// attached (SCM_RIGHTS). Returns the bytes sent, or -1 with errno set. The CMSG_* macros that
/// build the ancillary data cannot be used from Swift.
ssize_t cdescriptorpassing_send(int socket, const void *bytes, size_t length, int descriptor);

/// Receives up to `length` bytes from the Unix socket `socket` and at most one descriptor sent
/// with them, stored in `*descriptor` (-1 when none came). Descriptors beyond the first are
/// closed. The received descriptor is close-on-exec. Returns the bytes read, or -1 with errno set.
ssize_t cdescriptorpassing_receive(int socket, void *bytes, size_t length, int *descriptor);

/// A new close-on-exec Unix stream socket, or -1 with errno set.
int cdescriptorpassing_socket(void);

/// accept4(2) with SOCK_CLOEXEC, retrying EINTR: a connection, or -1 with errno set.
int cdescriptorpassing_accept(int socket);

#endif
