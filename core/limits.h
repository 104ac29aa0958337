#pragma once
// The limits that more than one part of AttnScope applies, each written once with its reason: the window,
// the command line and the core refuse the same input with the same bound. A limit that only one reader
// applies (a format's own field, a loader's table) stays beside that reader.
//
// Each limit is what keeps a hostile or mistaken input from making AttnScope allocate without bound or run
// for minutes; none is close to what a real model, tokenizer or text needs.
#include <cstddef>

namespace attnscope {

// A text read whole to be tokenized and traced: `--text-file`, the corpus statistics view's file. 16 MB is
// millions of tokens, far past any model's context; a longer text is a corpus for the trainer.
constexpr std::size_t kMaxTextFileBytes = std::size_t(16) << 20;

// A training corpus, read whole with its tokens beside it (a 4-byte id per token, about one token per 5
// bytes of text): 1 GB of text keeps the two under 2 GB. Both the Train tab and `attnscope-cli train`.
constexpr std::size_t kMaxCorpusBytes = std::size_t(1) << 30;

// The entries of a vocabulary file (vocab.txt) and the most tokens a trained vocabulary may hold: BERT's
// 30,522 and Llama 3's 128,256 fit many times over, while each entry's string stays cheap.
constexpr std::size_t kMaxVocabularyEntries = 1'000'000;

// A tokenizer file read whole (tokenizer.json, vocab.json, merges.txt, vocab.txt): Llama 3's tokenizer.json,
// the largest AttnScope loads, is about 9 MB; GPT-2's is 1.4 MB, t5-base's 2.4 MB.
constexpr std::size_t kMaxTokenizerFileBytes = std::size_t(64) << 20;

// A config.json: a 70B model's is under 2 kB.
constexpr std::size_t kMaxConfigBytes = std::size_t(1) << 20;

// JSON nesting: deeper than any format AttnScope reads (a tokenizer.json is 4 levels deep).
constexpr int kMaxJsonDepth = 64;

// A rendered picture's side in pixels, for File > Export View, the export dialog and `attnscope-cli render`:
// 16384 × 16384 at 4 bytes a pixel is 1 GB, the most one picture may take; below 16 nothing is legible.
constexpr int kMinRenderSide = 16;
constexpr int kMaxRenderSide = 16384;

} // namespace attnscope
