#pragma once
#include <vector>

#include "core/text/tokenizer.h"

namespace attnscope {

// The words of a text as the word tokenizers see them: lower-cased, split on white space, and every
// punctuation mark a word of its own; with `spans`, each word's bytes in the text are appended there. Fails
// with a sentence when the text is not valid UTF-8.
Result<std::vector<std::string>> splitIntoWords(std::string_view utf8, std::vector<TextSpan>* spans = nullptr);

// The random model's tokenizer: lower-cases, splits on white space and punctuation (each punctuation
// mark is a token of its own), and hashes every word into the vocabulary, so any sentence works and
// each token's display string is its word. Lower-casing covers ASCII, Latin-1, Greek and Cyrillic.
class WordTokenizer final : public Tokenizer {
public:
    explicit WordTokenizer(int vocabSize) : m_vocabSize(vocabSize) {}
    Result<TokenizedText> encode(std::string_view utf8) const override;
    int vocabSize() const override { return m_vocabSize; }
    std::string displayToken(int id) const override;
    std::string kind() const override { return "word"; }
    DecodedText decodeWithSpans(const std::vector<int>& ids) const override;

    int idOf(std::string_view lowerCasedWord) const;

private:
    int m_vocabSize;
};

} // namespace attnscope
