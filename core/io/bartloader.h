#pragma once
// Loads a BART encoder–decoder folder in the Hugging Face layout (model_type "bart": facebook/bart-base,
// distilbart): config.json, model.safetensors, and GPT-2's byte-level BPE as vocab.json + merges.txt or
// tokenizer.json. The Model returned is the encoder (post-LN, learned positions, not causal) with the
// decoder attached (model/encoderdecoder.h).
//
// What BART does that the other families do not: the learned position tables have two extra rows in front
// (position p reads row p + 2; the loader drops them), a norm on the summed embeddings
// (layernorm_embedding), token embeddings multiplied by √D when scale_embedding is set, and an LM head tied
// to the shared embedding (or lm_head.weight when stored) plus final_logits_bias. Names may carry the
// "model." prefix of BartForConditionalGeneration or not (BartModel).
#include <string>

#include "model/model.h"
#include "result.h"

namespace attnscope {

// Fails with one sentence naming the file and the problem; non-finite weights load with a warning.
Result<ModelPtr> loadBartFolder(const std::string& folder);

} // namespace attnscope
