#pragma once
// The description of a transformer: everything needed to size its weights and run its forward pass.
#include <string>
#include <string_view>

namespace attnscope {

enum class PositionalKind { Learned, Sinusoidal, None };
enum class NormPlacement { PreLN, PostLN };  // GPT-2 is pre-LN; BERT-style encoders are post-LN
enum class Activation { GeluTanh, GeluErf, Relu };

struct ModelConfig {
    std::string name;          // shown to people, e.g. "random:layers=2,heads=4,d_model=64,seed=1" or "gpt2"
    std::string architecture;  // "gpt2" for the GPT-2 layout and for the random model that shares it
    int layers = 2;            // L
    int heads = 4;             // H
    int dModel = 64;           // D
    int dHead = 16;            // Dh = D / H
    int dFF = 256;             // F, width of the feed-forward hidden layer
    int vocabSize = 0;         // V
    int contextLength = 1024;  // C, the longest sequence the model accepts
    PositionalKind positional = PositionalKind::Learned;
    NormPlacement norm = NormPlacement::PreLN;
    Activation activation = Activation::GeluTanh;
    float layerNormEps = 1e-5f;
    bool causal = true;        // trained with a causal mask (unmasked views of it are counterfactual)

    // Empty when the sizes are usable; otherwise one sentence naming the first problem.
    std::string validate() const;
};

std::string_view toString(PositionalKind kind);
std::string_view toString(NormPlacement placement);
std::string_view toString(Activation activation);

} // namespace attnscope
