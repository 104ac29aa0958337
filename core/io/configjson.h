#pragma once
// Reading fields of a model's config.json, each problem as one sentence naming the file and the key.
// Every function returns "" on success; an absent or null key leaves `out` unchanged unless required.
#include <string>

#include <nlohmann/json.hpp>

namespace attnscope {

// A whole number that fits an int (absurd magnitudes past 1e9 are refused).
std::string readConfigInt(const nlohmann::json& config, const char* key, const std::string& file, int& out,
                          bool required = true);
std::string readConfigNumber(const nlohmann::json& config, const char* key, const std::string& file, double& out);
std::string readConfigBool(const nlohmann::json& config, const char* key, const std::string& file, bool& out);

} // namespace attnscope
