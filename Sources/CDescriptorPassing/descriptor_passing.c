// SCM_RIGHTS over Unix sockets, for handing an upload's open file to the daemon.

#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include "CDescriptorPassing.h"

ssize_t cdescriptorpassing_send(int socket, const void *bytes, size_t length, int descriptor) {
    struct iovec vector = {.iov_base = (void *)bytes, .iov_len = length};
    union {
        char buffer[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof(control));
    struct msghdr message = {0};
    message.msg_iov = &vector;
    message.msg_iovlen = 1;
    message.msg_control = control.buffer;
    message.msg_controllen = sizeof(control.buffer);
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(header), &descriptor, sizeof(int));
    ssize_t sent;
    do {
        sent = sendmsg(socket, &message, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    return sent;
}

ssize_t cdescriptorpassing_receive(int socket, void *bytes, size_t length, int *descriptor) {
    *descriptor = -1;
    struct iovec vector = {.iov_base = bytes, .iov_len = length};
    // Room for a few descriptors, so that extra ones are received (and closed) rather than
    // truncated away unseen.
    union {
        char buffer[CMSG_SPACE(8 * sizeof(int))];
        struct cmsghdr align;
    } control;
    struct msghdr message = {0};
    message.msg_iov = &vector;
    message.msg_iovlen = 1;
    message.msg_control = control.buffer;
    message.msg_controllen = sizeof(control.buffer);
    ssize_t received;
    do {
        received = recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
    } while (received < 0 && errno == EINTR);
    if (received < 0) return -1;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
        size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t index = 0; index < count; index++) {
            int received_descriptor;
            memcpy(&received_descriptor, CMSG_DATA(header) + index * sizeof(int), sizeof(int));
            if (*descriptor < 0) {
                *descriptor = received_descriptor;
            } else {
                close(received_descriptor);
            }
        }
    }
    return received;
}

int cdescriptorpassing_socket(void) {
    return socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
}

int cdescriptorpassing_accept(int socket) {
    int client;
    do {
        client = accept4(socket, NULL, NULL, SOCK_CLOEXEC);
    } while (client < 0 && errno == EINTR);
    return client;
}
