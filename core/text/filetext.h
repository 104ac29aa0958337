#pragma once
// Reads a small file (a config, a vocabulary) whole, refusing anything past a size limit so a hostile
// path cannot make the core allocate without bound; the limits are core/limits.h's.
#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/limits.h"
#include "core/result.h"

namespace attnscope {

// Fails with "cannot open '<path>' (<reason>)." or "'<path>' is larger than <N> MB ...".
Result<std::string> readSmallFile(const std::string& path, std::size_t maxBytes);

// The one way the core reads JSON. Checks the nesting before the parser allocates anything (nlohmann's
// parser is iterative and does not overflow the stack, but it allocates a container for every opening
// bracket, so a file of a million '[' would cost tens of MB before failing). `what` names the text in
// messages: "'/m/config.json' is not valid JSON." Never throws; the JSON is data, never evaluated.
Result<nlohmann::json> parseJson(std::string_view text, const std::string& what, int maxDepth = kMaxJsonDepth);

// parseJson's sentence for a text nested deeper than `maxDepth`, for readers that count the nesting as
// they stream (the safetensors header).
std::string jsonTooDeep(const std::string& what, int maxDepth = kMaxJsonDepth);

// How a JSON text begins, from its first bytes past white space (and a UTF-8 byte order mark, which the
// parser skips too): every file AttnScope reads is an object, and a text that opens a list, a string, a
// number or a literal (null, true, false) can be refused before its 60 MB are parsed.
enum class JsonStart { Object, OtherValue, NotJson };
JsonStart jsonStart(std::string_view text);

// parseJson for a text that must be an object. A text that starts another JSON value is refused at once
// with `notObject` (by default "<what> is not a JSON object."); one that is not JSON at all gets
// parseJson's "not valid JSON".
Result<nlohmann::json> parseJsonObject(std::string_view text, const std::string& what, const std::string& notObject = {});

// A small JSON file's top-level object, read through parseJsonObject; fails with a sentence naming the file
// (cannot open, too large, too deep, "'<path>' is not valid JSON.", "'<path>' is not a JSON object.").
Result<nlohmann::json> readJsonObject(const std::string& path, std::size_t maxBytes = kMaxConfigBytes);

// A JSON value as error messages quote it: scalars as written (strings cut to 40 characters), arrays and
// objects by their type only. Never dumps a container, whose nesting a hostile file may make deep enough
// to overflow the stack of nlohmann's recursive serialiser.
std::string quoteJsonValue(const nlohmann::json& value);

} // namespace attnscope
