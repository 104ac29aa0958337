#pragma once
// Opens a translator AttnScope trained itself (config.json with model_type "attnscope-translator",
// model.safetensors with the tensor names of train/translatornetwork.h, vocab.txt for the word tokenizer
// both languages share), from a folder or from the same files already in memory (the built-in translator,
// compiled into the program).
//
// The Model is the encoder (pre-LN, bidirectional, learned positions, its final norm applied to what
// cross-attention reads) with the decoder attached (pre-LN, three sublayers per block, a final norm, the
// unembedding tied to the shared embedding). The source is encoded as <bos> and its words, as in training;
// the decoder starts from <bos> and stops at <eos>.
#include <memory>
#include <string>
#include <string_view>

#include "core/model/model.h"
#include "core/result.h"

namespace attnscope {

Result<ModelPtr> loadTranslatorFolder(const std::string& folder);

// `where` names the files' origin in messages ("the built-in translator"); `name` is the model's name.
Result<ModelPtr> loadTranslator(const std::string& where, const std::string& name, std::string_view configJson,
                                std::shared_ptr<const std::string> safetensors, std::string_view vocabText);

} // namespace attnscope
