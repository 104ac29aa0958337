#include "core/hub/checkpointseries.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <system_error>

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

std::vector<std::string> pythiaRevisions()
{
    std::vector<std::string> names = {"step0"};
    for (int s = 1; s <= 512; s *= 2) names.push_back("step" + std::to_string(s));
    for (int s = 1000; s <= 143000; s += 1000) names.push_back("step" + std::to_string(s));
    return names;
}

bool isPythiaRepository(std::string_view repo)
{
    return repo.starts_with("EleutherAI/pythia-");
}

std::vector<CheckpointSeries> cachedCheckpointSeries(const std::string& cache)
{
    // listCachedModels is sorted by repository, so each repository's revisions are adjacent.
    std::map<std::string, std::vector<CachedCheckpoint>> byRepo;
    for (const CachedModel& m : listCachedModels(cache)) {
        CachedCheckpoint c;
        c.revision = m.revision;
        c.commit = m.commit;
        c.folder = m.path;
        c.step = trainingStep(m.revision);
        byRepo[m.repo].push_back(std::move(c));
    }
    std::vector<CheckpointSeries> out;
    for (auto& [repo, found] : byRepo) {
        if (found.size() < 2) continue;
        std::vector<std::string> names;
        for (const CachedCheckpoint& c : found) names.push_back(c.revision);
        CheckpointSeries series{repo, true, {}};
        for (const std::string& name : inTrainingOrder(names))
            series.checkpoints.push_back(*std::find_if(found.begin(), found.end(), [&](const CachedCheckpoint& c) { return c.revision == name; }));
        out.push_back(std::move(series));
    }
    return out;
}

namespace {

// a < b with runs of digits compared by value ("a9" < "a10"); equal values of different lengths ("07",
// "7") and everything else byte by byte.
bool naturalLess(const std::string& a, const std::string& b)
{
    std::size_t i = 0, j = 0;
    const auto digit = [](char c) { return c >= '0' && c <= '9'; };
    while (i < a.size() && j < b.size()) {
        if (digit(a[i]) && digit(b[j])) {
            std::size_t ei = i, ej = j;
            while (ei < a.size() && digit(a[ei])) ++ei;
            while (ej < b.size() && digit(b[ej])) ++ej;
            std::string_view da(a.data() + i, ei - i), db(b.data() + j, ej - j);
            while (da.size() > 1 && da.front() == '0') da.remove_prefix(1);
            while (db.size() > 1 && db.front() == '0') db.remove_prefix(1);
            if (da.size() != db.size()) return da.size() < db.size();
            if (da != db) return da < db;
            i = ei;
            j = ej;
        } else {
            if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
            ++i;
            ++j;
        }
    }
    if ((a.size() - i) != (b.size() - j)) return a.size() - i < b.size() - j;
    return a < b;
}

} // namespace

std::vector<std::string> checkpointOrder(std::vector<std::string> names)
{
    std::vector<std::string> steps, others;
    for (std::string& n : names) (trainingStep(n) ? steps : others).push_back(std::move(n));
    std::vector<std::string> out = inTrainingOrder(steps);
    std::sort(others.begin(), others.end(), naturalLess);
    others.erase(std::unique(others.begin(), others.end()), others.end());
    out.insert(out.end(), others.begin(), others.end());
    return out;
}

Result<CheckpointSeries> folderCheckpointSeries(const std::string& folder)
{
    namespace fs = std::filesystem;
    using R = Result<CheckpointSeries>;
    std::error_code ec;
    fs::directory_iterator it(folder, ec);
    if (ec) return R::fail("cannot read the folder '" + folder + "': " + ec.message() + ".");
    std::vector<std::string> names;
    // A folder of millions of entries is not a series of checkpoints: stop reading well before.
    constexpr int kMaxEntries = 100'000;
    int seen = 0;
    for (; it != fs::directory_iterator(); it.increment(ec)) {
        if (ec || ++seen > kMaxEntries) break;
        const fs::path sub = it->path();
        if (fs::is_regular_file(sub / "config.json", ec)) names.push_back(sub.filename().string());
    }
    if (ec) return R::fail("cannot read the folder '" + folder + "': " + ec.message() + ".");
    if (names.size() < 2)
        return R::fail("the folder '" + folder + "' holds " + std::to_string(names.size()) +
                       " model folder" + (names.size() == 1 ? "" : "s") + " (subfolders with a config.json); a series of checkpoints needs two or more.");
    CheckpointSeries series{folder, false, {}};
    for (const std::string& name : checkpointOrder(names)) {
        CachedCheckpoint c;
        c.revision = name;
        c.folder = (fs::path(folder) / name).string();
        c.step = trainingStep(name);
        series.checkpoints.push_back(std::move(c));
    }
    return R::ok(std::move(series));
}

std::vector<int> identicalEarlier(const std::vector<std::string>& hashes)
{
    std::vector<int> out(hashes.size(), -1);
    for (std::size_t i = 0; i < hashes.size(); ++i) {
        if (hashes[i].empty()) continue;
        for (std::size_t j = 0; j < i; ++j)
            if (hashes[j] == hashes[i]) {
                out[i] = static_cast<int>(j);
                break;
            }
    }
    return out;
}

} // namespace attnscope
