#include "core/text/sentencepiecetokenizer.h"

#include <algorithm>
#include <exception>
#include <filesystem>

#include <nlohmann/json.hpp>
#include <sentencepiece_processor.h>

#include "core/text/filetext.h"
#include "core/text/utf8.h"
#include "core/text/words.h"

namespace attnscope {

namespace {

constexpr std::size_t kMaxSentencePieces = 4u << 20;
constexpr std::uintmax_t kMaxModelBytes = 64u << 20;
constexpr std::size_t kMaxVocabularyBytes = 256u << 20;

} // namespace

int PieceVocabulary::idOrMinusOne(const std::string& piece) const
{
    const auto it = idOf.find(piece);
    return it == idOf.end() ? -1 : it->second;
}

Result<std::shared_ptr<const PieceVocabulary>> readPieceVocabulary(const std::string& path)
{
    using R = Result<std::shared_ptr<const PieceVocabulary>>;
    const std::string file = "'" + path + "'";
    Result<nlohmann::json> j = readJsonObject(path, kMaxVocabularyBytes);
    if (!j) return R::fail(j.error());
    if (j->size() > kMaxSentencePieces)
        return R::fail(file + " lists " + std::to_string(j->size()) + " pieces; at most " + std::to_string(kMaxSentencePieces) + " are read.");
    auto v = std::make_shared<PieceVocabulary>();
    v->pieceOf.resize(j->size());
    std::vector<bool> seen(j->size(), false);
    for (const auto& [piece, id] : j->items()) {
        if (!id.is_number_integer() || id.get<long long>() < 0 || id.get<long long>() >= static_cast<long long>(j->size()))
            return R::fail(file + " gives the piece " + quoteJsonValue(nlohmann::json(piece)) + " the id " + quoteJsonValue(id) +
                           "; ids must be whole numbers from 0 to one less than the number of pieces.");
        const std::size_t i = id.get<std::size_t>();
        if (seen[i]) return R::fail(file + " gives the id " + std::to_string(i) + " to more than one piece.");
        if (!utf8::isValid(piece)) return R::fail(file + " holds a piece that is not valid UTF-8 (id " + std::to_string(i) + ").");
        seen[i] = true;
        v->pieceOf[i] = piece;
        v->idOf.emplace(piece, static_cast<int>(i));
    }
    v->unknownId = v->idOrMinusOne("<unk>");
    if (v->unknownId < 0) return R::fail(file + " has no \"<unk>\" piece for the pieces it lacks.");
    return R::ok(std::move(v));
}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

Result<std::shared_ptr<const SentencePieceTokenizer>> SentencePieceTokenizer::open(const std::string& modelPath,
                                                                                  std::shared_ptr<const PieceVocabulary> vocabulary)
{
    using R = Result<std::shared_ptr<const SentencePieceTokenizer>>;
    std::error_code ec;
    const std::uintmax_t bytes = std::filesystem::file_size(modelPath, ec);
    if (ec) return R::fail("the SentencePiece model '" + modelPath + "' cannot be read: " + ec.message() + ".");
    if (bytes > kMaxModelBytes)
        return R::fail("the SentencePiece model '" + modelPath + "' is " + std::to_string(bytes >> 20) + " MB; at most 64 MB is read.");
    std::shared_ptr<SentencePieceTokenizer> t(new SentencePieceTokenizer);
    t->m_processor = std::make_unique<sentencepiece::SentencePieceProcessor>();
    // The library reports most problems as a status, but some hostile files make it throw instead (a
    // zero-length piece stops its trie builder with an exception, found by fuzz/targets/marian_folder).
    try {
        if (const auto status = t->m_processor->Load(modelPath); !status.ok())
            return R::fail("the SentencePiece model '" + modelPath + "' could not be loaded: " + std::string(status.message()) + ".");
    } catch (const std::exception& e) {
        return R::fail("the SentencePiece model '" + modelPath + "' could not be loaded: " + e.what() + ".");
    } catch (...) {
        return R::fail("the SentencePiece model '" + modelPath + "' could not be loaded.");
    }
    t->m_vocabulary = std::move(vocabulary);
    if (t->m_vocabulary) t->findSpecialIds();
    return R::ok(std::move(t));
}

void SentencePieceTokenizer::findSpecialIds()
{
    m_specialIds.clear();
    for (int i = 0; i < m_processor->GetPieceSize(); ++i)
        if (m_processor->IsControl(i))
            if (const int id = m_vocabulary->idOrMinusOne(m_processor->IdToPiece(i)); id >= 0) m_specialIds.insert(id);
    for (int k = 0; k < m_extraIds; ++k) m_specialIds.insert(vocabSize() - 1 - k);
}

Result<std::shared_ptr<const SentencePieceTokenizer>> SentencePieceTokenizer::openWithOwnIds(const std::string& modelPath, int extraIds)
{
    using R = Result<std::shared_ptr<const SentencePieceTokenizer>>;
    R opened = open(modelPath, nullptr);
    if (!opened) return opened;
    if (extraIds < 0 || extraIds > 100000) return R::fail("the number of sentinel tokens (" + std::to_string(extraIds) + ") is not usable.");
    std::shared_ptr<SentencePieceTokenizer> t = std::const_pointer_cast<SentencePieceTokenizer>(*opened);
    const sentencepiece::SentencePieceProcessor& sp = *t->m_processor;
    auto v = std::make_shared<PieceVocabulary>();
    const int pieces = sp.GetPieceSize();
    if (pieces < 1 || static_cast<std::size_t>(pieces) > kMaxSentencePieces)
        return R::fail("the SentencePiece model '" + modelPath + "' has " + std::to_string(pieces) + " pieces, not a usable number.");
    v->pieceOf.reserve(std::size_t(pieces + extraIds));
    for (int i = 0; i < pieces; ++i) {
        // The file is a protobuf: nothing promises its pieces are text (found by fuzz/targets/t5_folder).
        v->pieceOf.push_back(sp.IdToPiece(i));
        if (!utf8::isValid(v->pieceOf.back()))
            return R::fail("the SentencePiece model '" + modelPath + "' holds a piece that is not valid UTF-8 (id " + std::to_string(i) + ").");
    }
    for (int k = extraIds - 1; k >= 0; --k) v->pieceOf.push_back("<extra_id_" + std::to_string(k) + ">");
    for (std::size_t i = 0; i < v->pieceOf.size(); ++i) v->idOf.emplace(v->pieceOf[i], static_cast<int>(i));
    v->unknownId = sp.unk_id();
    if (v->unknownId < 0 || v->unknownId >= pieces)
        return R::fail("the SentencePiece model '" + modelPath + "' has no unknown piece for the text it cannot cut.");
    t->m_vocabulary = std::move(v);
    t->m_extraIds = extraIds;
    t->findSpecialIds();
    return R::ok(std::move(t));
}

Result<TokenizedText> SentencePieceTokenizer::encode(std::string_view utf8) const
{
    using R = Result<TokenizedText>;
    if (const std::size_t bad = utf8::firstInvalidByte(utf8); bad != std::string_view::npos) return R::fail(utf8::invalidMessage(utf8, bad));
    TokenizedText out;
    // T5's sentinels "<extra_id_N>" (N below the count) are cut out first, each one token.
    static constexpr std::string_view kOpen = "<extra_id_";
    std::size_t done = 0;
    for (std::size_t at = m_extraIds > 0 ? utf8.find(kOpen) : std::string_view::npos; at != std::string_view::npos;
         at = utf8.find(kOpen, at + 1)) {
        std::size_t end = at + kOpen.size();
        int n = 0;
        while (end < utf8.size() && end - at - kOpen.size() < 6 && utf8[end] >= '0' && utf8[end] <= '9') n = n * 10 + (utf8[end++] - '0');
        const std::size_t digits = end - at - kOpen.size();
        if (digits == 0 || (digits > 1 && utf8[at + kOpen.size()] == '0') || end >= utf8.size() || utf8[end] != '>' || n >= m_extraIds)
            continue;
        if (Status s = encodePieces(utf8.substr(done, at - done), int(done), out); !s.ok()) return R::fail(s.error());
        const int id = vocabSize() - 1 - n;
        out.ids.push_back(id);
        out.tokens.push_back(m_vocabulary->pieceOf[std::size_t(id)]);
        out.spans.push_back({int(at), int(end + 1), true});
        done = end + 1;
        at = end;
    }
    if (Status s = encodePieces(utf8.substr(done), int(done), out); !s.ok()) return R::fail(s.error());
    return R::ok(std::move(out));
}

Status SentencePieceTokenizer::encodePieces(std::string_view text, int offset, TokenizedText& out) const
{
    if (text.empty()) return {};
    // SentencePiece keeps each piece's bytes of the text it was given (before its normalisation).
    sentencepiece::ImmutableSentencePieceText cut;
    try {
        if (const auto status = m_processor->Encode(text, cut.mutable_proto()); !status.ok())
            return Status::failure("SentencePiece could not split the text: " + std::string(status.message()) + ".");
    } catch (const std::exception& e) {
        return Status::failure(std::string("SentencePiece could not split the text: ") + e.what() + ".");
    }
    for (const auto& p : cut.pieces()) {
        const int id = m_vocabulary->idOrMinusOne(p.piece());
        out.ids.push_back(id >= 0 ? id : m_vocabulary->unknownId);
        out.tokens.push_back(m_vocabulary->pieceOf[std::size_t(out.ids.back())]);
        // A hostile model file cannot move a span outside the text: the library's offsets are clamped.
        const int begin = int(std::min<std::size_t>(p.begin(), text.size()));
        const int end = int(std::clamp<std::size_t>(p.end(), std::size_t(begin), text.size()));
        out.spans.push_back({offset + begin, offset + end, false});
    }
    return {};
}

DecodedText SentencePieceTokenizer::decodeWithSpans(const std::vector<int>& ids) const
{
    return decodePieces(ids, m_vocabulary->pieceOf, m_specialIds);
}

std::string SentencePieceTokenizer::displayToken(int id) const
{
    if (id < 0 || id >= vocabSize()) return {};
    return m_vocabulary->pieceOf[std::size_t(id)];
}

} // namespace attnscope
