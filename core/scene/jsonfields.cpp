#include "core/scene/jsonfields.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace attnscope {

Status checkKnownFields(const nlohmann::json& object, std::initializer_list<const char*> known)
{
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (std::any_of(known.begin(), known.end(), [&](const char* k) { return it.key() == k; })) continue;
        std::string list;
        for (const char* k : known) list += std::string(list.empty() ? "" : ", ") + k;
        // The key is the file's text: cut it so a hostile file cannot make the sentence huge.
        const std::string key = it.key().size() > 40 ? it.key().substr(0, 40) + "…" : it.key();
        return Status::failure("has an unknown field \"" + key + "\" (the fields are " + list + ")");
    }
    return {};
}

} // namespace attnscope
