#define _GNU_SOURCE
#include <fcntl.h>
#include "CLinuxShims.h"

int clinuxshims_start_writeback(int fd, long long offset, long long length) {
    return sync_file_range(fd, (off_t)offset, (off_t)length, SYNC_FILE_RANGE_WRITE);
}
