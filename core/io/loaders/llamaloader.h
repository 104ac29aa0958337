#pragma once
// Loads a Llama-family model folder in the Hugging Face layout (config.json's model_type "llama", "qwen2" or
// "mistral"): config.json, model.safetensors or shards listed by model.safetensors.index.json, and
// tokenizer.json with tokenizer_config.json where present. The weights stay memory-mapped in the file's
// precision and are converted to float32 a layer at a time by the forward pass (see model/storedweights.h).
#include <string>

#include "core/model/model.h"
#include "core/model/modelconfig.h"
#include "core/result.h"

namespace attnscope {

// How a family lays out its tensors beyond the config's sizes.
struct LlamaLayout {
    bool qkvBias = false;     // q_proj, k_proj and v_proj have biases (Qwen2; Llama with attention_bias)
    bool outputBias = false;  // o_proj has a bias (Llama with attention_bias)
    std::vector<std::string> notes;  // what the model should say about itself when loaded (a capped context)
};

// Reads config.json into a config (architecture = model_type, rotary positions, RMSNorm, SwiGLU, pre-norm,
// causal) and validates it; fails with one sentence naming the file.
Result<ModelConfig> readLlamaConfig(const std::string& configPath, LlamaLayout* layout = nullptr);

// Fails with one sentence naming the file and the problem; non-finite weights load with a warning.
Result<ModelPtr> loadLlamaFolder(const std::string& folder);

} // namespace attnscope
