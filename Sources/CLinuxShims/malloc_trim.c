#include <malloc.h>
#include "CLinuxShims.h"

int clinuxshims_malloc_trim(size_t pad) {
    return malloc_trim(pad);
}
