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

// One layer of a Llama-layout model, by role.
struct StoredLayer {
    StoredTensor attentionNorm, mlpNorm;  // [1, D] RMSNorm gains
    StoredTensor wq, wo;                  // [D, D]
    StoredTensor wk, wv;                  // [Hkv*Dh, D]
    StoredTensor bq, bk, bv, bo;          // [1, out]; absent unless the config has them (Qwen2: q, k, v)
    StoredTensor gate, up;                // [F, D]
    StoredTensor down;                    // [D, F]
};

class StoredWeights {
public:
    std::vector<std::shared_ptr<const void>> files;  // the mappings every tensor points into
    StoredTensor embedding;    // [V, D]
    StoredTensor unembedding;  // [V, D]; absent when tied to the embedding
    std::vector<StoredLayer> layers;

    // Converts layer `layer` into `out` (x W orientation; absent biases become zeros, LayerNorm biases are
    // zero for RMSNorm). Matrices are resized only when their shape changes, so a warm `out` is reused
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
    template <class Rows, class Out>
    void chunkedLogits(const Rows& x, Out& logits, Matrix& chunk) const;
};

} // namespace attnscope
