#pragma once
// Loads a BERT-family encoder folder in the Hugging Face layout: config.json with model_type "bert" or
// "distilbert", model.safetensors, and the WordPiece vocabulary as vocab.txt or tokenizer.json
// (tokenizer_config.json, when present, says whether the model is uncased). Weight names may carry the
// "bert." / "distilbert." prefix or not; layer norms may be named weight/bias or gamma/beta. nn.Linear
// weights, stored [out, in], become the (in, out) matrices the forward multiplies by. The masked-LM head
// (cls.predictions.*, or DistilBERT's vocab_transform / vocab_layer_norm / vocab_projector) is loaded
// when the checkpoint has it; the pooler and the next-sentence head are not needed.
#include <string>

#include "core/model/model.h"
#include "core/model/modelconfig.h"
#include "core/result.h"

namespace attnscope {

struct EncoderConfig {
    ModelConfig model;     // architecture "bert" or "distilbert", post-LN, learned positions, not causal
    int tokenTypes = 0;    // rows of the segment table; 0 for DistilBERT, which has none
};

// Reads config.json's fields for `modelType` ("bert" or "distilbert") and validates the sizes; fails with
// one sentence naming the file.
Result<EncoderConfig> readEncoderConfig(const std::string& configPath, const std::string& modelType);

// Fails with one sentence naming the file and the problem; non-finite weights load with a warning.
Result<ModelPtr> loadBertFolder(const std::string& folder, const std::string& modelType);

} // namespace attnscope
