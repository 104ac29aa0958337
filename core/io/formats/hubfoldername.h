#pragma once
// How the Hugging Face cache names a repository's folder ("models--ORG--NAME") and back, and which names
// the hub allows. Below hub/ (the cache and downloads) and io/tensorsource.cpp, which names a cached
// snapshot by its repository.
#include <optional>
#include <string>
#include <string_view>

namespace attnscope {

// A character the hub allows in a repository's owner or name.
bool isHubRepoChar(char c);
// One part of a repository id: 1 to 96 allowed characters, not "." or "..", no "--" (the cache's separator).
bool isValidHubRepoPart(std::string_view part);

// The repository's folder name in the cache: "models--ORG--NAME".
std::string hubRepoFolderName(const std::string& repo);
// The repository a cache folder name stands for, or nothing when the name is not a model repository's.
std::optional<std::string> hubRepoFromFolderName(const std::string& folderName);

} // namespace attnscope
