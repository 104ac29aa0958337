#include "text/filetext.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace attnscope {

Result<std::string> readSmallFile(const std::string& path, std::size_t maxBytes)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) return Result<std::string>::fail("cannot open '" + path + "' (" + std::strerror(errno) + ").");
    auto tooLarge = [&] {
        return Result<std::string>::fail("'" + path + "' is larger than " + std::to_string(maxBytes >> 20) +
                                         " MB, too large for this kind of file.");
    };
    // A regular file's size is known before reading: refuse it unread. (Pipes and the like are read up to
    // the limit below.)
    std::error_code ec;
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec && size > maxBytes) return tooLarge();
    std::string text;
    if (!ec) text.reserve(static_cast<std::size_t>(size));
    char buffer[65536];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
        text.append(buffer, static_cast<std::size_t>(in.gcount()));
        if (text.size() > maxBytes) return tooLarge();
    }
    if (in.bad()) return Result<std::string>::fail("cannot read '" + path + "'.");
    return Result<std::string>::ok(std::move(text));
}

std::string jsonNestingProblem(std::string_view text, const std::string& what, int maxDepth)
{
    // Counted on the raw bytes: brackets inside strings do not count, escaped quotes do not end them.
    int depth = 0;
    bool inString = false, escaped = false;
    for (const char c : text) {
        if (inString) {
            if (escaped) escaped = false;
            else if (c == '\\') escaped = true;
            else if (c == '"') inString = false;
        } else if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            if (++depth > maxDepth)
                return what + " nests JSON deeper than " + std::to_string(maxDepth) +
                       " levels, which no file AttnScope reads needs; it was not parsed.";
        } else if (c == ']' || c == '}') {
            --depth;  // unbalanced text is the parser's to report
        }
    }
    return {};
}

Result<nlohmann::json> parseJson(std::string_view text, const std::string& what, int maxDepth)
{
    using R = Result<nlohmann::json>;
    if (std::string deep = jsonNestingProblem(text, what, maxDepth); !deep.empty()) return R::fail(deep);
    nlohmann::json value = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
    if (value.is_discarded()) return R::fail(what + " is not valid JSON.");
    return R::ok(std::move(value));
}

Result<nlohmann::json> readJsonObject(const std::string& path, std::size_t maxBytes)
{
    using R = Result<nlohmann::json>;
    Result<std::string> text = readSmallFile(path, maxBytes);
    if (!text) return R::fail(text.error());
    Result<nlohmann::json> j = parseJson(*text, "'" + path + "'");
    if (!j) return j;
    if (!j->is_object()) return R::fail("'" + path + "' is not a JSON object.");
    return j;
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
