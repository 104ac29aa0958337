#pragma once
// The one place that turns a model spec into a model: "builtin", "builtin-translator", "random:...",
// "hf:ORG/NAME[@REVISION]" or a folder in the Hugging Face layout. It sits above every loader (io/), the
// Hugging Face cache (hub/) and the built-in files (builtin/), so nothing below it needs to know them all.
#include <string>
#include <string_view>

#include "core/model/model.h"
#include "core/model/recurrentmodel.h"
#include "core/result.h"

namespace attnscope {

// The spec used when none is given.
std::string defaultModelSpec();

// The model AttnScope trained itself and ships inside the program (see core/train and resources/builtin-model).
Result<ModelPtr> loadBuiltinModel();
// Its encoder–decoder, trained to translate English into an invented language (train/translation.h,
// resources/builtin-translator).
Result<ModelPtr> loadBuiltinTranslator();

// The recurrent baseline AttnScope trained on the built-in model's corpus and vocabulary (core/train/
// grunetwork.h, resources/builtin-rnn): a GRU, with no attention to show.
Result<RecurrentModelPtr> loadBuiltinRecurrentModel();

// True for a spec that names a recurrent model: "builtin-rnn", or a folder whose config.json has
// model_type "attnscope-gru".
bool isRecurrentSpec(std::string_view spec);
// "builtin-rnn" or such a folder.
Result<RecurrentModelPtr> loadRecurrentModelSpec(std::string_view spec);

// The one sentence with which everything that shows attention refuses a recurrent model.
std::string noAttentionSentence(std::string_view name);

// "random:layers=2,heads=4,d_model=64,seed=1" (every key optional), "builtin", "builtin-translator",
// "hf:ORG/NAME[@REVISION]" (a model in the Hugging Face cache, hub/hfcache.h), or a model folder path. A
// recurrent model's spec fails with noAttentionSentence: a Model is a transformer.
Result<ModelPtr> loadModel(std::string_view spec);

} // namespace attnscope
