#pragma once
// A Hugging Face tokenizer.json whose model is "Unigram" (T5 and Flan-T5 ship one beside, or instead of,
// spiece.model): the text goes through the file's pipeline (added tokens, then the normaliser, for T5
// SentencePiece's precompiled character map, then the pre-tokenizer, Metaspace's "▁"), and each piece is
// cut into the vocabulary's pieces by Viterbi: the cut whose pieces' scores (log probabilities) sum highest.
// A character no piece of its own length covers may still be an unknown token, scored as the lowest score
// less 10 as SentencePiece does; consecutive unknowns become one. The post-processor's special tokens are
// not added: the loader adds the model's own (T5's </s>).
//
// Dimension letters: V vocabulary.
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/result.h"
#include "core/text/pipeline.h"
#include "core/text/tokenizer.h"

namespace attnscope {

class UnigramTokenizer final : public Tokenizer {
public:
    // Fails with a sentence naming the file: not a tokenizer.json with a Unigram model, a vocabulary entry
    // that is not [piece, finite score], more than 4 million pieces, an unk_id outside them, byte fallback
    // (not implemented), or a pipeline stage AttnScope does not implement.
    static Result<std::shared_ptr<const UnigramTokenizer>> fromTokenizerJson(const std::string& path);

    Result<TokenizedText> encode(std::string_view utf8) const override;
    int vocabSize() const override { return static_cast<int>(m_pieces.size()); }
    std::string displayToken(int id) const override;
    std::string kind() const override { return "unigram"; }

    DecodedText decodeWithSpans(const std::vector<int>& ids) const override;  // "▁" reads as a space

    // The best cut of one pre-tokenized piece, appended to `ids` (and the byte of the piece each starts at to
    // `starts`); fails when a character is unknown and the model has no unknown token.
    Status segment(std::string_view piece, std::vector<int>& ids, std::vector<int>* starts = nullptr) const;

private:
    UnigramTokenizer() = default;
    std::vector<std::string> m_pieces;  // (V)
    std::vector<double> m_scores;       // (V)
    std::unordered_map<std::string, int> m_idOf;
    std::size_t m_longestPiece = 0;     // bytes
    int m_unknownId = -1;
    double m_unknownScore = 0.0;
    TokenizerPipeline m_pipeline;
    std::unordered_set<int> m_specialIds;  // added tokens marked special
};

} // namespace attnscope
