#include "core/model/sparsepattern.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <limits>

namespace attnscope {

namespace {

constexpr float kHidden = -std::numeric_limits<float>::infinity();

// SplitMix64's finaliser: every input bit moves every output bit, so neighbouring queries' draws differ.
std::uint64_t mix(std::uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// One query's random keys, decided key by key in increasing order (selection sampling, Knuth's Algorithm
// S): the next available key is taken with probability need / left, so exactly min(R, available) keys come
// out and every such set is equally likely, with no storage. The stream depends on (seed, query) alone, so
// a query draws the same keys in every layer and head, and, under the causal mask (where its available keys
// are the earlier ones), whatever follows it.
class RandomDraw {
public:
    RandomDraw(std::uint32_t seed, Eigen::Index query, Eigen::Index available, int wanted)
        : m_state(mix((std::uint64_t(seed) << 32) ^ std::uint64_t(query))),
          m_left(std::uint64_t(available)),
          m_need(std::min<std::uint64_t>(std::uint64_t(wanted), std::uint64_t(available)))
    {
    }
    bool next()
    {
        if (m_left == 0) return false;
        m_state += 0x9E3779B97F4A7C15ull;
        const std::uint64_t pick = ((mix(m_state) >> 32) * m_left) >> 32;  // uniform in [0, left)
        --m_left;
        if (pick >= m_need) return false;
        --m_need;
        return true;
    }

private:
    std::uint64_t m_state, m_left, m_need;
};

Eigen::Index available(bool causal, Eigen::Index keys, Eigen::Index query)
{
    return causal ? query : std::max<Eigen::Index>(0, keys - 1);
}

bool isGlobal(const SparsePattern& p, Eigen::Index position)
{
    return position <= kMaxPatternNumber && std::binary_search(p.globals.begin(), p.globals.end(), int(position));
}

// Every pattern but Random, for one pair: O(1) (a binary search for Global). The direction is the caller's:
// under the causal mask only j <= i is asked about.
bool fixedPatternAllows(const SparsePattern& p, Eigen::Index i, Eigen::Index j)
{
    const Eigen::Index distance = std::abs(i - j);
    switch (p.kind) {
    case PatternKind::None: return true;
    case PatternKind::Global: return isGlobal(p, i) || isGlobal(p, j) || distance < p.window;
    case PatternKind::Dilated: return distance % p.dilation == 0 && distance / p.dilation < p.window;
    case PatternKind::Block: return i / p.block == j / p.block;
    case PatternKind::Random: break;
    }
    return true;
}

// "4" -> 4 when it is a whole number from `low` to `high`.
bool wholeNumber(std::string_view text, long long low, long long high, long long& value)
{
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return !text.empty() && ec == std::errc() && end == text.data() + text.size() && value >= low && value <= high;
}

// "a,b" -> the two numbers; false when there are not exactly two.
bool twoNumbers(std::string_view text, long long& a, long long& b, long long highB)
{
    const std::size_t comma = text.find(',');
    if (comma == std::string_view::npos) return false;
    return wholeNumber(text.substr(0, comma), 1, kMaxPatternNumber, a) && wholeNumber(text.substr(comma + 1), 0, highB, b);
}

std::string quoted(std::string_view text)
{
    std::string out(1, '\'');
    out.append(text);
    out += '\'';
    return out;
}

// "0, 5" or "0,5": the numbers with `separator` between them.
std::string joined(const std::vector<int>& numbers, std::string_view separator)
{
    std::string out;
    for (std::size_t n = 0; n < numbers.size(); ++n) {
        if (n > 0) out.append(separator);
        out += std::to_string(numbers[n]);
    }
    return out;
}

Result<SparsePattern> parseGlobal(std::string_view text)
{
    using R = Result<SparsePattern>;
    const std::size_t semicolon = text.find(';');
    if (semicolon == std::string_view::npos || !text.substr(semicolon + 1).starts_with("window:"))
        return R::fail("the mask " + quoted(text) + " needs its window after a semicolon: write 'global:I,J,...;window:W'.");
    SparsePattern p;
    p.kind = PatternKind::Global;
    std::string_view list = text.substr(7, semicolon - 7);
    while (true) {
        const std::size_t comma = list.find(',');
        const std::string_view part = list.substr(0, comma);
        long long position = 0;
        if (!wholeNumber(part, 0, kMaxPatternNumber, position))
            return R::fail("the global positions in the mask " + quoted(text) +
                           " must be token positions from 0 to 1000000 separated by commas; " + quoted(part) + " is not one.");
        p.globals.push_back(int(position));
        if (comma == std::string_view::npos) break;
        list = list.substr(comma + 1);
    }
    std::sort(p.globals.begin(), p.globals.end());
    p.globals.erase(std::unique(p.globals.begin(), p.globals.end()), p.globals.end());
    long long window = 0;
    if (!wholeNumber(text.substr(semicolon + 8), 1, kMaxPatternNumber, window))
        return R::fail("the window in the mask " + quoted(text) + " must be a whole number from 1 to 1000000.");
    p.window = int(window);
    return R::ok(std::move(p));
}

} // namespace

bool looksLikePattern(std::string_view text)
{
    return text.starts_with("global:") || text.starts_with("dilated:") || text.starts_with("block:") || text.starts_with("random:");
}

Result<SparsePattern> parseSparsePattern(std::string_view text)
{
    using R = Result<SparsePattern>;
    if (text.starts_with("global:")) return parseGlobal(text);
    SparsePattern p;
    long long a = 0, b = 0;
    if (text.starts_with("dilated:")) {
        if (!twoNumbers(text.substr(8), a, b, kMaxPatternNumber) || b < 1)
            return R::fail("the mask " + quoted(text) +
                           " must be 'dilated:W,D': W keys spaced D apart, each a whole number from 1 to 1000000.");
        p.kind = PatternKind::Dilated;
        p.window = int(a);
        p.dilation = int(b);
    } else if (text.starts_with("block:")) {
        if (!wholeNumber(text.substr(6), 1, kMaxPatternNumber, a))
            return R::fail("the block in the mask " + quoted(text) + " must be a whole number of positions from 1 to 1000000.");
        p.kind = PatternKind::Block;
        p.block = int(a);
    } else if (text.starts_with("random:")) {
        if (!twoNumbers(text.substr(7), a, b, std::numeric_limits<std::uint32_t>::max()))
            return R::fail("the mask " + quoted(text) +
                           " must be 'random:R,SEED': R keys from 1 to 1000000 and a seed from 0 to 4294967295.");
        p.kind = PatternKind::Random;
        p.randomKeys = int(a);
        p.seed = std::uint32_t(b);
    } else {
        return R::fail("the mask " + quoted(text) + " is not a sparse pattern ('global:', 'dilated:', 'block:' or 'random:').");
    }
    return R::ok(std::move(p));
}

std::string formatSparsePattern(const SparsePattern& p)
{
    switch (p.kind) {
    case PatternKind::None: return {};
    case PatternKind::Global: return "global:" + joined(p.globals, ",") + ";window:" + std::to_string(p.window);
    case PatternKind::Dilated: return "dilated:" + std::to_string(p.window) + "," + std::to_string(p.dilation);
    case PatternKind::Block: return "block:" + std::to_string(p.block);
    case PatternKind::Random: return "random:" + std::to_string(p.randomKeys) + "," + std::to_string(p.seed);
    }
    return {};
}

std::string patternProblem(const SparsePattern& p)
{
    const auto inRange = [](int n) { return n >= 1 && n <= kMaxPatternNumber; };
    switch (p.kind) {
    case PatternKind::None: return {};
    case PatternKind::Global:
        if (p.globals.empty() || !std::is_sorted(p.globals.begin(), p.globals.end()) ||
            std::adjacent_find(p.globals.begin(), p.globals.end()) != p.globals.end() || p.globals.front() < 0 ||
            p.globals.back() > kMaxPatternNumber)
            return "the global positions must be sorted, distinct token positions from 0 to 1000000.";
        return inRange(p.window) ? std::string() : "the global pattern's window must be from 1 to 1000000 keys.";
    case PatternKind::Dilated:
        return inRange(p.window) && inRange(p.dilation) ? std::string() : "the dilated window's keys and spacing must be from 1 to 1000000.";
    case PatternKind::Block: return inRange(p.block) ? std::string() : "the block must be from 1 to 1000000 positions.";
    case PatternKind::Random: return inRange(p.randomKeys) ? std::string() : "the random keys must number from 1 to 1000000.";
    }
    return {};
}

bool patternAllows(const SparsePattern& p, bool causal, Eigen::Index keys, Eigen::Index i, Eigen::Index j)
{
    if (p.kind != PatternKind::Random) return fixedPatternAllows(p, i, j);
    if (j == i) return true;
    if (causal && j > i) return false;
    RandomDraw draw(p.seed, i, available(causal, keys, i), p.randomKeys);
    bool drawn = false;
    for (Eigen::Index k = 0; k <= j; ++k)
        if (k != i) drawn = draw.next();
    return drawn;
}

void maskPatternRows(const SparsePattern& p, bool causal, Eigen::Index row0, Eigen::Ref<Eigen::MatrixXf> scores)
{
    if (!p.active()) return;
    const Eigen::Index keys = scores.cols();
    for (Eigen::Index r = 0; r < scores.rows(); ++r) {
        const Eigen::Index i = row0 + r;
        const Eigen::Index last = causal ? std::min(i, keys - 1) : keys - 1;  // later keys are the causal mask's
        if (p.kind == PatternKind::Random) {
            RandomDraw draw(p.seed, i, available(causal, keys, i), p.randomKeys);
            for (Eigen::Index j = 0; j <= last; ++j)
                if (j != i && !draw.next()) scores(r, j) = kHidden;
        } else {
            for (Eigen::Index j = 0; j <= last; ++j)
                if (!fixedPatternAllows(p, i, j)) scores(r, j) = kHidden;
        }
    }
}

std::string describePattern(const SparsePattern& p)
{
    switch (p.kind) {
    case PatternKind::None: return {};
    case PatternKind::Global: return "global " + joined(p.globals, ", ") + " + window of " + std::to_string(p.window);
    case PatternKind::Dilated:
        return "dilated window of " + std::to_string(p.window) + " keys " + std::to_string(p.dilation) + " apart";
    case PatternKind::Block: return "blocks of " + std::to_string(p.block);
    case PatternKind::Random:
        return std::to_string(p.randomKeys) + " random " + (p.randomKeys == 1 ? "key" : "keys") + " (seed " + std::to_string(p.seed) + ")";
    }
    return {};
}

} // namespace attnscope
