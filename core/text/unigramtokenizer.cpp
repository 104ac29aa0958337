#include "core/text/unigramtokenizer.h"

#include <cmath>
#include <limits>

#include "core/text/filetext.h"
#include "core/text/utf8.h"
#include "core/text/words.h"

namespace attnscope {

namespace {

constexpr std::size_t kMaxPieces = 4u << 20;
constexpr double kUnknownPenalty = 10.0;  // SentencePiece's and Hugging Face's

} // namespace

Result<std::shared_ptr<const UnigramTokenizer>> UnigramTokenizer::fromTokenizerJson(const std::string& path)
{
    using R = Result<std::shared_ptr<const UnigramTokenizer>>;
    const std::string file = "'" + path + "'";
    Result<nlohmann::json> read = readJsonObject(path, kMaxTokenizerFileBytes);
    if (!read) return R::fail(read.error());
    const nlohmann::json& doc = *read;
    const auto model = doc.find("model");
    if (model == doc.end() || !model->is_object()) return R::fail(file + " has no \"model\" object, so it is not a tokenizer.json.");
    if (!model->contains("type") || (*model)["type"] != "Unigram")
        return R::fail(file + " does not describe a Unigram model (its model type is " +
                       quoteJsonValue(model->contains("type") ? (*model)["type"] : nlohmann::json()) + ").");
    if (model->contains("byte_fallback") && (*model)["byte_fallback"] == true)
        return R::fail(file + " asks for byte fallback, which AttnScope does not implement for Unigram models.");
    const auto vocab = model->find("vocab");
    if (vocab == model->end() || !vocab->is_array() || vocab->empty())
        return R::fail(file + " has a Unigram model without a \"vocab\" list of [piece, score] pairs.");
    if (vocab->size() > kMaxPieces)
        return R::fail(file + " lists " + std::to_string(vocab->size()) + " pieces; at most " + std::to_string(kMaxPieces) + " are read.");

    std::shared_ptr<UnigramTokenizer> t(new UnigramTokenizer);
    t->m_pieces.reserve(vocab->size());
    t->m_scores.reserve(vocab->size());
    double lowest = std::numeric_limits<double>::infinity();
    for (const nlohmann::json& entry : *vocab) {
        const int id = static_cast<int>(t->m_pieces.size());
        if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() || !entry[1].is_number() ||
            !std::isfinite(entry[1].get<double>()))
            return R::fail(file + " has a vocabulary entry (id " + std::to_string(id) + ") that is not a [piece, score] pair.");
        std::string piece = entry[0].get<std::string>();
        if (!utf8::isValid(piece)) return R::fail(file + " holds a piece that is not valid UTF-8 (id " + std::to_string(id) + ").");
        const double score = entry[1].get<double>();
        lowest = std::min(lowest, score);
        t->m_longestPiece = std::max(t->m_longestPiece, piece.size());
        t->m_idOf.emplace(piece, id);  // a repeated piece keeps its first id
        t->m_pieces.push_back(std::move(piece));
        t->m_scores.push_back(score);
    }
    t->m_unknownScore = lowest - kUnknownPenalty;
    if (const auto unk = model->find("unk_id"); unk != model->end() && !unk->is_null()) {
        if (!unk->is_number_integer() || unk->get<long long>() < 0 || unk->get<long long>() >= static_cast<long long>(t->m_pieces.size()))
            return R::fail(file + " gives the Unigram model the unk_id " + quoteJsonValue(*unk) + ", which is not one of its pieces.");
        t->m_unknownId = unk->get<int>();
    }
    Result<TokenizerPipeline> pipeline = readPipeline(doc, path, nullptr, "", [&t](const std::string& s) {
        const auto it = t->m_idOf.find(s);
        return it == t->m_idOf.end() ? -1 : it->second;
    });
    if (!pipeline) return R::fail(pipeline.error());
    t->m_pipeline = std::move(*pipeline);
    for (const AddedToken& a : t->m_pipeline.addedTokens)
        if (a.special) t->m_specialIds.insert(a.id);
    for (const AddedToken& a : t->m_pipeline.addedTokens)
        if (a.id < 0 || a.id >= t->vocabSize())
            return R::fail(file + " adds the token " + quoteJsonValue(nlohmann::json(a.content)) + " with the id " + std::to_string(a.id) +
                           ", outside its " + std::to_string(t->vocabSize()) + " pieces.");
    return R::ok(std::move(t));
}

Status UnigramTokenizer::segment(std::string_view piece, std::vector<int>& ids, std::vector<int>* starts) const
{
    // best[e]: the highest total score of a cut of piece[0, e); from[e]: where its last piece starts and
    // which it is (-1: an unknown character). Only character boundaries are reached.
    const std::size_t n = piece.size();
    constexpr double kNone = -std::numeric_limits<double>::infinity();
    std::vector<double> best(n + 1, kNone);
    std::vector<std::pair<std::size_t, int>> from(n + 1, {0, -1});
    best[0] = 0.0;
    std::string key;
    for (std::size_t s = 0; s < n;) {
        std::size_t next = s;
        utf8::next(piece, next);  // the end of the character at s
        next = std::min(next, n);
        if (best[s] != kNone) {
            bool single = false;
            for (std::size_t e = next; e <= n && e - s <= m_longestPiece;) {
                key.assign(piece.substr(s, e - s));
                if (const auto it = m_idOf.find(key); it != m_idOf.end()) {
                    const double total = best[s] + m_scores[std::size_t(it->second)];
                    if (total > best[e]) {
                        best[e] = total;
                        from[e] = {s, it->second};
                    }
                    single |= e == next;
                }
                if (e == n) break;
                utf8::next(piece, e);
                e = std::min(e, n);
            }
            // A character without a piece of its own may be an unknown token.
            if (!single) {
                const double total = best[s] + m_unknownScore;
                if (total > best[next]) {
                    best[next] = total;
                    from[next] = {s, -1};
                }
            }
        }
        s = next;
    }
    if (best[n] == kNone) return Status::failure("the text cannot be cut into the tokenizer's pieces.");
    std::vector<std::pair<std::size_t, int>> cut;  // (start, piece)
    for (std::size_t e = n; e > 0; e = from[e].first) cut.push_back(from[e]);
    bool previousUnknown = false;
    for (auto it = cut.rbegin(); it != cut.rend(); ++it) {
        const auto [start, id] = *it;
        if (id < 0) {
            if (m_unknownId < 0) return Status::failure("the text holds a character the tokenizer has no piece for, and it has no unknown token.");
            if (!previousUnknown) {  // consecutive unknowns become one
                ids.push_back(m_unknownId);
                if (starts) starts->push_back(int(start));
            }
            previousUnknown = true;
            continue;
        }
        ids.push_back(id);
        if (starts) starts->push_back(int(start));
        previousUnknown = id == m_unknownId;
    }
    return {};
}

Result<TokenizedText> UnigramTokenizer::encode(std::string_view utf8) const
{
    using R = Result<TokenizedText>;
    if (const std::size_t bad = utf8::firstInvalidByte(utf8); bad != std::string_view::npos) return R::fail(utf8::invalidMessage(utf8, bad));
    std::vector<TextUnit> units;
    if (Status s = m_pipeline.split(utf8, units); !s.ok()) return R::fail(s.error());
    TokenizedText out;
    std::vector<int> starts;
    for (const TextUnit& u : units) {
        if (u.id >= 0) {
            out.ids.push_back(u.id);
            out.spans.push_back({u.matched.begin, u.matched.end, u.special});
            continue;
        }
        starts.clear();
        if (Status s = segment(u.piece.text, out.ids, &starts); !s.ok()) return R::fail(s.error());
        for (std::size_t t = 0; t < starts.size(); ++t) {
            const std::size_t end = t + 1 < starts.size() ? std::size_t(starts[t + 1]) : u.piece.text.size();
            const ByteRange r = u.piece.originOf(std::size_t(starts[t]), end);
            out.spans.push_back({r.begin, r.end, false});
        }
    }
    for (int id : out.ids) out.tokens.push_back(displayToken(id));
    return R::ok(std::move(out));
}

DecodedText UnigramTokenizer::decodeWithSpans(const std::vector<int>& ids) const
{
    return decodePieces(ids, m_pieces, m_specialIds);
}

std::string UnigramTokenizer::displayToken(int id) const
{
    if (id < 0 || id >= vocabSize()) return {};
    return m_pieces[std::size_t(id)];
}

} // namespace attnscope
