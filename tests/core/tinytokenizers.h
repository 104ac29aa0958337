#pragma once
// tokenizer.json files of the kinds Llama-family models ship, written by the tests themselves: a BPE
// vocabulary and merges learned here from a small corpus, inside the stages each family declares.
//   byte-level (GPT-2's byte alphabet, 'Ġ' for a space):
//     "llama3"  the Llama 3 split pattern, ignore_merges, BOS <|begin_of_text|> from a TemplateProcessing
//     "qwen2"   NFC, the Qwen2 pattern (digits one by one), no BOS
//     "smollm"  Digits(individual) then ByteLevel with GPT-2's own pattern, no BOS
//   SentencePiece-style (characters, '▁' for a space, "<0x0A>" byte fallback):
//     "llama2"  the Prepend('▁') + Replace(' ', '▁') normalizer, BOS <s>
//     "mistral" the Metaspace pre-tokenizer (prepend_scheme "first"), BOS <s>
//     "nofallback" as llama2 without byte fallback: unknown characters become one fused <unk>
// Every file is a pure function of its kind, so expected ids computed once from a reference
// implementation (tests/data/llama-tokenizers/vectors.json) stay valid; the vectors file records a
// checksum of each tokenizer.json to catch a generator that drifted.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace tinytok {

const std::vector<std::string>& kinds();

bool isByteLevel(const std::string& kind);

// The training text: plain English words, a few numbers and punctuation. Characters outside it (accents,
// emoji, newlines, other scripts) are what the hard cases test.
inline const char* kCorpus =
    "the quick brown fox jumps over the lazy dog . the dog sleeps ; the fox runs . hello world , hello there ! "
    "llamas eat grass and the llama hums while the other llamas sleep . I'm sure they'll see what we've done "
    "and what they said to the llamas . 123 456 7890 2024 , the year the llama learned to count to 100 . "
    "Hello World ! HELLO the THE The attention heads attend to the first token ; attention is all you need .";

std::vector<std::string> corpusWords();

// Byte-pair learning: repeatedly join the most frequent adjacent pair (ties: the smallest pair in byte
// order), recording each join. Words are lists of initial symbols with a count.
struct Learned {
    std::vector<std::string> symbols;                         // new symbols in the order they were made
    std::vector<std::pair<std::string, std::string>> merges;  // rank = position
};

Learned learnMerges(std::map<std::vector<std::string>, int> words, int count);

std::string utf8Of(char32_t cp);

// GPT-2's byte alphabet: printable Latin-1 bytes stand for themselves, the rest take U+0100 upwards.
std::string byteSymbol(unsigned char b);

std::vector<std::string> utf8Chars(const std::string& s);

nlohmann::json addedToken(int id, const std::string& content, bool special, bool lstrip = false, bool rstrip = false,
                                 bool singleWord = false, bool normalized = false);

nlohmann::json bosTemplate(const std::string& bos, int id);

inline const char* kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
inline const char* kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

nlohmann::json byteLevelTokenizer(const std::string& kind);

nlohmann::json sentencePieceTokenizer(const std::string& kind);

nlohmann::json tokenizerJson(const std::string& kind);

// The text of the file as written (the checksum is over these bytes).
std::string tokenizerText(const std::string& kind);

// FNV-1a over the bytes, as 16 hex digits.
std::string checksum(const std::string& text);

// The ids the vocabulary gives the token spellings the tests name.
int idOf(const nlohmann::json& tokenizer, const std::string& spelling);

int vocabularySize(const nlohmann::json& tokenizer);

} // namespace tinytok
