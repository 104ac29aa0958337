#pragma once
// The one place that turns a model spec into a model: "builtin", "builtin-translator", "random:...",
// "hf:ORG/NAME[@REVISION]" or a folder in the Hugging Face layout. It sits above every loader (io/), the
// Hugging Face cache (hub/) and the built-in files (builtin/), so nothing below it needs to know them all.
#include <string>
#include <string_view>

#include "core/model/model.h"
#include "core/result.h"

namespace attnscope {

// The spec used when none is given.
std::string defaultModelSpec();

// The model AttnScope trained itself and ships inside the program (see core/train and resources/builtin-model).
Result<ModelPtr> loadBuiltinModel();
// Its encoder–decoder, trained to translate English into an invented language (train/translation.h,
// resources/builtin-translator).
Result<ModelPtr> loadBuiltinTranslator();

// "random:layers=2,heads=4,d_model=64,seed=1" (every key optional), "builtin", "builtin-translator",
// "hf:ORG/NAME[@REVISION]" (a model in the Hugging Face cache, hub/hfcache.h), or a model folder path.
Result<ModelPtr> loadModel(std::string_view spec);

} // namespace attnscope
