#include "core/research/headroles.h"

#include <algorithm>
#include <cmath>
#include <cassert>
#include <limits>
#include <optional>
#include <set>

#include "core/model/randommodel.h"

namespace attnscope {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double meanOr(double sum, int count) { return count > 0 ? sum / count : kNaN; }

// Uniform attention over the keys each query may see: what a head that ignores content and position scores.
Matrix uniformAttention(int T, const AttentionSettings& settings)
{
    Matrix A = Matrix::Zero(T, T);  // (T, T)
    for (int i = 0; i < T; ++i) {
        int visible = 0;
        for (int j = 0; j < T; ++j) visible += isMaskedPair(settings, i, j, T) ? 0 : 1;
        for (int j = 0; j < T && visible > 0; ++j)
            if (!isMaskedPair(settings, i, j, T)) A(i, j) = 1.0f / static_cast<float>(visible);
    }
    return A;
}

} // namespace

const char* roleName(HeadRole role)
{
    switch (role) {
    case HeadRole::PreviousToken: return "previous token";
    case HeadRole::FirstToken: return "first token";
    case HeadRole::Self: return "self";
    case HeadRole::DuplicateToken: return "duplicate token";
    case HeadRole::Induction: return "induction";
    }
    return "";
}

const char* roleKey(HeadRole role)
{
    switch (role) {
    case HeadRole::PreviousToken: return "previous_token";
    case HeadRole::FirstToken: return "first_token";
    case HeadRole::Self: return "self";
    case HeadRole::DuplicateToken: return "duplicate_token";
    case HeadRole::Induction: return "induction";
    }
    return "";
}

const char* roleBadge(HeadRole role)
{
    switch (role) {
    case HeadRole::PreviousToken: return "prev";
    case HeadRole::FirstToken: return "first";
    case HeadRole::Self: return "self";
    case HeadRole::DuplicateToken: return "dup";
    case HeadRole::Induction: return "ind";
    }
    return "";
}

double roleScore(const RoleScores& s, HeadRole role)
{
    switch (role) {
    case HeadRole::PreviousToken: return s.previousToken;
    case HeadRole::FirstToken: return s.firstToken;
    case HeadRole::Self: return s.self;
    case HeadRole::DuplicateToken: return s.duplicateToken;
    case HeadRole::Induction: return s.induction;
    }
    return kNaN;
}

namespace {

double& roleField(RoleScores& s, HeadRole role)
{
    switch (role) {
    case HeadRole::PreviousToken: return s.previousToken;
    case HeadRole::FirstToken: return s.firstToken;
    case HeadRole::Self: return s.self;
    case HeadRole::DuplicateToken: return s.duplicateToken;
    case HeadRole::Induction: break;
    }
    return s.induction;
}

} // namespace

std::vector<GroupRoleScores> rolesByKeyValueGroup(const HeadRoleScores& scores, const ModelConfig& config)
{
    std::vector<GroupRoleScores> out;
    const int size = scores.heads == config.heads ? config.groupSize() : 1;
    for (int l = 0; l < scores.layers; ++l)
        for (int first = 0; first < scores.heads; first += size) {
            GroupRoleScores g{l, first / size, first, first + size - 1, {}, {}};
            for (int r = 0; r < kHeadRoleCount; ++r) {
                const HeadRole role = static_cast<HeadRole>(r);
                double sum = 0.0, top = kNaN;
                int counted = 0;
                for (int h = first; h <= g.lastHead; ++h) {
                    const double v = roleScore(scores.at(l, h), role);
                    if (!std::isfinite(v)) continue;
                    sum += v;
                    top = counted == 0 ? v : std::max(top, v);
                    ++counted;
                }
                roleField(g.mean, role) = counted > 0 ? sum / counted : kNaN;
                roleField(g.max, role) = top;
            }
            out.push_back(g);
        }
    return out;
}

RoleScores measureRoles(const Matrix& A, const std::vector<int>& ids)
{
    const int T = static_cast<int>(ids.size());
    assert(A.rows() == T && A.cols() == T);
    RoleScores s;
    double previous = 0.0, first = 0.0, self = 0.0, duplicate = 0.0, induction = 0.0;
    int positional = 0, repeated = 0;
    for (int i = 1; i < T; ++i) {
        previous += A(i, i - 1);
        first += A(i, 0);
        self += A(i, i);
        ++positional;
    }
    for (int i = 0; i < T; ++i) {
        // Earlier copies of this query's token, and the distinct positions right after them.
        std::set<int> copies, successors;
        for (int j = 0; j < i; ++j)
            if (ids[static_cast<std::size_t>(j)] == ids[static_cast<std::size_t>(i)]) {
                copies.insert(j);
                successors.insert(j + 1);  // j < i, so j + 1 <= i: always a key the query could see
            }
        if (copies.empty()) continue;
        for (int j : copies) duplicate += A(i, j);
        for (int j : successors) induction += A(i, j);
        ++repeated;
    }
    s.previousToken = meanOr(previous, positional);
    s.firstToken = meanOr(first, positional);
    s.self = meanOr(self, positional);
    s.duplicateToken = meanOr(duplicate, repeated);
    s.induction = meanOr(induction, repeated);
    return s;
}

int roleProbeHalf(const ModelConfig& c)
{
    return std::max(0, std::min({32, c.contextLength / 2, c.vocabSize}));
}

std::vector<int> makeRoleProbe(int vocabSize, int half, std::uint64_t seed)
{
    // Distinct ids, so the second copy's tokens each have exactly one earlier occurrence and the token
    // after it is unambiguous. Rejection sampling is quick: half is at most the vocabulary and usually tiny.
    half = std::max(0, std::min(half, vocabSize));  // more distinct ids than the vocabulary has would never end
    SeededRandom random(seed);
    std::vector<int> probe;
    std::set<int> used;
    while (static_cast<int>(probe.size()) < half) {
        const int id = static_cast<int>(random.nextU64() % static_cast<std::uint64_t>(vocabSize));
        if (used.insert(id).second) probe.push_back(id);
    }
    probe.insert(probe.end(), probe.begin(), probe.end());
    return probe;
}

Result<HeadRoleScores> computeHeadRoles(const Model& model, const std::vector<int>& ids,
                                        const AttentionSettings& settings, std::uint64_t probeSeed)
{
    const ModelConfig& c = model.config;
    HeadRoleScores out;
    out.layers = c.layers;
    out.heads = c.heads;
    out.positionalFromSentence = !ids.empty();

    // 1. The probe keeps every setting but the blocked keys, which name positions of the sentence.
    AttentionSettings probeSettings = settings;
    probeSettings.blockedKeys.clear();
    out.probeIds = makeRoleProbe(c.vocabSize, roleProbeHalf(c), probeSeed);
    if (out.probeIds.size() < 4) return Result<HeadRoleScores>::fail("the model's context or vocabulary is too small for the role probe.");
    Result<ForwardTrace> probe = forward(model, out.probeIds, probeSettings);
    if (!probe) return Result<HeadRoleScores>::fail(probe.error());

    // 2. The sentence, when there is one, for the scores that need no repeated token.
    std::optional<ForwardTrace> sentence;
    if (!ids.empty()) {
        Result<ForwardTrace> s = forward(model, ids, settings);
        if (!s) return Result<HeadRoleScores>::fail(s.error());
        sentence = std::move(*s);
    }

    out.scores.resize(static_cast<std::size_t>(c.layers * c.heads));
    for (int l = 0; l < c.layers; ++l)
        for (int h = 0; h < c.heads; ++h) {
            RoleScores onProbe = measureRoles(probe->weights(l, h), out.probeIds);
            if (sentence) {
                const RoleScores onSentence = measureRoles(sentence->weights(l, h), ids);
                onProbe.previousToken = onSentence.previousToken;
                onProbe.firstToken = onSentence.firstToken;
                onProbe.self = onSentence.self;
            }
            out.scores[static_cast<std::size_t>(l * c.heads + h)] = onProbe;
        }

    // 3. Chance: the same measurements of uniform attention over what each query may see.
    out.chance = measureRoles(uniformAttention(static_cast<int>(out.probeIds.size()), probeSettings), out.probeIds);
    if (sentence) {
        const RoleScores onSentence = measureRoles(uniformAttention(static_cast<int>(ids.size()), settings), ids);
        out.chance.previousToken = onSentence.previousToken;
        out.chance.firstToken = onSentence.firstToken;
        out.chance.self = onSentence.self;
    }
    return Result<HeadRoleScores>::ok(std::move(out));
}

double roleThreshold(HeadRole role) { return role == HeadRole::FirstToken ? 0.5 : 0.4; }

std::vector<HeadRole> roleBadges(const RoleScores& scores, const RoleScores& chance)
{
    std::vector<HeadRole> badges;
    for (int r = 0; r < kHeadRoleCount; ++r) {
        const HeadRole role = static_cast<HeadRole>(r);
        const double score = roleScore(scores, role), base = roleScore(chance, role);
        // NaN compares false: a score the sequence could not measure never earns a badge.
        if (score >= roleThreshold(role) && !(score < 2.0 * base)) badges.push_back(role);
    }
    return badges;
}

std::vector<std::vector<HeadRole>> roleBadges(const HeadRoleScores& scores)
{
    std::vector<std::vector<HeadRole>> badges;
    badges.reserve(scores.scores.size());
    for (const RoleScores& s : scores.scores) badges.push_back(roleBadges(s, scores.chance));
    return badges;
}

} // namespace attnscope
