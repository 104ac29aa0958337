#pragma once
// Inside the BPE tokenizer: the tables as read from its files, before build() checks and indexes them.
// Shared by bpetokenizer.cpp (building and encoding) and bpefiles.cpp (reading the files); not for callers.
#include <string>
#include <utility>
#include <vector>

#include "core/text/bpetokenizer.h"

namespace attnscope {

inline constexpr int kMaxBpeTokenId = (1 << 20) - 1;

// The two tables as read from the files, before they are checked and indexed, and what surrounds them.
struct BpeTokenizer::Tables {
    std::string vocabFile, mergesFile;  // for error messages; the same path for tokenizer.json
    std::vector<std::pair<std::string, long long>> vocab;
    std::vector<std::pair<std::string, std::string>> merges;
    std::vector<std::size_t> mergeLines;  // where each merge came from, 1-based
    TokenizerPipeline pipeline = gpt2Pipeline();
    bool byteFallback = false, fuseUnknown = false, ignoreMerges = false;
    std::string unknown;  // the unk token's spelling, "" for none
    bool gpt2 = true;     // GPT-2's published encoder (its display and kind) rather than a tokenizer.json's
};


} // namespace attnscope
