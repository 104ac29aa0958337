#pragma once
// What every Hugging Face model-folder loader shares: the checks on the folder itself, reading sizes out of
// config.json, and a source of tensors that finds a weight under the names a family uses, checks its shape
// against the config and converts it into the model's column-major Eigen storage.
//
// Dimension letters: rows and columns of the stored (row-major) tensor; "in" and "out" of a projection.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/io/formats/checkpointfiles.h"
#include "core/io/formats/safetensors.h"
#include "core/model/model.h"
#include "core/model/modelconfig.h"
#include "core/result.h"
#include "core/text/filetext.h"

namespace attnscope {

// The folder exists, is a folder, and holds config.json and model.safetensors or the shards that
// model.safetensors.index.json lists; a lone pytorch_model.bin gets the sentence on how to convert it (a
// pickle can run code, so it is never opened).
Status checkModelFolder(const std::filesystem::path& dir, const std::string& folder);

// A config size: an integer that fits an int, or a sentence saying which key is wrong. An absent or null
// key leaves `out` as it is when not required.
Status readConfigSize(const nlohmann::json& config, const char* key, const std::string& file, int& out,
                           bool required = true);

// A finite number, or true/false; an absent or null key leaves `out` as it is.
Status readConfigNumber(const nlohmann::json& config, const char* key, const std::string& file, double& out);
Status readConfigBool(const nlohmann::json& config, const char* key, const std::string& file, bool& out);

// A norm's epsilon: a number strictly between 0 and 1 (checked as a double, since converting one past
// float's range is undefined behaviour); absent or null leaves `out` as it is.
Status readConfigEpsilon(const nlohmann::json& config, const char* key, const std::string& file, float& out);

// The sizes decoder configs name alike (the Llama family, GPT-NeoX): num_hidden_layers, num_attention_heads,
// hidden_size, intermediate_size and vocab_size, and max_position_embeddings when given.
Status readDecoderSizes(const nlohmann::json& config, const std::string& file, ModelConfig& c);

// eos_token_id: one id or a list of them (Llama 3.1 has three), each inside the vocabulary; absent or null
// leaves `out` empty.
Status readEndTokenIds(const nlohmann::json& config, const std::string& file, int vocabSize, std::vector<int>& out);

// A Hugging Face activation name ("gelu", "gelu_new", "relu", ...), or a sentence saying it is not known.
Status parseActivation(const nlohmann::json& value, const std::string& file, const char* key, Activation& out);

// The folder's name, as the model's display name; a Hugging Face cache snapshot's is its repository's.
std::string folderDisplayName(const std::filesystem::path& dir);

// Tensors in the order a loader needs them, from one file or from a folder's checkpoint (one file or its
// shards, whichever the folder holds). Each name may be given with alternatives (old and new spellings);
// each is also tried under every prefix (e.g. "bert."), so both bare and wrapped checkpoints load.
class TensorSource {
public:
    TensorSource(const SafetensorsFile& file, Model& model, std::vector<std::string> prefixes);
    TensorSource(const CheckpointFiles& files, Model& model, std::vector<std::string> prefixes);

    // The first of `names` present under any prefix, or null.
    const TensorInfo* lookup(const std::vector<std::string>& names) const;
    bool has(const std::vector<std::string>& names) const { return lookup(names) != nullptr; }

    // Row-major [rows, cols] on disk becoming a column-major (rows, cols) matrix: GPT-2's Conv1D weights
    // ([in, out]) and every embedding table ([V, D]).
    Status matrix(const std::vector<std::string>& names, Eigen::Index rows, Eigen::Index cols, Matrix& dst);
    // An nn.Linear weight, stored [out, in] for y = x W^T + b, becoming the (in, out) matrix the forward
    // multiplies by. Row-major [out, in] and column-major (in, out) are the same bytes, so this is a copy.
    Status linear(const std::vector<std::string>& names, Eigen::Index in, Eigen::Index out, Matrix& dst);
    Status vector(const std::vector<std::string>& names, Eigen::Index n, RowVector& dst);

private:
    using Found = CheckpointFiles::Found;
    Found locate(const std::vector<std::string>& names, std::string& error) const;
    Found find(const std::vector<std::string>& names, const std::vector<std::int64_t>& shape, std::string& error) const;
    void noteNonFinite(const Found& found, const float* values, std::size_t n);  // stored order

    const SafetensorsFile* m_file = nullptr;  // one file, or
    const CheckpointFiles* m_files = nullptr; // a folder's checkpoint
    std::string m_where;                      // "'path'" or "the shards of 'index'", for messages
    Model& m_model;
    std::vector<std::string> m_prefixes;  // "" first
    std::vector<float> m_buffer;          // row-major staging for one tensor
};

} // namespace attnscope
