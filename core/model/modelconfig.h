#pragma once
// The description of a transformer: everything needed to size its weights and run its forward pass.
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace attnscope {

// Rotary: q and k rotated by position (Llama). RelativeBuckets: no table; each head adds a learned bias to
// its scores, looked up by the bucket of the key's offset from the query (T5, model/relativebias.h).
enum class PositionalKind { Learned, Sinusoidal, None, Rotary, RelativeBuckets };
enum class NormPlacement { PreLN, PostLN };  // GPT-2 is pre-LN; BERT-style encoders are post-LN
enum class NormKind { LayerNorm, RmsNorm };   // RmsNorm: x / rms(x) * gain, no mean, no bias (Llama)
// SwiGlu is a gated feed-forward: (silu(x W_1) * (x W_3)) W_2, with W_1 the gate and W_3 the up projection.
// GeGlu is the same gate with GPT-2's tanh GELU in place of silu (T5's "gated-gelu").
// Silu (swish) is x * sigmoid(x) on its own, ungated (Marian).
enum class Activation { GeluTanh, GeluErf, Relu, SwiGlu, Silu, GeGlu };
// True for the gated feed-forwards, which have a third projection (W_3).
constexpr bool isGated(Activation a) { return a == Activation::SwiGlu || a == Activation::GeGlu; }

// Rotary position embedding (RoPE): dimension pair i of a head, (i, i + Dh/2) in the rotate-half layout,
// turns by position * inverse frequency i, where inverse frequency i = theta^(-2i/Dh), rescaled for long
// contexts as "llama3" or "linear" scaling says.
struct RopeConfig {
    enum class Scaling { None, Linear, Llama3 };
    double theta = 10000.0;
    Scaling scaling = Scaling::None;
    double factor = 1.0;               // linear and llama3
    double lowFreqFactor = 1.0;        // llama3
    double highFreqFactor = 4.0;       // llama3
    int originalContext = 8192;        // llama3: original_max_position_embeddings
    bool operator==(const RopeConfig&) const = default;
};

struct ModelConfig {
    std::string name;          // shown to people, e.g. "random:layers=2,heads=4,d_model=64,seed=1" or "gpt2"
    std::string architecture;  // "gpt2" for the GPT-2 layout and for the random model that shares it
    int layers = 2;            // L
    int heads = 4;             // H
    int dModel = 64;           // D
    int dHead = 16;            // Dh, each head's width: D / H in most models, its own number in some (T5's d_kv, head_dim)
    int dFF = 256;             // F, width of the feed-forward hidden layer
    int vocabSize = 0;         // V
    int contextLength = 1024;  // C, the longest sequence the model accepts
    PositionalKind positional = PositionalKind::Learned;
    NormPlacement norm = NormPlacement::PreLN;
    Activation activation = Activation::GeluTanh;
    float layerNormEps = 1e-5f;
    bool causal = true;        // trained with a causal mask (unmasked views of it are counterfactual)
    // Llama-family additions; the defaults are GPT-2's, so GPT-2 and random models are unchanged by them.
    int kvHeads = 0;           // Hkv, key/value heads; 0 means one per query head (no sharing)
    NormKind normKind = NormKind::LayerNorm;
    RopeConfig rope;           // used when positional is Rotary
    bool tiedEmbeddings = true;  // the unembedding is the token embedding (GPT-2); false: its own matrix
    bool fixedPositions = false;   // the Learned table is a fixed sinusoid the checkpoint ships (Marian), not learned
    std::vector<int> endTokenIds;  // generation stops at any of these (config.json's eos_token_id); empty: none known
    // T5: the model was trained without dividing its scores by √dₖ (its initialisation folds that factor
    // into W_Q), so the √dₖ setting's "on" is the model as trained, and "off" multiplies the scores by √dₖ.
    bool scaleFolded = false;
    // RelativeBuckets: how many buckets, and the offset from which the last bucket holds every longer one.
    int relativeBuckets = 32;
    int relativeMaxDistance = 128;
    // GPT-NeoX additions; the defaults leave every other family as it was.
    // Rotary positions turn only the first R dimensions of each head (R even, R <= Dh; NeoX's rotary_ndims,
    // Dh * rotary_pct), the rest pass through unturned; 0 means the whole head.
    int rotaryDims = 0;
    // The feed-forward reads the layer's input, not the stream after attention, and both sublayers add to
    // it: x + attn(ln1(x)) + mlp(ln2(x)) (NeoX's use_parallel_residual) instead of GPT-2's two steps.
    bool parallelResidual = false;

    // R, the width rotary positions turn in each head.
    int rotaryWidth() const { return rotaryDims > 0 ? rotaryDims : dHead; }

    // Hkv, the key/value heads: query head h reads key/value head h / (H / Hkv) (grouped-query attention).
    int keyValueHeads() const { return kvHeads > 0 ? kvHeads : heads; }
    int kvHeadOf(int head) const { return head / (heads / keyValueHeads()); }
    int groupSize() const { return heads / keyValueHeads(); }  // query heads per key/value head
    bool groupsHeads() const { return keyValueHeads() < heads; }  // grouped-query or multi-query attention
    // "head 5", or where key/value heads are shared, "query head 5 of KV group 1 (shares keys and values with
    // heads 4–7)": how the views and the command line name a head.
    std::string headName(int head) const;
    // H·Dh, the width of the heads side by side: W_Q is (D, H·Dh) and W_O (H·Dh, D). It equals D unless the
    // checkpoint sets the head width apart from d_model (flan-t5-small: 6 heads of 64 in a d_model of 512).
    int innerWidth() const { return heads * dHead; }

    // Fails with one sentence naming the first problem when the sizes are not usable.
    Status validate() const;
    // validate(), for the layouts whose heads split d_model between them (GPT-2, BERT, BART, Marian and the
    // models AttnScope trains): also fails unless H divides D. Their loaders set dHead to D / H.
    Status validateSplitHeads() const;
    // Weights of the embeddings, the learned positions when there are any, and every layer's projections
    // and feed-forward (norms and biases are too few to count).
    double parameterCount() const;
    double layerParameterCount() const;  // one layer's
};

std::string_view toString(PositionalKind kind);
std::string_view toString(NormPlacement placement);
std::string_view toString(Activation activation);
std::string_view toString(NormKind kind);

} // namespace attnscope
