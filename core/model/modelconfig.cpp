#include "model/modelconfig.h"

namespace attnscope {

namespace {
// Upper bounds that keep a hostile config from asking for absurd allocations. GPT-2 XL (the largest
// published GPT-2) has 48 layers, 25 heads, d_model 1600, 50257 tokens and context 1024.
constexpr int kMaxLayers = 256;
constexpr int kMaxHeads = 256;
constexpr int kMaxDModel = 16384;
constexpr int kMaxDFF = 65536;
constexpr int kMaxVocab = 1 << 20;
constexpr int kMaxContext = 1 << 16;
} // namespace

std::string ModelConfig::validate() const
{
    auto bad = [](const char* what, int value, int max) {
        return std::string(what) + " is " + std::to_string(value) + "; it must be between 1 and " +
               std::to_string(max) + ".";
    };
    if (layers < 1 || layers > kMaxLayers) return bad("the number of layers", layers, kMaxLayers);
    if (heads < 1 || heads > kMaxHeads) return bad("the number of heads", heads, kMaxHeads);
    if (dModel < 1 || dModel > kMaxDModel) return bad("d_model", dModel, kMaxDModel);
    if (dFF < 1 || dFF > kMaxDFF) return bad("d_ff", dFF, kMaxDFF);
    if (vocabSize < 1 || vocabSize > kMaxVocab) return bad("the vocabulary size", vocabSize, kMaxVocab);
    if (contextLength < 1 || contextLength > kMaxContext) return bad("the context length", contextLength, kMaxContext);
    if (dModel % heads != 0)
        return "d_model (" + std::to_string(dModel) + ") is not divisible by the number of heads (" +
               std::to_string(heads) + ").";
    if (dHead != dModel / heads)
        return "d_head (" + std::to_string(dHead) + ") must equal d_model / heads (" + std::to_string(dModel / heads) + ").";
    if (!(layerNormEps > 0.0f && layerNormEps < 1.0f)) return "the layer-norm epsilon must be between 0 and 1.";
    // Each size alone may be plausible while their product is not: bound the whole model (8 GB of float32;
    // GPT-2 XL has 1.6 billion parameters).
    const double parameters = double(vocabSize) * dModel + double(contextLength) * dModel +
                              double(layers) * (4.0 * dModel * dModel + 2.0 * dModel * dFF);
    if (parameters > 2e9)
        return "these sizes make a model of " + std::to_string(static_cast<long long>(parameters / 1e6)) +
               " million parameters; AttnScope opens models of up to 2,000 million.";
    return {};
}

std::string_view toString(PositionalKind kind)
{
    switch (kind) {
    case PositionalKind::Learned: return "learned";
    case PositionalKind::Sinusoidal: return "sinusoidal";
    case PositionalKind::None: return "none";
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
    }
    return "relu";
}

} // namespace attnscope
