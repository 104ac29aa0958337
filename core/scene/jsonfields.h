#pragma once
// Checks shared by the hand-written JSON formats (scenes, lessons): a field the format does not know is
// refused by name, so a typing mistake ("setings") is found at once instead of silently ignored.
#include <initializer_list>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/result.h"

namespace attnscope {

// Succeeds when every key of `object` is in `known`; otherwise fails with the middle of a sentence,
// "has an unknown field \"x\" (the fields are a, b, c)", for the caller to put a subject before.
Status checkKnownFields(const nlohmann::json& object, std::initializer_list<const char*> known);

} // namespace attnscope
