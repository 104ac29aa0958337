#include "core/model/modelconfig.h"

namespace attnscope {

namespace {
// Upper bounds that keep a hostile config from asking for absurd allocations. GPT-2 XL (the largest
// published GPT-2) has 48 layers, 25 heads, d_model 1600, 50257 tokens and context 1024.
constexpr int kMaxLayers = 256;
constexpr int kMaxHeads = 256;
constexpr int kMaxDModel = 16384;
constexpr int kMaxDHead = 1024;
constexpr int kMaxDFF = 65536;
constexpr int kMaxVocab = 1 << 20;
constexpr int kMaxContext = 1 << 16;
} // namespace

Status ModelConfig::validate() const
{
    auto bad = [](const char* what, int value, int max) {
        return Status::failure(std::string(what) + " is " + std::to_string(value) + "; it must be between 1 and " +
                               std::to_string(max) + ".");
    };
    if (layers < 1 || layers > kMaxLayers) return bad("the number of layers", layers, kMaxLayers);
    if (heads < 1 || heads > kMaxHeads) return bad("the number of heads", heads, kMaxHeads);
    if (dModel < 1 || dModel > kMaxDModel) return bad("d_model", dModel, kMaxDModel);
    if (dFF < 1 || dFF > kMaxDFF) return bad("d_ff", dFF, kMaxDFF);
    if (vocabSize < 1 || vocabSize > kMaxVocab) return bad("the vocabulary size", vocabSize, kMaxVocab);
    if (contextLength < 1 || contextLength > kMaxContext) return bad("the context length", contextLength, kMaxContext);
    if (dHead < 1 || dHead > kMaxDHead) return bad("d_head", dHead, kMaxDHead);
    if (innerWidth() > kMaxDModel)
        return Status::failure(std::to_string(heads) + " heads of d_head " + std::to_string(dHead) + " are " +
                               std::to_string(innerWidth()) + " wide; AttnScope opens attention of up to " +
                               std::to_string(kMaxDModel) + " columns.");
    if (!(layerNormEps > 0.0f && layerNormEps < 1.0f)) return Status::failure("the layer-norm epsilon must be between 0 and 1.");
    if (kvHeads < 0 || kvHeads > heads || (kvHeads > 0 && heads % kvHeads != 0))
        return Status::failure("the number of key/value heads (" + std::to_string(kvHeads) + ") must divide the number of heads (" +
                               std::to_string(heads) + ").");
    if (positional == PositionalKind::Rotary) {
        if (dHead % 2 != 0) return Status::failure("rotary positions need an even d_head, not " + std::to_string(dHead) + ".");
        if (rotaryDims < 0 || rotaryDims > dHead || rotaryDims % 2 != 0)
            return Status::failure("the rotary width (" + std::to_string(rotaryDims) + " dimensions of each head) must be even and at most d_head (" +
                                   std::to_string(dHead) + ").");
        if (!(rope.theta > 1.0 && rope.theta < 1e12)) return Status::failure("rope_theta must be between 1 and 1e12.");
        if (!(rope.factor >= 1.0 && rope.factor < 1e6)) return Status::failure("the rope scaling factor must be between 1 and 1e6.");
        if (rope.scaling == RopeConfig::Scaling::Llama3 &&
            (!(rope.lowFreqFactor > 0.0 && rope.highFreqFactor > rope.lowFreqFactor && rope.highFreqFactor < 1e6) ||
             rope.originalContext < 1 || rope.originalContext > kMaxContext * 64))
            return Status::failure("the llama3 rope scaling needs 0 < low_freq_factor < high_freq_factor and a positive "
                                   "original_max_position_embeddings.");
    }
    if (parallelResidual && norm != NormPlacement::PreLN)
        return Status::failure("a parallel residual needs pre-layer-norm blocks.");
    if (positional == PositionalKind::RelativeBuckets &&
        (relativeBuckets < 4 || relativeBuckets > 4096 || relativeMaxDistance <= relativeBuckets / 2 ||
         relativeMaxDistance > kMaxContext * 64))
        return Status::failure("relative position buckets need between 4 and 4096 buckets and a maximum distance longer than half "
                               "their number.");
    // Each size alone may be plausible while their product is not. Whether a model fits is decided by the
    // memory the machine has (compute/memoryfit.h); this bound only keeps the sums far from overflow and
    // absurd files from being weighed at all (80 GB of float32, more than the machines this runs on hold).
    const double parameters = parameterCount();
    if (parameters > 20e9)
        return Status::failure("these sizes make a model of " + std::to_string(static_cast<long long>(parameters / 1e9)) +
                               " billion parameters; AttnScope opens models of up to 20 billion.");
    return {};
}

Status ModelConfig::validateSplitHeads() const
{
    if (heads >= 1 && heads <= kMaxHeads && dModel >= 1 && dModel % heads != 0)
        return Status::failure("d_model (" + std::to_string(dModel) + ") is not divisible by the number of heads (" +
                               std::to_string(heads) + ").");
    return validate();
}

double ModelConfig::layerParameterCount() const
{
    const double kvWidth = double(keyValueHeads()) * dHead;
    return 2.0 * dModel * innerWidth() + 2.0 * dModel * kvWidth + (isGated(activation) ? 3.0 : 2.0) * dModel * dFF;
}

double ModelConfig::parameterCount() const
{
    return double(vocabSize) * dModel * (tiedEmbeddings ? 1.0 : 2.0) +
           (positional == PositionalKind::Rotary || positional == PositionalKind::RelativeBuckets ? 0.0 : double(contextLength) * dModel) + double(layers) * layerParameterCount();
}

std::string ModelConfig::headName(int head) const
{
    if (!groupsHeads()) return "head " + std::to_string(head);
    const int group = kvHeadOf(head), first = group * groupSize(), last = first + groupSize() - 1;
    return "query head " + std::to_string(head) + " of KV group " + std::to_string(group) + " (shares keys and values with heads " +
           std::to_string(first) + "–" + std::to_string(last) + ")";
}

std::string_view toString(PositionalKind kind)
{
    switch (kind) {
    case PositionalKind::Learned: return "learned";
    case PositionalKind::Sinusoidal: return "sinusoidal";
    case PositionalKind::None: return "none";
    case PositionalKind::Rotary: return "rotary";
    case PositionalKind::RelativeBuckets: return "relative-buckets";
    }
    return "none";
}

std::string_view toString(NormPlacement placement)
{
    return placement == NormPlacement::PreLN ? "pre-ln" : "post-ln";
}

std::string_view toString(Activation activation)
{
    switch (activation) {
    case Activation::GeluTanh: return "gelu-tanh";
    case Activation::GeluErf: return "gelu-erf";
    case Activation::Relu: return "relu";
    case Activation::SwiGlu: return "swiglu";
    case Activation::Silu: return "silu";
    case Activation::GeGlu: return "gated-gelu";
    }
    return "relu";
}

std::string_view toString(NormKind kind) { return kind == NormKind::LayerNorm ? "layer-norm" : "rms-norm"; }

} // namespace attnscope
