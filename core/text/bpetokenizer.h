#pragma once
// GPT-2's byte-level BPE tokenizer, as OpenAI published it: text is split by GPT-2's pre-tokenisation
// pattern, each piece's UTF-8 bytes become symbols, and adjacent symbols are merged by rank until no
// ranked pair is left. The ids equal the reference tokenizer's for any valid UTF-8 text.
//
// Files: vocab.json (symbol string -> id) with merges.txt ("a b" per line, rank = order), or a Hugging
// Face tokenizer.json holding the same two tables under "model". Symbol strings spell bytes through
// GPT-2's bytes-to-unicode table (a space is 'Ġ'); the loader turns them back into bytes.
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "text/tokenizer.h"

namespace attnscope {

class Gpt2BpeTokenizer final : public Tokenizer {
public:
    static Result<std::shared_ptr<const Gpt2BpeTokenizer>> fromVocabAndMerges(const std::string& vocabPath,
                                                                              const std::string& mergesPath);
    static Result<std::shared_ptr<const Gpt2BpeTokenizer>> fromTokenizerJson(const std::string& path);

    ~Gpt2BpeTokenizer() override;
    Gpt2BpeTokenizer(const Gpt2BpeTokenizer&) = delete;
    Gpt2BpeTokenizer& operator=(const Gpt2BpeTokenizer&) = delete;

    // Safe to call from several threads at once: the compiled pattern is shared, match state is per call.
    Result<TokenizedText> encode(std::string_view utf8) const override;
    int vocabSize() const override { return static_cast<int>(m_bytes.size()); }
    std::string displayToken(int id) const override;
    std::string kind() const override { return "gpt2-bpe"; }

    // The raw bytes a token stands for ("" for an id out of range) and the text of a whole sequence.
    const std::string& tokenBytes(int id) const;
    std::string decode(const std::vector<int>& ids) const;

private:
    Gpt2BpeTokenizer();
    struct Merge {
        int rank;
        int merged;  // the id of the joined symbol
    };
    struct Tables;
    static Result<std::shared_ptr<const Gpt2BpeTokenizer>> build(Tables tables);
    void bpe(std::string_view piece, std::vector<int>& ids) const;

    std::vector<std::string> m_bytes;                     // (V) id -> raw bytes
    std::unordered_map<std::string, int> m_idOfBytes;     // raw bytes -> id
    std::unordered_map<std::uint64_t, Merge> m_merges;    // (left id << 32 | right id) -> rank and result
    int m_byteId[256] = {};                               // the single-byte symbols
    void* m_pattern = nullptr;                            // pcre2_code_8*, kept opaque so callers need no PCRE2
};

// Shows a token's bytes to a person: a leading space as '·' (U+00B7), every complete UTF-8 character as
// itself, and every byte that is not part of one as "<0xF0>", so the result is always valid UTF-8.
std::string displayBytes(std::string_view bytes);

} // namespace attnscope
