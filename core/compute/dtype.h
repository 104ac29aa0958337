#pragma once
// The element types a stored tensor may have (float32, float16, bfloat16) and their conversions to and
// from float32. Below the model, which keeps weights in their stored precision, and the safetensors
// reader and writer (io/safetensors.h), which name them in files.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace attnscope {

enum class DType { F32, F16, BF16 };
std::string_view toString(DType dtype);
std::size_t byteSize(DType dtype);

// Converts n stored values of `dtype` at `src` (no alignment needed) to float32.
void toFloat32(const unsigned char* src, DType dtype, std::size_t n, float* out);

// Scalar conversions, exposed for the tests. Round to nearest even for F16 and BF16.
float halfToFloat(std::uint16_t bits);
float bfloat16ToFloat(std::uint16_t bits);
std::uint16_t floatToHalf(float value);
std::uint16_t floatToBfloat16(float value);

} // namespace attnscope
