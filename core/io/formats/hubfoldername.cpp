#include "core/io/formats/hubfoldername.h"

#include <algorithm>

namespace attnscope {

namespace {

constexpr std::string_view kRepoFolderPrefix = "models--";
constexpr std::string_view kSeparator = "--";

} // namespace

// A character the hub allows in a repository's owner or name.
bool isHubRepoChar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

// One part of a repository id: 1 to 96 allowed characters, not "." or "..", no "--" (the cache's separator).
bool isValidHubRepoPart(std::string_view part)
{
    if (part.empty() || part.size() > 96 || part == "." || part == "..") return false;
    if (part.find(kSeparator) != std::string_view::npos || part.front() == '-' || part.back() == '-') return false;
    return std::all_of(part.begin(), part.end(), isHubRepoChar);
}

std::string hubRepoFolderName(const std::string& repo)
{
    std::string name(kRepoFolderPrefix);
    for (char c : repo) {
        if (c == '/') name += kSeparator;
        else name += c;
    }
    return name;
}

std::optional<std::string> hubRepoFromFolderName(const std::string& folderName)
{
    if (!folderName.starts_with(kRepoFolderPrefix)) return std::nullopt;
    std::string rest = folderName.substr(kRepoFolderPrefix.size());
    const std::size_t sep = rest.find(kSeparator);
    std::string repo = sep == std::string::npos ? rest : rest.substr(0, sep) + "/" + rest.substr(sep + kSeparator.size());
    const std::size_t slash = repo.find('/');
    const bool valid = slash == std::string::npos ? isValidHubRepoPart(repo)
                                                  : isValidHubRepoPart(std::string_view(repo).substr(0, slash)) &&
                                                        isValidHubRepoPart(std::string_view(repo).substr(slash + 1));
    if (!valid) return std::nullopt;
    return repo;
}

} // namespace attnscope
