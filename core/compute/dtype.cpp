#include "core/compute/dtype.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace attnscope {

static_assert(std::endian::native == std::endian::little,
              "stored tensors are little-endian and are copied byte for byte into floats");

std::string_view toString(DType dtype)
{
    switch (dtype) {
    case DType::F32: return "F32";
    case DType::F16: return "F16";
    case DType::BF16: return "BF16";
    }
    return "F32";
}

std::size_t byteSize(DType dtype) { return dtype == DType::F32 ? 4 : 2; }

// ---- scalar conversions ----

float halfToFloat(std::uint16_t h)
{
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exponent = (h >> 10) & 0x1Fu;
    const std::uint32_t mantissa = h & 0x3FFu;
    if (exponent == 0) {  // zero or subnormal: mantissa units of 2^-24
        const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
        return sign ? -magnitude : magnitude;
    }
    std::uint32_t bits;
    if (exponent == 31) bits = sign | 0x7F800000u | (mantissa << 13);  // infinity or NaN
    else bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
    return std::bit_cast<float>(bits);
}

float bfloat16ToFloat(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

std::uint16_t floatToHalf(float value)
{
    const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
    const std::uint32_t sign = (x >> 16) & 0x8000u;
    const std::uint32_t magnitude = x & 0x7FFFFFFFu;
    if (magnitude >= 0x7F800000u) return static_cast<std::uint16_t>(sign | 0x7C00u | (magnitude > 0x7F800000u ? 0x200u : 0u));
    // 65520 is halfway between the largest half (65504) and 2^16; ties go to even, which is infinity.
    if (magnitude >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);
    const int exponent = static_cast<int>(magnitude >> 23) - 127;
    auto roundShift = [](std::uint32_t significand, int shift) {
        // Drops `shift` low bits, rounding to nearest with ties to even.
        std::uint32_t kept = significand >> shift;
        const std::uint32_t dropped = significand & ((1u << shift) - 1u);
        const std::uint32_t halfway = 1u << (shift - 1);
        if (dropped > halfway || (dropped == halfway && (kept & 1u))) ++kept;
        return kept;
    };
    if (exponent >= -14) {
        // Normal half: a carry out of the mantissa correctly bumps the exponent.
        const std::uint32_t biased = (static_cast<std::uint32_t>(exponent + 15) << 10) | ((magnitude & 0x7FFFFFu) >> 13);
        const std::uint32_t dropped = magnitude & 0x1FFFu;
        std::uint32_t h = biased;
        if (dropped > 0x1000u || (dropped == 0x1000u && (h & 1u))) ++h;
        return static_cast<std::uint16_t>(sign | h);
    }
    if (exponent < -25) return static_cast<std::uint16_t>(sign);  // below half the smallest subnormal
    // Subnormal half: count units of 2^-24 in the 24-bit significand.
    const std::uint32_t significand = (magnitude & 0x7FFFFFu) | 0x800000u;
    return static_cast<std::uint16_t>(sign | roundShift(significand, -(exponent + 1)));
}

std::uint16_t floatToBfloat16(float value)
{
    std::uint32_t x = std::bit_cast<std::uint32_t>(value);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // keep NaN a NaN
    x += 0x7FFFu + ((x >> 16) & 1u);  // round to nearest, ties to even
    return static_cast<std::uint16_t>(x >> 16);
}

void toFloat32(const unsigned char* p, DType dtype, std::size_t n, float* out)
{
    // A tensor with a zero in its shape has nothing to copy, and `out` may then be null (an empty
    // vector's data()), which memcpy must never be given, even for zero bytes. Found by fuzz_safetensors.
    if (n == 0) return;
    switch (dtype) {
    case DType::F32:
        std::memcpy(out, p, n * sizeof(float));  // byte copy: no alignment needed
        break;
    case DType::F16:
        for (std::size_t i = 0; i < n; ++i) {
            std::uint16_t bits;
            std::memcpy(&bits, p + 2 * i, 2);
            out[i] = halfToFloat(bits);
        }
        break;
    case DType::BF16:
        // A bfloat16 is the top half of a float32: a shift, which the compiler vectorises.
        for (std::size_t i = 0; i < n; ++i) {
            std::uint16_t bits;
            std::memcpy(&bits, p + 2 * i, 2);
            const std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16;
            std::memcpy(out + i, &wide, 4);
        }
        break;
    }
}

} // namespace attnscope
