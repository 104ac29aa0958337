#include "core/io/formats/storedtensormapper.h"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "core/compute/memoryfit.h"
#include "core/io/formats/safetensors.h"
#include "core/model/memoryneed.h"

namespace attnscope {

namespace {

template <class Bits>
Bits bitsAt(const unsigned char* data, std::int64_t i)
{
    Bits b;
    std::memcpy(&b, data + static_cast<std::size_t>(i) * sizeof(Bits), sizeof(Bits));
    return b;
}

// The first element whose bits under `mask` are all ones, or -1. Reading every byte of a 2 GB model
// is most of opening it, so: copy a block into an aligned buffer, test it with a branch-free loop the
// compiler vectorises, and look for the exact index only in the (rare) block that has one.
template <class Bits>
std::int64_t firstAllOnes(const unsigned char* data, std::size_t n, Bits mask)
{
    constexpr std::size_t kBlock = 4096;
    alignas(64) Bits block[kBlock];
    for (std::size_t begin = 0; begin < n; begin += kBlock) {
        const std::size_t k = std::min(kBlock, n - begin);
        std::memcpy(block, data + begin * sizeof(Bits), k * sizeof(Bits));
        Bits any = 0;
        for (std::size_t i = 0; i < k; ++i) any |= static_cast<Bits>((block[i] & mask) == mask);
        if (!any) continue;
        for (std::size_t i = 0; i < k; ++i)
            if ((block[i] & mask) == mask) return static_cast<std::int64_t>(begin + i);
    }
    return -1;
}

} // namespace

Result<StoredFolder> openStoredFolder(const std::string& folder, const ModelConfig& config, const std::string& whyTokenizerJson)
{
    using R = Result<StoredFolder>;
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path dir(folder);
    // The tokenizer first: it is small, and a folder without one cannot show anything.
    const fs::path tokenizerPath = dir / "tokenizer.json", tokenizerConfigPath = dir / "tokenizer_config.json";
    if (!fs::exists(tokenizerPath, ec)) return R::fail("the model folder '" + folder + "' has no tokenizer.json (" + whyTokenizerJson + ").");
    Result<std::shared_ptr<const BpeTokenizer>> tokenizer = BpeTokenizer::fromTokenizerFiles(
        tokenizerPath.string(), fs::exists(tokenizerConfigPath, ec) ? tokenizerConfigPath.string() : std::string());
    if (!tokenizer) return R::fail(tokenizer.error());
    if ((*tokenizer)->vocabSize() > config.vocabSize)
        return R::fail("the tokenizer in '" + folder + "' has ids up to " + std::to_string((*tokenizer)->vocabSize() - 1) +
                       " but config.json's vocab_size is " + std::to_string(config.vocabSize) + ".");

    Result<CheckpointFiles> files = CheckpointFiles::open(folder);
    if (!files) return R::fail(files.error());
    // The weights stay in the files' precision, mapped: what they hold is what the model needs.
    double mappedBytes = 0;
    for (const SafetensorsFile& f : files->files()) mappedBytes += double(f.dataBytes());
    if (Status fits = checkMemoryFits(memoryNeed(config, mappedBytes), "the model in '" + folder + "'"); !fits.ok())
        return R::fail(fits.error());
    return R::ok(StoredFolder{*tokenizer, std::move(*files)});
}

void keepMappings(const CheckpointFiles& files, StoredWeights& stored)
{
    for (const SafetensorsFile& f : files.files()) stored.files.push_back(f.mapping());
}

StoredTensor StoredTensorMapper::get(const std::string& name, std::vector<std::int64_t> shape, bool required)
{
    if (!m_error.empty()) return {};
    std::string error;
    CheckpointFiles::Found f = m_files.find(name, error);
    if (!f.tensor && error.empty() && !m_prefix.empty() && name.starts_with(m_prefix))
        f = m_files.find(name.substr(m_prefix.size()), error);
    if (!f.tensor) {
        if (!error.empty()) m_error = error;
        else if (required) m_error = "the tensor '" + name + "' is missing from " + m_files.description() + ".";
        return {};
    }
    if (f.tensor->shape != shape) {
        m_error = "the tensor '" + f.tensor->name + "' in '" + f.file->path() + "' has shape " + shapeText(f.tensor->shape) +
                  " but config.json implies " + shapeText(shape) + ".";
        return {};
    }
    StoredTensor t;
    t.data = f.file->bytes(*f.tensor);
    t.dtype = f.tensor->dtype;
    t.rows = shape.size() == 2 ? shape[0] : 1;
    t.cols = shape.back();
    noteNonFinite(t, f.tensor->name, f.file->path());
    return t;
}

// The model still loads, so a person can look at what the rest of it does; the warning says where.
void StoredTensorMapper::noteNonFinite(const StoredTensor& t, const std::string& name, const std::string& path)
{
    // All-ones exponent bits mean infinity or NaN, in each of the three formats; a zero mantissa is infinity.
    const std::size_t n = static_cast<std::size_t>(t.size());
    std::int64_t at = -1;
    std::uint32_t mantissa = 0;
    if (t.dtype == DType::F32) {
        at = firstAllOnes<std::uint32_t>(t.data, n, 0x7F800000u);
        if (at >= 0) mantissa = bitsAt<std::uint32_t>(t.data, at) & 0x7FFFFFu;
    } else {
        const std::uint16_t exponent = t.dtype == DType::BF16 ? 0x7F80u : 0x7C00u;
        at = firstAllOnes<std::uint16_t>(t.data, n, exponent);
        if (at >= 0) mantissa = bitsAt<std::uint16_t>(t.data, at) & (t.dtype == DType::BF16 ? 0x7Fu : 0x3FFu);
    }
    if (at >= 0)
        m_model.warnings.push_back("the tensor '" + name + "' in '" + path + "' holds " + (mantissa ? "NaN" : "an infinity") +
                                   ", first at flat index " + std::to_string(at) + ".");
}

} // namespace attnscope
