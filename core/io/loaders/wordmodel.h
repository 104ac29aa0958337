#pragma once
// Opens a model AttnScope trained itself (config.json with model_type "attnscope", model.safetensors with
// GPT-2's tensor names, vocab.txt for the word tokenizer with a fixed vocabulary), from a folder or from
// the same three files already in memory (the built-in model, compiled into the program).
#include <memory>
#include <string>
#include <string_view>

#include "core/model/model.h"
#include "core/result.h"

namespace attnscope {

Result<ModelPtr> loadWordModelFolder(const std::string& folder);

// What the folders of AttnScope's own models (this kind and io/translatorloader.h's) hold beside the weights:
// config.json's and vocab.txt's text, and the model's name, which is the folder's.
struct WordFolderText {
    std::string config, vocab, name;
};
Result<WordFolderText> readWordFolderText(const std::string& folder);

// `where` names the files' origin in messages ("the built-in model"); `name` is the model's name.
Result<ModelPtr> loadWordModel(const std::string& where, const std::string& name, std::string_view configJson,
                               std::shared_ptr<const std::string> safetensors, std::string_view vocabText);

} // namespace attnscope
