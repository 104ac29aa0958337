#include "text/filetext.h"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace attnscope {

Result<std::string> readSmallFile(const std::string& path, std::size_t maxBytes)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) return Result<std::string>::fail("cannot open '" + path + "' (" + std::strerror(errno) + ").");
    std::string text;
    char buffer[65536];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
        text.append(buffer, static_cast<std::size_t>(in.gcount()));
        if (text.size() > maxBytes)
            return Result<std::string>::fail("'" + path + "' is larger than " + std::to_string(maxBytes >> 20) +
                                             " MB, too large for this kind of file.");
    }
    if (in.bad()) return Result<std::string>::fail("cannot read '" + path + "'.");
    return Result<std::string>::ok(std::move(text));
}

Result<nlohmann::json> readJsonObject(const std::string& path, std::size_t maxBytes)
{
    using R = Result<nlohmann::json>;
    Result<std::string> text = readSmallFile(path, maxBytes);
    if (!text) return R::fail(text.error());
    // The parser's own depth limit is not enough for a hostile file's nesting, but nlohmann's parser is
    // iterative; only dumping a deep value recurses, and quoteJsonValue never dumps containers.
    nlohmann::json doc = nlohmann::json::parse(*text, nullptr, false);
    if (doc.is_discarded()) return R::fail("'" + path + "' is not valid JSON.");
    if (!doc.is_object()) return R::fail("'" + path + "' is not a JSON object.");
    return R::ok(std::move(doc));
}

std::string quoteJsonValue(const nlohmann::json& value)
{
    if (value.is_array() || value.is_object()) return std::string("a JSON ") + value.type_name();
    if (value.is_string()) {
        const std::string& text = value.get_ref<const std::string&>();
        const std::string cut = text.size() > 40 ? text.substr(0, 40) + "..." : text;
        return nlohmann::json(cut).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    return value.dump();
}

} // namespace attnscope
