#pragma once
// Reads a small file (a config, a vocabulary) whole, refusing anything past a size limit so a hostile
// path cannot make the core allocate without bound.
#include <cstddef>
#include <string>

#include "result.h"

namespace attnscope {

// Fails with "cannot open '<path>' (<reason>)." or "'<path>' is larger than <N> MB ...".
Result<std::string> readSmallFile(const std::string& path, std::size_t maxBytes);

} // namespace attnscope
