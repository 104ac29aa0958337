#include "core/text/filetext.h"

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

std::string jsonTooDeep(const std::string& what, int maxDepth)
{
    return what + " nests JSON deeper than " + std::to_string(maxDepth) +
           " levels, which no file AttnScope reads needs; it was not parsed.";
}

namespace {

// Fails with jsonTooDeep's sentence when `text` nests more than `maxDepth` levels.
Status jsonNestingProblem(std::string_view text, const std::string& what, int maxDepth)
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
            if (++depth > maxDepth) return Status::failure(jsonTooDeep(what, maxDepth));
        } else if (c == ']' || c == '}') {
            --depth;  // unbalanced text is the parser's to report
        }
    }
    return {};
}

} // namespace

Result<nlohmann::json> parseJson(std::string_view text, const std::string& what, int maxDepth)
{
    using R = Result<nlohmann::json>;
    if (Status deep = jsonNestingProblem(text, what, maxDepth); !deep.ok()) return R::fail(deep.error());
    nlohmann::json value = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
    if (value.is_discarded()) return R::fail(what + " is not valid JSON.");
    return R::ok(std::move(value));
}

JsonStart jsonStart(std::string_view text)
{
    if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
    const std::size_t first = text.find_first_not_of(" \t\n\r");
    if (first == std::string_view::npos) return JsonStart::NotJson;
    const std::string_view rest = text.substr(first);
    const auto digit = [](char c) { return c >= '0' && c <= '9'; };
    if (rest[0] == '{') return JsonStart::Object;
    // 1. A list or a string is known by its first byte, a number by its first digit.
    if (rest[0] == '[' || rest[0] == '"' || digit(rest[0]) || (rest.size() > 1 && rest[0] == '-' && digit(rest[1])))
        return JsonStart::OtherValue;
    // 2. A literal only by its whole word: "nope" is not JSON at all, and is reported as such.
    for (const std::string_view word : {"null", "true", "false"})
        if (rest.starts_with(word)) return JsonStart::OtherValue;
    return JsonStart::NotJson;
}

Result<nlohmann::json> parseJsonObject(std::string_view text, const std::string& what, const std::string& notObject)
{
    using R = Result<nlohmann::json>;
    const std::string refusal = notObject.empty() ? what + " is not a JSON object." : notObject;
    // 1. The first byte decides for a list or a scalar: nothing after it can make the text an object.
    if (jsonStart(text) == JsonStart::OtherValue) return R::fail(refusal);
    Result<nlohmann::json> j = parseJson(text, what);
    if (!j) return j;
    // 2. Valid JSON that opened with '{' is an object; kept as a check, not a path any text takes.
    if (!j->is_object()) return R::fail(refusal);
    return j;
}

Result<nlohmann::json> readJsonObject(const std::string& path, std::size_t maxBytes)
{
    Result<std::string> text = readSmallFile(path, maxBytes);
    if (!text) return Result<nlohmann::json>::fail(text.error());
    return parseJsonObject(*text, "'" + path + "'");
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
