#pragma once
// Marian's and T5's tokenizers: a SentencePiece model file (source.spm for the source, target.spm for the target)
// cuts the text into pieces with the real SentencePiece library (Debian's libsentencepiece), normalising it
// as the model file says, and the model folder's vocab.json gives each piece its id (Marian; T5 uses the
// file's own numbering); a piece the vocabulary lacks becomes <unk>. Both of a model's tokenizers share
// one vocabulary.
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/result.h"
#include "core/text/tokenizer.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace attnscope {

// vocab.json: piece -> id, every id in [0, size) used once.
struct PieceVocabulary {
    std::unordered_map<std::string, int> idOf;
    std::vector<std::string> pieceOf;  // (V) id -> piece
    int unknownId = -1;                // "<unk>"
    int idOrMinusOne(const std::string& piece) const;
};

// Fails with a sentence naming the file: not a JSON object of pieces to whole numbers, an id used twice or
// leaving a gap, more than 4 million entries, no "<unk>".
Result<std::shared_ptr<const PieceVocabulary>> readPieceVocabulary(const std::string& path);

class SentencePieceTokenizer final : public Tokenizer {
public:
    // Loads `modelPath` (at most 64 MB) with SentencePiece; fails with a sentence naming the file.
    static Result<std::shared_ptr<const SentencePieceTokenizer>> open(const std::string& modelPath,
                                                                     std::shared_ptr<const PieceVocabulary> vocabulary);
    // T5's form: the ids are the model file's own (piece i has id i), followed by `extraIds` sentinel
    // tokens, <extra_id_0> last, as Hugging Face's T5 tokenizer numbers them. A sentinel typed in the text
    // is one token, as the tokenizer's added tokens are; the text around it is cut on its own.
    static Result<std::shared_ptr<const SentencePieceTokenizer>> openWithOwnIds(const std::string& modelPath, int extraIds);
    ~SentencePieceTokenizer() override;

    Result<TokenizedText> encode(std::string_view utf8) const override;
    int vocabSize() const override { return static_cast<int>(m_vocabulary->pieceOf.size()); }
    std::string displayToken(int id) const override;  // the piece as the vocabulary spells it ("▁cat")
    std::string kind() const override { return "sentencepiece"; }
    // Pieces joined with "▁" read as a space; the model file's control pieces (<s>, </s>, <pad>) are special.
    DecodedText decodeWithSpans(const std::vector<int>& ids) const override;

private:
    SentencePieceTokenizer() = default;
    std::unique_ptr<sentencepiece::SentencePieceProcessor> m_processor;
    std::shared_ptr<const PieceVocabulary> m_vocabulary;
    int m_extraIds = 0;  // T5's sentinels, ids V - m_extraIds .. V - 1
    std::unordered_set<int> m_specialIds;  // the model file's control pieces, T5's sentinels
    void findSpecialIds();
    // Cuts text that starts at byte `offset` of the whole.
    Status encodePieces(std::string_view text, int offset, TokenizedText& out) const;
};

} // namespace attnscope
