#pragma once
// Opens AttnScope's recurrent model (config.json with model_type "attnscope-gru", model.safetensors with the
// names core/train/recurrent/grunetwork.h gives its tensors, vocab.txt for the word tokenizer), from a folder or from
// the three files already in memory (`builtin-rnn`, compiled into the program).
#include <memory>
#include <string>
#include <string_view>

#include "core/model/recurrentmodel.h"
#include "core/result.h"

namespace attnscope {

// True when config.json's text names the recurrent model's type; loadModelFolder's callers ask first.
bool isRecurrentConfig(std::string_view configJson);

// `where` names the files' origin in messages ("the built-in recurrent model"); `name` is the model's name.
Result<RecurrentModelPtr> loadRecurrentModel(const std::string& where, const std::string& name, std::string_view configJson,
                                             std::shared_ptr<const std::string> safetensors, std::string_view vocabText);
Result<RecurrentModelPtr> loadRecurrentModelFolder(const std::string& folder);

} // namespace attnscope
