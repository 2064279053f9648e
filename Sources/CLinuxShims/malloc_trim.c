#include <malloc.h>
#include "CLinuxShims.h"

int clinuxshims_malloc_trim(size_t pad) {
    return malloc_trim(pad);
}

int clinuxshims_limit_malloc_arenas(int arenas) {
    return mallopt(M_ARENA_MAX, arenas);
}

int clinuxshims_keep_heap_blocks(int mmapThreshold, int trimThreshold, int topPad) {
    return mallopt(M_MMAP_THRESHOLD, mmapThreshold) && mallopt(M_TRIM_THRESHOLD, trimThreshold) && mallopt(M_TOP_PAD, topPad);
}
