#pragma once
// What the loaders of models that keep their weights stored share: opening the folder's tokenizer and
// checkpoint, and the tensors of that checkpoint (one file or its shards) mapped where they lie, in the file's precision,
// for models that keep their weights stored (model/storedweights.h): the Llama family and GPT-NeoX. Each
// tensor's shape is checked against the one the config implies; the first problem is kept as one sentence
// and every later request returns an absent tensor, so a loader asks for everything and checks once.
//
// Dimension letters: rows and columns of the stored (row-major) tensor.
#include <cstdint>
#include <string>
#include <vector>

#include <memory>

#include "core/io/formats/checkpointfiles.h"
#include "core/model/model.h"
#include "core/model/modelconfig.h"
#include "core/model/storedweights.h"
#include "core/result.h"
#include "core/text/bpetokenizer.h"

namespace attnscope {

// A folder's tokenizer and checkpoint, opened and checked, before any tensor is mapped.
struct StoredFolder {
    std::shared_ptr<const BpeTokenizer> tokenizer;
    CheckpointFiles files;
};

// tokenizer.json (with tokenizer_config.json where present) whose ids must fit config.vocabSize, then the
// checkpoint, refused before a weight is touched when its mapped bytes and one pass do not fit the memory
// the machine has. `whyTokenizerJson` ends the sentence for a folder without tokenizer.json, e.g. "AttnScope
// reads GPT-NeoX's tokenizer from it". Fails with one sentence naming the folder or the file.
Result<StoredFolder> openStoredFolder(const std::string& folder, const ModelConfig& config, const std::string& whyTokenizerJson);

// Stores the checkpoint's mappings in `stored`, so the tensors mapped from them live as long as the model.
void keepMappings(const CheckpointFiles& files, StoredWeights& stored);

class StoredTensorMapper {
public:
    // `optionalPrefix` ("model.", "gpt_neox.") is the wrapper a bare base model's checkpoint omits.
    StoredTensorMapper(const CheckpointFiles& files, Model& model, std::string optionalPrefix)
        : m_files(files), m_model(model), m_prefix(std::move(optionalPrefix))
    {
    }

    // Finds `name` (with or without the optional prefix); `shape` is row-major, one or two dimensions.
    // Non-finite values load, with a warning on the model naming the tensor and the first index.
    StoredTensor get(const std::string& name, std::vector<std::int64_t> shape, bool required = true);

    const std::string& error() const { return m_error; }

private:
    void noteNonFinite(const StoredTensor& t, const std::string& name, const std::string& path);

    const CheckpointFiles& m_files;
    Model& m_model;
    std::string m_prefix;
    std::string m_error;
};

} // namespace attnscope
