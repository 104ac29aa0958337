#include "core/hub/checkpointseries.h"

#include <algorithm>
#include <filesystem>

#include "core/hub/hfcache.h"

namespace attnscope {

std::optional<std::int64_t> trainingStep(std::string_view revision)
{
    constexpr std::string_view prefix = "step";
    if (!revision.starts_with(prefix)) return std::nullopt;
    const std::string_view digits = revision.substr(prefix.size());
    // At most 15 digits: far past any published step, and no overflow.
    if (digits.empty() || digits.size() > 15 || (digits.size() > 1 && digits[0] == '0')) return std::nullopt;
    std::int64_t n = 0;
    for (char c : digits) {
        if (c < '0' || c > '9') return std::nullopt;
        n = n * 10 + (c - '0');
    }
    return n;
}

std::vector<std::string> inTrainingOrder(const std::vector<std::string>& revisions)
{
    std::vector<std::string> unique;
    for (const std::string& r : revisions)
        if (std::find(unique.begin(), unique.end(), r) == unique.end()) unique.push_back(r);
    // Stable, so names without a step keep the order they were given in, after the steps.
    std::stable_sort(unique.begin(), unique.end(), [](const std::string& a, const std::string& b) {
        const std::optional<std::int64_t> sa = trainingStep(a), sb = trainingStep(b);
        if (sa && sb) return *sa < *sb;
        return sa.has_value() && !sb.has_value();
    });
    return unique;
}

Result<std::vector<std::string>> parseRevisionList(std::string_view text)
{
    using R = Result<std::vector<std::string>>;
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        std::string_view name = text.substr(start, comma - start);
        while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
        while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
        if (name.empty()) return R::fail("the list of revisions '" + std::string(text) + "' has an empty name; give names such as step1000,step2000.");
        out.emplace_back(name);
        start = comma + 1;
    }
    return R::ok(std::move(out));
}

Result<std::vector<CachedCheckpoint>> findCachedCheckpoints(const std::string& cache, const std::string& repo,
                                                            const std::vector<std::string>& revisions)
{
    using R = Result<std::vector<CachedCheckpoint>>;
    std::vector<CachedCheckpoint> out;
    for (const std::string& revision : inTrainingOrder(revisions)) {
        // Through the spec parser, so a revision that could become a path ("..", "/x") is refused the same way.
        Result<HubModelRef> ref = parseHubSpec("hf:" + repo + "@" + revision);
        if (!ref) return R::fail(ref.error());
        Result<std::string> folder = resolveCachedSnapshot(cache, *ref);
        if (!folder) return R::fail(folder.error());
        CachedCheckpoint c;
        c.revision = revision;
        c.folder = *folder;
        c.commit = std::filesystem::path(*folder).filename().string();
        c.step = trainingStep(revision);
        out.push_back(std::move(c));
    }
    return R::ok(std::move(out));
}

} // namespace attnscope
