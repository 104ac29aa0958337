#pragma once
// BERT's WordPiece tokenizer as published: the special tokens written in the text ("[MASK]", "[SEP]", ...)
// are kept whole; everything between them goes through the basic tokenizer (text/bertnormalizer.h); each
// word is then cut greedily, longest match first, into vocabulary pieces, every piece after the first
// spelled with the "##" continuation prefix. A word with no such cut, or longer than 100 characters, is
// [UNK]. The sequence is wrapped as [CLS] ... [SEP]. Tokens are shown as the vocabulary spells them ("##ing").
//
// Files: vocab.txt (one token per line, the id is the line's index) or a Hugging Face tokenizer.json whose
// model is WordPiece.
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/text/bertnormalizer.h"
#include "core/text/tokenizer.h"

namespace attnscope {

// What the model folder says about casing; what it leaves unset is taken from tokenizer.json's normalizer,
// and failing that the casing is inferred from the vocabulary (no upper-case letter in it: uncased).
struct WordPieceSettings {
    std::optional<bool> lowerCase;     // tokenizer_config.json's do_lower_case
    std::optional<bool> stripAccents;  // tokenizer_config.json's strip_accents; unset follows lowerCase
    std::optional<bool> handleChineseChars;  // tokenizer_config.json's tokenize_chinese_chars (default true)
};

class WordPieceTokenizer final : public Tokenizer {
public:
    static Result<std::shared_ptr<const WordPieceTokenizer>> fromVocabTxt(const std::string& path,
                                                                           const WordPieceSettings& settings = {});
    static Result<std::shared_ptr<const WordPieceTokenizer>> fromTokenizerJson(const std::string& path,
                                                                               const WordPieceSettings& settings = {});

    // Fails only on invalid UTF-8. Safe to call from several threads at once.
    Result<TokenizedText> encode(std::string_view utf8) const override;
    int vocabSize() const override { return static_cast<int>(m_tokens.size()); }
    std::string displayToken(int id) const override;
    std::string kind() const override { return "wordpiece"; }
    int maskTokenId() const override { return m_maskId; }
    DecodedText decodeWithSpans(const std::vector<int>& ids) const override;

    const BertTextOptions& textOptions() const { return m_options; }
    bool lowerCaseInferred() const { return m_lowerCaseInferred; }  // true when no file said
    int clsId() const { return m_clsId; }
    int sepId() const { return m_sepId; }
    int unkId() const { return m_unkId; }
    // The id of a token spelled exactly so ("##ing"), or -1.
    int idOf(const std::string& token) const;

private:
    WordPieceTokenizer() = default;
    struct Vocabulary;
    static Result<std::shared_ptr<const WordPieceTokenizer>> build(Vocabulary vocabulary, const WordPieceSettings& settings);
    // Appends the word's pieces to `ids` and the code point each starts at to `startChars`.
    void wordPieces(const std::string& word, std::vector<int>& ids, std::vector<int>& startChars) const;
    // Cuts text that starts at byte `offset` of the whole, with spans.
    void encodeSegment(std::string_view text, int offset, TokenizedText& out) const;

    std::vector<std::string> m_tokens;               // (V) id -> spelling, "" for ids no token has
    std::unordered_map<std::string, int> m_idOf;     // spelling -> id
    std::vector<std::pair<std::string, int>> m_specials;  // kept whole when written in the text, longest first
    BertTextOptions m_options;
    bool m_lowerCaseInferred = false;
    std::string m_prefix = "##";
    int m_maxWordChars = 100;
    int m_longestPiece = 0;  // in code points, without the prefix: no longer candidate can match
    int m_unkId = -1, m_clsId = -1, m_sepId = -1, m_maskId = -1;
};

} // namespace attnscope
