#include "compute/allocation.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace attnscope {

void keepFreedMatricesForReuse()
{
#if defined(__GLIBC__)
    // Setting either turns off glibc's own adjustment of both, which raises the mapping threshold to the
    // size of a freed mapping but also trims the heap's top at twice that.
    mallopt(M_MMAP_THRESHOLD, static_cast<int>(kReusedBlockBytes));
    mallopt(M_TRIM_THRESHOLD, static_cast<int>(kKeptFreeBytes));
#endif
}

} // namespace attnscope
