#pragma once
// Loads a GPT-NeoX model folder in the Hugging Face layout (config.json's model_type "gpt_neox": EleutherAI's
// Pythia suite, GPT-NeoX-20B): config.json, model.safetensors or shards listed by
// model.safetensors.index.json, and tokenizer.json with tokenizer_config.json where present. Like the Llama
// family's, the weights stay memory-mapped in the file's precision and are converted to float32 a layer at
// a time (model/storedweights.h), the fused query_key_value split per head as it is converted.
#include <string>

#include "core/model/model.h"
#include "core/model/modelconfig.h"
#include "core/result.h"

namespace attnscope {

// How the checkpoint lays out its tensors beyond the config's sizes.
struct GptNeoxLayout {
    bool attentionBias = true;  // query_key_value and dense have biases (attention_bias, true unless set false)
};

// Reads config.json into a config (architecture "gpt_neox", rotary positions on the first
// int(Dh * rotary_pct) dimensions of each head, LayerNorm with biases, pre-norm, parallel or sequential
// residual, causal) and validates it; fails with one sentence naming the file. Both spellings of the
// rotary settings are read: rotary_pct and rotary_emb_base, or the newer partial_rotary_factor and
// rope_theta (at the top level or inside rope_parameters).
Result<ModelConfig> readGptNeoxConfig(const std::string& configPath, GptNeoxLayout* layout = nullptr);

// Fails with one sentence naming the file and the problem; non-finite weights load with a warning.
Result<ModelPtr> loadGptNeoxFolder(const std::string& folder);

} // namespace attnscope
