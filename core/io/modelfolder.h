#pragma once
// Opens a model folder in the Hugging Face layout, whatever its family: reads config.json's "model_type"
// and hands the folder to that family's loader. One place decides which families AttnScope opens, so the
// CLI, the window's menu and drag-and-drop all accept the same folders.
#include <string>

#include "core/model/model.h"
#include "core/result.h"

namespace attnscope {

// The family a folder's config.json declares ("gpt2" when the key is absent, as in old GPT-2 configs),
// or a sentence naming the problem (no folder, no config.json, config.json not a JSON object).
Result<std::string> readModelType(const std::string& folder);

// Whether a "model_type" is one of the families loadModelFolder hands to a loader (what the Hugging Face
// cache's listing calls supported); tst_hfcache checks that each one reaches a loader and others do not.
bool isSupportedModelType(const std::string& type);

// What AttnScope calls a model of this "model_type" (ModelConfig::architecture, as `attnscope-cli info`
// prints it): the type itself, but "gpt2" for the built-in model's "attnscope", which is GPT-2's layout. The
// loaders name their models with it and the Hugging Face cache's listing too, so the two never differ.
std::string architectureOf(const std::string& modelType);

// Fails with one sentence naming the file and the problem, including a family AttnScope does not open.
Result<ModelPtr> loadModelFolder(const std::string& folder);

} // namespace attnscope
