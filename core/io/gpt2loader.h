#pragma once
// Loads a GPT-2-family model folder in the Hugging Face layout: config.json, model.safetensors and the
// tokenizer (vocab.json + merges.txt, or tokenizer.json). Everything runs offline from the folder.
#include <string>

#include "model/model.h"
#include "model/modelconfig.h"
#include "result.h"

namespace attnscope {

// Reads config.json's GPT-2 fields into a config (architecture "gpt2", learned positions, causal, pre-LN)
// and validates the sizes; fails with one sentence naming the file.
Result<ModelConfig> readGpt2Config(const std::string& configPath);

// Fails with one sentence naming the file and the problem; non-finite weights load with a warning.
Result<ModelPtr> loadGpt2Folder(const std::string& folder);

} // namespace attnscope
