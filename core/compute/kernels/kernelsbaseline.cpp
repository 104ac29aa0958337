// The products for SSE2: kernelbody.h compiled with this set's flags (core/compute/kernels/CMakeLists.txt).
#define ATTNSCOPE_KERNEL_SET baseline
#define ATTNSCOPE_KERNEL_NAME "baseline"
#define ATTNSCOPE_KERNEL_INSTRUCTIONS "SSE2"
#include "core/compute/kernels/kernelbody.h"
