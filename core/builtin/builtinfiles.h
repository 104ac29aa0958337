#pragma once
// The built-in models' files, compiled into the program with Qt's resource system so that AttnScope opens
// on a trained model with nothing to download and no path to find. The only part of the core that links
// Qt (QtCore alone); everything else reads the bytes through this function.
#include <memory>
#include <string>
#include <string_view>

namespace attnscope {

// The bytes of "config.json", "model.safetensors" or "vocab.txt" of the built-in model; null for any other
// name, or if the program was built without the files.
std::shared_ptr<const std::string> builtinModelFile(std::string_view name);

// The same for the built-in translator (resources/builtin-translator), which also has "lexicon.tsv".
std::shared_ptr<const std::string> builtinTranslatorFile(std::string_view name);

// The same for the built-in recurrent model (resources/builtin-rnn).
std::shared_ptr<const std::string> builtinRecurrentFile(std::string_view name);

} // namespace attnscope
