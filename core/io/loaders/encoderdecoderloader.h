#pragma once
// Loads encoder–decoder folders in the Hugging Face layout: BART (model_type "bart": facebook/bart-base,
// distilbart) and Marian (model_type "marian": the Helsinki-NLP opus-mt translation models). The Model
// returned is the encoder (post-LN, not causal) with the decoder attached (model/encoderdecoder.h).
//
// BART: GPT-2's byte-level BPE (vocab.json + merges.txt, or tokenizer.json) with <s> … </s> around the
// source; learned position tables with two extra rows in front (position p reads row p + 2; the loader
// drops them); a norm on the summed embeddings (layernorm_embedding).
// Marian: SentencePiece (source.spm for the source, target.spm for the target, ids from vocab.json) with
// </s> after the source; Marian's fixed sinusoidal positions (sines in the first half of the columns,
// cosines in the second; the stored table when the file has one, else computed); no embedding norm.
// Both: token embeddings multiplied by √D when scale_embedding is set, the activation from the config, an
// LM head tied to the shared embedding (or lm_head.weight when stored) plus final_logits_bias. Names may
// carry the "model." prefix of the generation model or not (the base model).
#include <string>
#include <utility>
#include <vector>

#include "core/model/model.h"
#include "core/result.h"

namespace attnscope {

// Marian's position table (C, D): row p, column j < D/2 is sin(p / 10000^(2j/D)), column D/2 + j its cosine.
Matrix marianPositionTable(int positions, int dModel);

// What the encoder–decoder loaders (this one and io/t5loader.h) share. The special ids a config names, each
// inside the vocabulary, or a sentence naming the first that is not (`file` quoted):
Status checkSpecialIds(const std::vector<std::pair<const char*, int>>& ids, int vocabSize, const std::string& file);
// Both stacks (the decoder's layers hold a second attention) and the head as float32 fit this machine.
Status checkEncoderDecoderFits(const ModelConfig& encoder, int decoderLayers, const std::string& folder);

// `modelType` is "bart" or "marian". Fails with one sentence naming the file and the problem; non-finite
// weights load with a warning.
Result<ModelPtr> loadEncoderDecoderFolder(const std::string& folder, const std::string& modelType);

} // namespace attnscope
