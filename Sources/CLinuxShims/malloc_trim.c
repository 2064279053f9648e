#include <malloc.h>
#include "CLinuxShims.h"

int clinuxshims_malloc_trim(size_t pad) {
    return malloc_trim(pad);
}

int clinuxshims_limit_malloc_arenas(int arenas) {
    return mallopt(M_ARENA_MAX, arenas);
}
