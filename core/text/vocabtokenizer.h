#pragma once
// The built-in model's tokenizer: the word tokenizer's splitting (lower case, punctuation marks as tokens
// of their own) with a fixed vocabulary, read from vocab.txt (one token per line, the line number is the
// id). Words outside it become <unk>; every text starts with <bos>, the beginning-of-text token the model
// was trained with.
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/text/tokenizer.h"

namespace attnscope {

class VocabTokenizer final : public Tokenizer {
public:
    static constexpr std::string_view kBos = "<bos>";
    static constexpr std::string_view kUnk = "<unk>";

    // The vocabulary must hold <bos> and <unk>, each token once, none empty, holding white space or
    // not valid UTF-8.
    static Result<VocabTokenizer> fromTokens(std::vector<std::string> tokens);
    // vocab.txt's contents: one token per line ('\n' or "\r\n"), at most 1,000,000 lines.
    static Result<VocabTokenizer> fromText(std::string_view text, const std::string& fileName);

    Result<TokenizedText> encode(std::string_view utf8) const override;
    int vocabSize() const override { return static_cast<int>(m_tokens.size()); }
    std::string displayToken(int id) const override;
    std::string kind() const override { return "word-vocab"; }
    DecodedText decodeWithSpans(const std::vector<int>& ids) const override;  // <bos>, <eos>: special

    int bos() const { return m_bos; }
    int unk() const { return m_unk; }
    int idOf(std::string_view token) const;  // -1 when absent
    const std::vector<std::string>& tokens() const { return m_tokens; }
    std::string toText() const;              // vocab.txt's contents
    // The same vocabulary without the leading <bos>: the built-in translator's decoder tokenizer, whose
    // start token the encoder–decoder forward adds itself.
    VocabTokenizer withoutBos() const;

private:
    std::vector<std::string> m_tokens;
    std::unordered_map<std::string, int> m_ids;
    int m_bos = 0, m_unk = 1;
    bool m_addsBos = true;
};

// A vocabulary for a corpus: <bos>, <unk>, then its words by falling frequency (ties alphabetical), at most
// maxSize tokens in all. Lines are documents; the result does not depend on anything but the text.
Result<VocabTokenizer> buildVocabulary(std::string_view corpus, int maxSize);

} // namespace attnscope
