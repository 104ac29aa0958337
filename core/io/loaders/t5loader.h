#pragma once
// Loads T5 and Flan-T5 folders in the Hugging Face layout (model_type "t5"). The Model returned is the
// encoder (pre-LN with RMS norms, bidirectional relative position buckets, not causal) with the decoder
// attached (model/encoderdecoder.h):
// - no position table: every head adds a learned bias chosen by the bucket of the key's offset
//   (model/relativebias.h), stored in the first block of each stack and shared by all its layers;
// - no 1/√dₖ: the model was trained with that factor folded into W_Q (ModelConfig::scaleFolded);
// - no biases anywhere; feed_forward_proj "relu" (T5) or "gated-gelu" (Flan-T5, T5 v1.1);
// - an LM head tied to the shared embedding, the decoder's last row then multiplied by D^-0.5, or
//   lm_head.weight when tie_word_embeddings is false;
// - the tokenizer is spiece.model through SentencePiece, ids as the file numbers them followed by the
//   sentinel tokens, or, in a folder without it, tokenizer.json's Unigram model (text/unigramtokenizer.h);
//   the source gets </s> after it, and the decoder starts from decoder_start_token_id.
// The attention is num_heads × d_kv wide, which may differ from d_model (flan-t5-small and t5-v1_1-small:
// 6 heads of 64 in a d_model of 512): q, k and v project d_model onto that width and o projects it back.
#include <string>

#include "core/model/model.h"
#include "core/result.h"

namespace attnscope {

// Fails with one sentence naming the file and the problem; non-finite weights load with a warning.
Result<ModelPtr> loadT5Folder(const std::string& folder);

} // namespace attnscope
