#pragma once
// What a Hugging Face tokenizer does to text before its BPE model sees it, as tokenizer.json declares it:
//   1. added tokens ("<s>", "<|im_start|>") are cut out of the text first, whole, with the leftmost-longest
//      match (those marked "normalized" are looked for again after normalising);
//   2. the normalizer rewrites the rest (Prepend "▁", Replace " " by "▁", Unicode NFC...);
//   3. the pre-tokenizer splits it into pieces (a regular expression, digits, Metaspace's "▁" handling,
//      and ByteLevel, which hands the model bytes spelled in GPT-2's printable alphabet);
//   4. the post-processor puts special tokens around the ids (the BOS token of Llama).
// The model (BPE) then turns each piece into ids on its own. Reading these stages from the file is in
// pipelinejson.cpp; running them is here.
#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "core/text/alignedtext.h"
#include "core/text/charsmap.h"
#include "core/text/regex.h"

namespace attnscope {

struct AddedToken {
    std::string content;
    int id = 0;
    bool singleWord = false;  // only when not inside a word
    bool lstrip = false;      // takes the white space on its left with it
    bool rstrip = false;      // and on its right
    bool normalized = true;   // matched in the normalised text rather than the original
    bool special = false;
};

struct NormalizerStep {
    enum class Kind { Prepend, Replace, Nfc, Nfd, Nfkc, Nfkd, Precompiled, Strip };
    Kind kind = Kind::Nfc;
    std::string text;              // Prepend: the prefix; Replace: the replacement
    std::optional<Regex> pattern;  // Replace: what is replaced
    std::shared_ptr<const CharsMap> charsMap;  // Precompiled: SentencePiece's character map (T5)
    bool left = false, right = false;          // Strip: which ends lose their white space
};

// How a split treats what its pattern matched (Hugging Face's SplitDelimiterBehavior).
enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

struct PreTokenizerStep {
    enum class Kind { Split, ByteLevel, Digits, Metaspace, WhitespaceSplit };
    enum class Prepend { Always, First, Never };
    Kind kind = Kind::Split;
    std::optional<Regex> pattern;  // Split; ByteLevel with use_regex; Digits; Metaspace with split; WhitespaceSplit
    SplitBehavior behavior = SplitBehavior::Isolated;
    bool invert = false;           // Split: the pieces are what the pattern does not match
    bool addPrefixSpace = false;   // ByteLevel
    std::string replacement;       // Metaspace: what stands for a space, "▁"
    Prepend prepend = Prepend::Always;
};

// A stretch of text on its way to the model, each byte knowing where in the input it came from; `atStart`
// when it begins where the whole text begins (which Metaspace's "first" scheme asks).
struct Piece {
    AlignedText text;
    bool atStart = false;
};

// One unit of the split text: an added token's id and the input bytes it was matched in, or a piece for
// the model (id -1).
struct TextUnit {
    int id = -1;
    AlignedText piece;
    ByteRange matched;
    bool special = false;  // an added token the file marks special
};

class TokenizerPipeline {
public:
    std::vector<AddedToken> addedTokens;
    std::vector<NormalizerStep> normalizers;
    std::vector<PreTokenizerStep> preTokenizers;  // ByteLevel, if present, is the last
    std::vector<int> prefix, suffix;              // special tokens the post-processor puts around the ids

    bool byteLevel() const { return !preTokenizers.empty() && preTokenizers.back().kind == PreTokenizerStep::Kind::ByteLevel; }

    // Indexes the added tokens for matching; call once after filling them in.
    void prepare();

    // Steps 1-3 on valid UTF-8: added tokens as ids, everything else as pieces for the model. With a
    // ByteLevel pre-tokenizer the pieces are raw bytes (the model spells them in GPT-2's alphabet).
    Status split(std::string_view text, std::vector<TextUnit>& units) const;

    // Each step alone, for the tests.
    Status normalize(std::string& text) const;
    Status normalize(AlignedText& text) const;
    Status preTokenize(std::vector<Piece>& pieces) const;

private:
    struct Matcher {
        std::array<std::vector<int>, 256> byFirstByte;  // indices into addedTokens, longest first
        bool empty = true;
    };
    // Added tokens come out with the text they were matched in (id >= 0), the rest as pieces (id -1).
    void splitAdded(const AlignedText& text, bool atStart, const Matcher& matcher, std::vector<std::pair<int, Piece>>& out) const;

    Matcher m_original, m_normalized;
};

// Reads tokenizer.json's added_tokens, normalizer, pre_tokenizer and post_processor, and
// tokenizer_config.json's add_bos_token / add_eos_token (which decide the BOS and EOS tokens when
// present), into a prepared pipeline. `idOf` finds a token's id by its spelling (-1 when unknown). Fails
// with one sentence naming the file and what AttnScope cannot read.
Result<TokenizerPipeline> readPipeline(const nlohmann::json& tokenizerJson, const std::string& path,
                                       const nlohmann::json* tokenizerConfig, const std::string& configPath,
                                       const std::function<int(const std::string&)>& idOf);

// GPT-2's own pipeline: its pre-tokenisation pattern through ByteLevel, nothing else.
TokenizerPipeline gpt2Pipeline();

} // namespace attnscope
