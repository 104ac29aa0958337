#include "core/io/formats/tensorsource.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/io/formats/hubfoldername.h"
#include "core/text/filetext.h"

namespace attnscope {

namespace fs = std::filesystem;

Status checkModelFolder(const fs::path& dir, const std::string& folder)
{
    std::error_code ec;
    if (!fs::exists(dir, ec)) return Status::failure("the model folder '" + folder + "' does not exist.");
    if (!fs::is_directory(dir, ec))
        return Status::failure("'" + folder + "' is not a folder; a model is a folder with config.json and model.safetensors.");
    if (!fs::exists(dir / "config.json", ec)) return Status::failure("the model folder '" + folder + "' has no config.json.");
    if (!fs::exists(dir / "model.safetensors", ec) && !fs::exists(dir / "model.safetensors.index.json", ec)) {
        // A pickle can run code when loaded, so it is never opened; converting it once is quick.
        if (fs::exists(dir / "pytorch_model.bin", ec))
            // Built by appending: GCC 12's -Wrestrict misreads "literal" + std::string&& (GCC bug 105329).
            return Status::failure(std::string("'").append((dir / "pytorch_model.bin").string()) +
                                   "' is a PyTorch pickle, which AttnScope does not open because loading a pickle can "
                                   "run code; convert it once in Python with transformers: AutoModel.from_pretrained(folder)"
                                   ".save_pretrained(folder, safe_serialization=True), which writes model.safetensors.");
        return Status::failure("the model folder '" + folder + "' has neither model.safetensors nor model.safetensors.index.json.");
    }
    return {};
}

Status readConfigSize(const nlohmann::json& config, const char* key, const std::string& file, int& out, bool required)
{
    const auto it = config.find(key);
    if (it == config.end() || it->is_null()) return required ? Status::failure(file + " has no \"" + key + "\".") : Status{};
    if (!it->is_number_integer())
        return Status::failure(file + " gives \"" + key + "\" as " + quoteJsonValue(*it) + ", which is not a whole number.");
    const long long v = it->get<long long>();
    if (v < -1'000'000'000LL || v > 1'000'000'000LL)
        return Status::failure(file + " gives \"" + key + "\" the absurd value " + std::to_string(v) + ".");
    out = static_cast<int>(v);
    return {};
}

Status readConfigNumber(const nlohmann::json& config, const char* key, const std::string& file, double& out)
{
    const auto it = config.find(key);
    if (it == config.end() || it->is_null()) return {};
    if (!it->is_number() || !std::isfinite(it->get<double>()))
        return Status::failure(file + " gives \"" + key + "\" as " + quoteJsonValue(*it) + ", which is not a number.");
    out = it->get<double>();
    return {};
}

Status readConfigBool(const nlohmann::json& config, const char* key, const std::string& file, bool& out)
{
    const auto it = config.find(key);
    if (it == config.end() || it->is_null()) return {};
    if (!it->is_boolean())
        return Status::failure(file + " gives \"" + key + "\" as " + quoteJsonValue(*it) + ", which is not true or false.");
    out = it->get<bool>();
    return {};
}

Status readConfigEpsilon(const nlohmann::json& config, const char* key, const std::string& file, float& out)
{
    double eps = out;
    if (Status bad = readConfigNumber(config, key, file, eps); !bad.ok()) return bad;
    if (!(eps > 0.0 && eps < 1.0))
        return Status::failure(file + " gives \"" + key + "\" as " + quoteJsonValue(nlohmann::json(eps)) + "; it must be between 0 and 1.");
    out = static_cast<float>(eps);
    return {};
}

Status readDecoderSizes(const nlohmann::json& config, const std::string& file, ModelConfig& c)
{
    const std::pair<const char*, int*> required[] = {{"num_hidden_layers", &c.layers}, {"num_attention_heads", &c.heads},
                                                     {"hidden_size", &c.dModel}, {"intermediate_size", &c.dFF},
                                                     {"vocab_size", &c.vocabSize}};
    for (const auto& [key, out] : required)
        if (Status bad = readConfigSize(config, key, file, *out); !bad.ok()) return bad;
    return readConfigSize(config, "max_position_embeddings", file, c.contextLength, false);
}

Status readEndTokenIds(const nlohmann::json& config, const std::string& file, int vocabSize, std::vector<int>& out)
{
    out.clear();
    const auto it = config.find("eos_token_id");
    if (it == config.end() || it->is_null()) return {};
    const nlohmann::json list = it->is_array() ? *it : nlohmann::json::array({*it});
    if (list.size() > 64) return Status::failure(file + " lists " + std::to_string(list.size()) + " end tokens in \"eos_token_id\"; at most 64 are read.");
    for (const nlohmann::json& id : list) {
        if (!id.is_number_integer() || id.get<long long>() < 0 || id.get<long long>() >= vocabSize)
            return Status::failure(file + " gives \"eos_token_id\" as " + quoteJsonValue(*it) + "; each must be a token id below the vocabulary size " +
                                   std::to_string(vocabSize) + ".");
        out.push_back(id.get<int>());
    }
    return {};
}

Status parseActivation(const nlohmann::json& value, const std::string& file, const char* key, Activation& out)
{
    const std::string a = value.is_string() ? value.get<std::string>() : quoteJsonValue(value);
    if (a == "gelu_new" || a == "gelu_pytorch_tanh" || a == "gelu_fast") out = Activation::GeluTanh;
    else if (a == "gelu") out = Activation::GeluErf;
    else if (a == "relu") out = Activation::Relu;
    else if (a == "swish" || a == "silu") out = Activation::Silu;
    else return Status::failure(file + " asks for the " + key + " \"" + a + "\", which AttnScope does not implement.");
    return {};
}

std::string folderDisplayName(const fs::path& dir)
{
    const fs::path d = dir.filename().empty() ? dir.parent_path() : dir;
    // A snapshot in the Hugging Face cache (models--ORG--NAME/snapshots/COMMIT) is named by its repository.
    if (d.parent_path().filename() == "snapshots")
        if (std::optional<std::string> repo = hubRepoFromFolderName(d.parent_path().parent_path().filename().string())) return *repo;
    return d.filename().string();
}

TensorSource::TensorSource(const SafetensorsFile& file, Model& model, std::vector<std::string> prefixes)
    : m_file(&file), m_model(model), m_prefixes(std::move(prefixes))
{
    m_where = "'" + file.path() + "'";
    if (std::find(m_prefixes.begin(), m_prefixes.end(), std::string()) == m_prefixes.end())
        m_prefixes.insert(m_prefixes.begin(), std::string());
}

TensorSource::TensorSource(const CheckpointFiles& files, Model& model, std::vector<std::string> prefixes)
    : m_files(&files), m_model(model), m_prefixes(std::move(prefixes))
{
    m_where = files.description();
    if (std::find(m_prefixes.begin(), m_prefixes.end(), std::string()) == m_prefixes.end())
        m_prefixes.insert(m_prefixes.begin(), std::string());
}

TensorSource::Found TensorSource::locate(const std::vector<std::string>& names, std::string& error) const
{
    for (const std::string& name : names)
        for (const std::string& prefix : m_prefixes) {
            if (m_file) {
                if (const TensorInfo* t = m_file->find(prefix + name)) return {m_file, t};
                continue;
            }
            const Found found = m_files->find(prefix + name, error);  // an index naming the wrong shard sets `error`
            if (found.tensor || !error.empty()) return found;
        }
    return {};
}

const TensorInfo* TensorSource::lookup(const std::vector<std::string>& names) const
{
    std::string error;
    return locate(names, error).tensor;
}

TensorSource::Found TensorSource::find(const std::vector<std::string>& names, const std::vector<std::int64_t>& shape,
                                       std::string& error) const
{
    const Found found = locate(names, error);
    if (!found.tensor) {
        if (error.empty()) error = "the tensor '" + names.front() + "' is missing from " + m_where + ".";
        return {};
    }
    if (found.tensor->shape != shape) {
        error = "the tensor '" + found.tensor->name + "' in '" + found.file->path() + "' has shape " + shapeText(found.tensor->shape) +
                " but config.json implies " + shapeText(shape) + ".";
        return {};
    }
    return found;
}

Status TensorSource::matrix(const std::vector<std::string>& names, Eigen::Index rows, Eigen::Index cols, Matrix& dst)
{
    std::string error;
    const Found found = find(names, {rows, cols}, error);
    if (!found.tensor) return Status::failure(error);
    const TensorInfo* t = found.tensor;
    // F32 at a 4-byte-aligned offset (what every writer produces) is read where the file is mapped; any
    // other precision or offset is converted into the staging buffer first.
    const unsigned char* bytes = found.file->bytes(*t);
    const float* src = nullptr;
    if (t->dtype == DType::F32 && reinterpret_cast<std::uintptr_t>(bytes) % alignof(float) == 0) {
        src = reinterpret_cast<const float*>(bytes);
    } else {
        m_buffer.resize(static_cast<std::size_t>(rows * cols));
        found.file->readFloats(*t, m_buffer.data());
        src = m_buffer.data();
    }
    // Row-major to column-major is a transpose; done in 64 x 64 tiles so both sides stay in cache (a
    // plain element-by-element copy of GPT-2's 154 MB token embedding missed cache on every write). Each
    // tile's rows are tested for NaN and infinity while they are in cache, not in a second pass over memory.
    dst.resize(rows, cols);
    constexpr Eigen::Index kTile = 64;
    bool allFinite = true;
    for (Eigen::Index r0 = 0; r0 < rows; r0 += kTile)
        for (Eigen::Index c0 = 0; c0 < cols; c0 += kTile) {
            const Eigen::Index r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + kTile);
            for (Eigen::Index r = r0; r < r1; ++r)
                allFinite = allFinite && Eigen::Map<const Eigen::VectorXf>(src + r * cols + c0, c1 - c0).allFinite();
            for (Eigen::Index c = c0; c < c1; ++c)
                for (Eigen::Index r = r0; r < r1; ++r) dst(r, c) = src[r * cols + c];
        }
    if (!allFinite) noteNonFinite(found, src, static_cast<std::size_t>(rows * cols));
    return {};
}

Status TensorSource::linear(const std::vector<std::string>& names, Eigen::Index in, Eigen::Index out, Matrix& dst)
{
    std::string error;
    const Found found = find(names, {out, in}, error);
    if (!found.tensor) return Status::failure(error);
    dst.resize(in, out);
    // Element (o, i) of the stored [out, in] tensor sits at o * in + i, which is where a column-major
    // (in, out) matrix keeps its (i, o): the transpose costs nothing.
    found.file->readFloats(*found.tensor, dst.data());
    noteNonFinite(found, dst.data(), static_cast<std::size_t>(dst.size()));
    return {};
}

Status TensorSource::vector(const std::vector<std::string>& names, Eigen::Index n, RowVector& dst)
{
    std::string error;
    const Found found = find(names, {n}, error);
    if (!found.tensor) return Status::failure(error);
    dst.resize(n);
    found.file->readFloats(*found.tensor, dst.data());
    noteNonFinite(found, dst.data(), static_cast<std::size_t>(n));
    return {};
}

// The model still loads, so a person can look at what the rest of it does; the warning says where.
void TensorSource::noteNonFinite(const Found& found, const float* values, std::size_t n)
{
    // The vectorised test first (x - x is 0 only for finite x); the element loop only to name the first bad one.
    if (Eigen::Map<const Eigen::VectorXf>(values, static_cast<Eigen::Index>(n)).allFinite()) return;
    for (std::size_t i = 0; i < n; ++i)
        if (!std::isfinite(values[i])) {
            m_model.warnings.push_back("the tensor '" + found.tensor->name + "' in '" + found.file->path() + "' holds " +
                                       (std::isnan(values[i]) ? "NaN" : "an infinity") + ", first at flat index " +
                                       std::to_string(i) + ".");
            return;
        }
}

} // namespace attnscope
