#pragma once
// Reads a small file (a config, a vocabulary) whole, refusing anything past a size limit so a hostile
// path cannot make the core allocate without bound.
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "result.h"

namespace attnscope {

// Fails with "cannot open '<path>' (<reason>)." or "'<path>' is larger than <N> MB ...".
Result<std::string> readSmallFile(const std::string& path, std::size_t maxBytes);

// A small JSON file's top-level object; fails with a sentence naming the file (cannot open, too large,
// "'<path>' is not valid JSON.", "'<path>' is not a JSON object.").
Result<nlohmann::json> readJsonObject(const std::string& path, std::size_t maxBytes);

// A JSON value as error messages quote it: scalars as written (strings cut to 40 characters), arrays and
// objects by their type only. Never dumps a container, whose nesting a hostile file may make deep enough
// to overflow the stack of nlohmann's recursive serialiser.
std::string quoteJsonValue(const nlohmann::json& value);

} // namespace attnscope
