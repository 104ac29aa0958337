// The products for AVX-512 (F, BW, DQ, VL), AVX2 and FMA: kernelbody.h compiled with this set's flags (core/compute/kernels/CMakeLists.txt).
#define ATTNSCOPE_KERNEL_SET avx512
#define ATTNSCOPE_KERNEL_NAME "avx512"
#define ATTNSCOPE_KERNEL_INSTRUCTIONS "AVX-512 (F, BW, DQ, VL), AVX2 and FMA"
#include "core/compute/kernels/kernelbody.h"
