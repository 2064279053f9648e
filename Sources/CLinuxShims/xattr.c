#include <sys/xattr.h>
#include "CLinuxShims.h"

long clinuxshims_fgetxattr(int fd, const char *name, void *value, size_t size) {
    return (long)fgetxattr(fd, name, value, size);
}

int clinuxshims_fsetxattr(int fd, const char *name, const void *value, size_t size) {
    return fsetxattr(fd, name, value, size, 0);
}
