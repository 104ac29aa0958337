// The products for AVX2 and FMA: kernelbody.h compiled with this set's flags (core/compute/kernels/CMakeLists.txt).
#define ATTNSCOPE_KERNEL_SET avx2
#define ATTNSCOPE_KERNEL_NAME "avx2"
#define ATTNSCOPE_KERNEL_INSTRUCTIONS "AVX2 and FMA"
#include "core/compute/kernels/kernelbody.h"
