#pragma once
// NumPy's .npy format (one array) and .npz (a zip of named .npy arrays), written so numpy.load reads them.
// Only what AttnScope exports: little-endian float32, C (row-major) order.
//
// .npy: the magic "\x93NUMPY", version 1.0 (2.0 when the header outgrows 64 KB), the header length, a
// Python-literal dict {'descr': '<f4', 'fortran_order': False, 'shape': (...), } padded with spaces and
// a newline so the data starts on a 64-byte boundary, then the values.
// .npz: a zip archive whose members are stored, not compressed, each "NAME.npy"; fixed timestamps, so
// the same numbers always give the same bytes.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"

namespace attnscope {

// A float32 array in row-major order: values.size() is the product of shape.
struct NpyArray {
    std::vector<std::size_t> shape;
    std::vector<float> values;
};

// The bytes of an .npy file.
std::string npyBytes(const NpyArray& array);

// The bytes of an .npz archive of named arrays (names without ".npy"). Fails when a member or the
// archive would pass 4 GB, which needs ZIP64; export such data as .npy arrays one by one.
Result<std::string> npzBytes(const std::vector<std::pair<std::string, NpyArray>>& arrays);

} // namespace attnscope
