#pragma once
// Byte-pair encoding tokenizers: GPT-2's, as OpenAI published it, and the Hugging Face tokenizer.json kind
// that Llama-family models ship, whichever of its two forms the file declares:
//   - byte-level BPE (GPT-2, Llama 3, Qwen2, SmolLM): the text is split by a pattern, each piece's UTF-8
//     bytes become symbols spelled in GPT-2's printable byte alphabet (a space is 'Ġ'), and adjacent
//     symbols merge by rank until no ranked pair is left;
//   - SentencePiece-style BPE (Llama 2, TinyLlama, Mistral): spaces become '▁' (and one is put in front),
//     the symbols are characters, and a character the vocabulary lacks falls back to its bytes as
//     "<0x0A>"-style tokens.
// Both merge in Hugging Face's order (lowest rank first, leftmost on ties). See text/pipeline.h for what the
// file's normalizer, pre-tokenizer, added tokens and post-processor do around the merges.
//
// Files: vocab.json (symbol string -> id) with merges.txt ("a b" per line, rank = order), or a tokenizer.json
// holding the same two tables under "model" and the stages around them.
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/text/pipeline.h"
#include "core/text/tokenizer.h"

namespace attnscope {

class BpeTokenizer final : public Tokenizer {
public:
    // GPT-2's published encoder: its pattern, byte-level merges, no added tokens.
    static Result<std::shared_ptr<const BpeTokenizer>> fromVocabAndMerges(const std::string& vocabPath,
                                                                          const std::string& mergesPath);
    // GPT-2's published encoder with the two tables read from a tokenizer.json (the rest of the file unused).
    static Result<std::shared_ptr<const BpeTokenizer>> fromTokenizerJson(const std::string& path);
    // Everything tokenizer.json declares, and tokenizer_config.json's add_bos_token / add_eos_token when
    // `tokenizerConfigPath` is not empty.
    static Result<std::shared_ptr<const BpeTokenizer>> fromTokenizerFiles(const std::string& tokenizerJsonPath,
                                                                          const std::string& tokenizerConfigPath);

    BpeTokenizer(const BpeTokenizer&) = delete;
    BpeTokenizer& operator=(const BpeTokenizer&) = delete;

    // Safe to call from several threads at once: the compiled patterns are shared, match state is per call.
    Result<TokenizedText> encode(std::string_view utf8) const override;
    int vocabSize() const override { return static_cast<int>(m_spelling.size()); }
    // GPT-2's encoder shows bytes ("·the"); a tokenizer.json one shows the vocabulary's spelling ("Ġthe",
    // "▁the", "<0x0A>"), as Hugging Face's convert_ids_to_tokens does.
    std::string displayToken(int id) const override;
    // "gpt2-bpe", "byte-level-bpe", "sentencepiece-bpe", or "bpe" for a tokenizer.json pipeline that is
    // neither (BPE over characters with no byte alphabet, no ▁ marker and no byte fallback).
    std::string kind() const override { return m_kind; }
    DecodedText decodeWithSpans(const std::vector<int>& ids) const override;

    // The raw bytes a token stands for ("" for an id out of range) and the text of a whole sequence.
    const std::string& tokenBytes(int id) const;
    std::string decode(const std::vector<int>& ids) const;
    // The vocabulary's own spelling of a token ("" for an id out of range).
    const std::string& spelling(int id) const;

private:
    BpeTokenizer() = default;
    struct Merge {
        int rank;
        int merged;  // the id of the joined symbol
    };
    struct Tables;
    static Status readBpeModel(const std::string& path, Tables& tables, nlohmann::json& doc);
    static Result<std::shared_ptr<const BpeTokenizer>> build(Tables tables);
    // The piece's first symbols and the byte each starts at; merge keeps the starts of the symbols it keeps.
    void initialSymbols(std::string_view piece, std::vector<int>& symbols, std::vector<int>& starts) const;
    void merge(std::vector<int>& symbols, std::vector<int>& starts) const;

    std::vector<std::string> m_spelling;                // (V) id -> vocabulary spelling
    std::vector<std::string> m_bytes;                   // (V) id -> raw bytes
    std::unordered_map<std::string, int> m_idOf;        // model vocabulary spelling -> id
    std::unordered_map<std::uint64_t, Merge> m_merges;  // (left id << 32 | right id) -> rank and result
    int m_byteId[256] = {};                             // byte-level: the single-byte symbols
    std::string m_byteSpelling[256];                    // byte-level: each byte in GPT-2's alphabet
    int m_byteFallbackId[256] = {};                     // "<0x0A>" tokens, -1 where absent
    TokenizerPipeline m_pipeline;
    std::unordered_set<int> m_specialIds;               // added tokens marked special, the post-processor's
    bool m_byteFallback = false, m_fuseUnknown = false, m_ignoreMerges = false;
    int m_unknownId = -1;
    bool m_showBytes = true;  // GPT-2's display
    std::string m_kind = "gpt2-bpe";
};

// Shows a token's bytes to a person: a leading space as '·' (U+00B7), every complete UTF-8 character as
// itself, and every byte that is not part of one as "<0xF0>", so the result is always valid UTF-8.
std::string displayBytes(std::string_view bytes);

} // namespace attnscope
