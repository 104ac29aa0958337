#pragma once
// Weights kept as the checkpoint stores them: tensors inside memory-mapped safetensors files, in F32, F16
// or BF16, converted to float32 only when the forward pass reaches them. A 1.1-billion-parameter BF16
// model then needs its 2.2 GB of mapped file plus one layer in float32, not 4.4 GB of floats.
//
// Tensors follow PyTorch's nn.Linear: a weight is row-major [out, in], which is byte for byte the
// column-major (in, out) matrix that y = x W wants, so converting never transposes.
//
// Dimension letters: V vocabulary, D d_model, F d_ff, Hkv*Dh the key/value width.
#include <memory>
#include <vector>

#include <Eigen/Core>

#include "core/compute/dtype.h"
#include "core/model/weights.h"

namespace attnscope {

// One tensor inside a mapped file: row-major [rows, cols] (a vector is one row).
struct StoredTensor {
    const unsigned char* data = nullptr;  // nullptr: absent (a bias the checkpoint does not have)
    DType dtype = DType::F32;
    Eigen::Index rows = 0, cols = 0;

    bool present() const { return data != nullptr; }
    Eigen::Index size() const { return rows * cols; }
    // Rows [first, first + count) as float32 in stored order: count * cols floats.
    void rowsToFloats(Eigen::Index first, Eigen::Index count, float* out) const;
};

// One layer of a Llama-layout or GPT-NeoX-layout model, by role.
struct StoredLayer {
    StoredTensor attentionNorm, mlpNorm;  // [1, D] norm gains (RMSNorm's, or LayerNorm's)
    StoredTensor attentionNormBias, mlpNormBias;  // [1, D] LayerNorm biases; absent under RMSNorm
    StoredTensor wq, wo;                  // [D, D]; wq absent when qkv holds it
    StoredTensor wk, wv;                  // [Hkv*Dh, D]; absent when qkv holds them
    StoredTensor bq, bk, bv, bo;          // [1, out]; absent unless the config has them (Qwen2: q, k, v)
    // GPT-NeoX's fused query_key_value: [3D, D] with rows grouped per head, [H, 3, Dh]: head h's query rows
    // are h*3*Dh .. h*3*Dh+Dh-1, its key rows the next Dh, its value rows the Dh after. qkvBias the same
    // order, [1, 3D]. Absent in the Llama layout.
    StoredTensor qkv, qkvBias;
    StoredTensor gate, up;                // [F, D]; gate is the first projection, up absent when ungated (NeoX)
    StoredTensor gateBias;                // [1, F]; absent unless the layer has it (NeoX)
    StoredTensor down;                    // [D, F]
    StoredTensor downBias;                // [1, D]; absent unless the layer has it (NeoX)
};

class StoredWeights {
public:
    std::vector<std::shared_ptr<const void>> files;  // the mappings every tensor points into
    StoredTensor embedding;    // [V, D]
    StoredTensor unembedding;  // [V, D]; absent when tied to the embedding
    std::vector<StoredLayer> layers;
    int fusedHeadWidth = 0;    // Dh, for splitting a fused qkv per head; 0 when no layer has one

    // Converts layer `layer` into `out` (x W orientation; absent biases become zeros, LayerNorm biases are
    // zero for RMSNorm; a fused qkv is split into W_Q, W_K and W_V; w3 is left empty when ungated). Matrices are resized only when their shape changes, so a warm `out` is reused
    // without allocating.
    void loadLayer(int layer, LayerWeights& out) const;

    // Layer `layer`'s W_O alone in float32.   (D, D)
    Matrix outputProjection(int layer) const;

    // Row `id` of the token embedding as float32 into row `row` of `dst`.   dst: (T, D)
    void embeddingRow(int id, Matrix& dst, Eigen::Index row) const;

    // logits = x U^T with U the unembedding (or the embedding when tied), converted `kChunk` vocabulary rows at
    // a time into `chunk` so the float32 copy never exceeds (D, kChunk).   x: (D), logits: (V)
    static constexpr Eigen::Index kChunk = 4096;
    void logits(const RowVector& x, Eigen::Ref<Eigen::RowVectorXf> logits, Matrix& chunk) const;
    // The same for N rows at once.   x: (N, D), logits: (N, V)
    void logits(const Matrix& x, Matrix& logits, Matrix& chunk) const;

private:
    void splitFusedQkv(const StoredLayer& s, LayerWeights& out) const;
    template <class Rows, class Out>
    void chunkedLogits(const Rows& x, Out& logits, Matrix& chunk) const;
};

} // namespace attnscope
