#include "io/configjson.h"

#include <cmath>

#include "text/filetext.h"

namespace attnscope {

namespace {

const nlohmann::json* field(const nlohmann::json& config, const char* key)
{
    const auto it = config.find(key);
    return it == config.end() || it->is_null() ? nullptr : &*it;
}

} // namespace

std::string readConfigInt(const nlohmann::json& config, const char* key, const std::string& file, int& out, bool required)
{
    const nlohmann::json* v = field(config, key);
    if (!v) return required ? file + " has no \"" + key + "\"." : std::string();
    if (!v->is_number_integer()) return file + " gives \"" + key + "\" as " + quoteJsonValue(*v) + ", which is not a whole number.";
    const long long n = v->get<long long>();
    if (n < -1'000'000'000LL || n > 1'000'000'000LL) return file + " gives \"" + key + "\" the absurd value " + std::to_string(n) + ".";
    out = static_cast<int>(n);
    return {};
}

std::string readConfigNumber(const nlohmann::json& config, const char* key, const std::string& file, double& out)
{
    const nlohmann::json* v = field(config, key);
    if (!v) return {};
    if (!v->is_number() || !std::isfinite(v->get<double>()))
        return file + " gives \"" + key + "\" as " + quoteJsonValue(*v) + ", which is not a number.";
    out = v->get<double>();
    return {};
}

std::string readConfigBool(const nlohmann::json& config, const char* key, const std::string& file, bool& out)
{
    const nlohmann::json* v = field(config, key);
    if (!v) return {};
    if (!v->is_boolean()) return file + " gives \"" + key + "\" as " + quoteJsonValue(*v) + ", which is not true or false.";
    out = v->get<bool>();
    return {};
}

} // namespace attnscope
