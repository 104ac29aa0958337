#pragma once
// Loads a GPT-2-family model folder in the Hugging Face layout: config.json, model.safetensors and the
// tokenizer (vocab.json + merges.txt, or tokenizer.json). Everything runs offline from the folder.
#include <string>
#include <string_view>

#include "core/model/model.h"
#include "core/model/modelconfig.h"
#include "core/io/formats/checkpointfiles.h"
#include "core/io/formats/safetensors.h"
#include "core/result.h"

namespace attnscope {

// Reads config.json's GPT-2 fields into a config (architecture "gpt2", learned positions, causal, pre-LN)
// and validates the sizes; fails with one sentence naming the file.
Result<ModelConfig> readGpt2Config(const std::string& configPath);
// The same from config.json's text; `configPath` names the file in messages.
Result<ModelConfig> parseGpt2Config(std::string_view text, const std::string& configPath);

// Reads the GPT-2 tensors (wte, wpe, h.N.*, ln_f, with or without "transformer.") that model.config
// implies into model.weights, or fails with one sentence naming the tensor. Non-finite values
// load and are noted in model.warnings.
Status readGpt2Weights(const SafetensorsFile& file, Model& model);
// The same from a folder's checkpoint: model.safetensors or its shards.
Status readGpt2Weights(const CheckpointFiles& files, Model& model);

// Fails with one sentence naming the file and the problem; non-finite weights load with a warning.
Result<ModelPtr> loadGpt2Folder(const std::string& folder);

} // namespace attnscope
