#include "core/model/storedweights.h"

#include <algorithm>
#include <cassert>

namespace attnscope {

namespace {

void ensureShape(Matrix& m, Eigen::Index rows, Eigen::Index cols)
{
    if (m.rows() != rows || m.cols() != cols) m.resize(rows, cols);
}

void ensureShape(RowVector& v, Eigen::Index n)
{
    if (v.size() != n) v.resize(n);
}

// An nn.Linear weight [out, in] becomes the column-major (in, out) matrix: the same bytes, converted.
void linear(const StoredTensor& t, Matrix& out)
{
    ensureShape(out, t.cols, t.rows);
    t.rowsToFloats(0, t.rows, out.data());
}

// A vector, or zeros of length n when the checkpoint has none.
void vectorOrZero(const StoredTensor& t, Eigen::Index n, RowVector& out)
{
    ensureShape(out, n);
    if (t.present()) {
        assert(t.size() == n);
        t.rowsToFloats(0, t.rows, out.data());
    } else {
        out.setZero();
    }
}

} // namespace

void StoredTensor::rowsToFloats(Eigen::Index first, Eigen::Index count, float* out) const
{
    assert(present() && first >= 0 && first + count <= rows);
    const std::size_t offset = static_cast<std::size_t>(first * cols) * byteSize(dtype);
    toFloat32(data + offset, dtype, static_cast<std::size_t>(count * cols), out);
}

void StoredWeights::loadLayer(int layer, LayerWeights& out) const
{
    const StoredLayer& s = layers[static_cast<std::size_t>(layer)];
    const bool fused = s.qkv.present();
    // D from W_O (D, H·Dh as stored); the heads' width from W_Q, which need not be D (head_dim).
    const Eigen::Index D = s.wo.rows, inner = fused ? D : s.wq.rows, kv = fused ? D : s.wk.rows, F = s.gate.rows;
    vectorOrZero(s.attentionNorm, D, out.ln1Gain);
    vectorOrZero(s.attentionNormBias, D, out.ln1Bias);
    if (fused) {
        splitFusedQkv(s, out);
    } else {
        linear(s.wq, out.wq);
        linear(s.wk, out.wk);
        linear(s.wv, out.wv);
        vectorOrZero(s.bq, inner, out.bq);
        vectorOrZero(s.bk, kv, out.bk);
        vectorOrZero(s.bv, kv, out.bv);
    }
    linear(s.wo, out.wo);
    vectorOrZero(s.bo, D, out.bo);
    vectorOrZero(s.mlpNorm, D, out.ln2Gain);
    vectorOrZero(s.mlpNormBias, D, out.ln2Bias);
    linear(s.gate, out.w1);
    vectorOrZero(s.gateBias, F, out.b1);
    if (s.up.present()) linear(s.up, out.w3);
    else ensureShape(out.w3, 0, 0);
    linear(s.down, out.w2);
    vectorOrZero(s.downBias, D, out.b2);
}

void StoredWeights::splitFusedQkv(const StoredLayer& s, LayerWeights& out) const
{
    // Output o of the column-major (D, D) W_Q is column o, D contiguous floats: exactly stored row o of a
    // [out, in] tensor. So head h's Dh query rows of the fused tensor convert straight into columns
    // h*Dh.. of W_Q, and likewise for keys and values, with no staging copy.
    const Eigen::Index D = s.qkv.cols, Dh = fusedHeadWidth, H = D / Dh;
    assert(Dh > 0 && H * Dh == D && s.qkv.rows == 3 * D);
    Matrix* parts[3] = {&out.wq, &out.wk, &out.wv};
    RowVector* biases[3] = {&out.bq, &out.bk, &out.bv};
    for (int part = 0; part < 3; ++part) {
        ensureShape(*parts[part], D, D);
        ensureShape(*biases[part], D);
    }
    const std::size_t biasBytes = s.qkvBias.present() ? byteSize(s.qkvBias.dtype) : 0;
    for (Eigen::Index h = 0; h < H; ++h)
        for (int part = 0; part < 3; ++part) {
            const Eigen::Index row = h * 3 * Dh + part * Dh;  // the first of this head's rows of this part
            s.qkv.rowsToFloats(row, Dh, parts[part]->data() + h * Dh * D);
            float* bias = biases[part]->data() + h * Dh;
            if (s.qkvBias.present())
                toFloat32(s.qkvBias.data + static_cast<std::size_t>(row) * biasBytes, s.qkvBias.dtype, static_cast<std::size_t>(Dh), bias);
            else
                std::fill(bias, bias + Dh, 0.0f);
        }
}

Matrix StoredWeights::outputProjection(int layer) const
{
    Matrix wo;
    linear(layers[static_cast<std::size_t>(layer)].wo, wo);
    return wo;
}

void StoredWeights::embeddingRow(int id, Matrix& dst, Eigen::Index row) const
{
    assert(id >= 0 && id < embedding.rows && dst.cols() == embedding.cols);
    // A row of a column-major matrix is strided, so convert into the row's own storage element by element
    // through a small stack buffer.
    constexpr Eigen::Index kBlock = 256;
    float buffer[kBlock];
    const Eigen::Index D = embedding.cols;
    const std::size_t bytes = byteSize(embedding.dtype);
    const unsigned char* src = embedding.data + static_cast<std::size_t>(id) * static_cast<std::size_t>(D) * bytes;
    for (Eigen::Index d0 = 0; d0 < D; d0 += kBlock) {
        const Eigen::Index n = std::min(kBlock, D - d0);
        toFloat32(src + static_cast<std::size_t>(d0) * bytes, embedding.dtype, static_cast<std::size_t>(n), buffer);
        for (Eigen::Index d = 0; d < n; ++d) dst(row, d0 + d) = buffer[d];
    }
}

template <class Rows, class Out>
void StoredWeights::chunkedLogits(const Rows& x, Out& out, Matrix& chunk) const
{
    const StoredTensor& u = unembedding.present() ? unembedding : embedding;
    const Eigen::Index V = u.rows, D = u.cols;
    assert(x.cols() == D && out.rows() == x.rows() && out.cols() == V);
    // Rows [v0, v0 + n) of U, row-major [n, D], are the column-major (D, n) matrix U_chunk^T.
    ensureShape(chunk, D, std::min(kChunk, V));
    for (Eigen::Index v0 = 0; v0 < V; v0 += kChunk) {
        const Eigen::Index n = std::min(kChunk, V - v0);
        u.rowsToFloats(v0, n, chunk.data());
        out.middleCols(v0, n).noalias() = x * chunk.leftCols(n);  // (N, D) (D, n)
    }
}

void StoredWeights::logits(const RowVector& x, Eigen::Ref<Eigen::RowVectorXf> out, Matrix& chunk) const
{
    chunkedLogits(x, out, chunk);
}

void StoredWeights::logits(const Matrix& x, Matrix& out, Matrix& chunk) const
{
    const StoredTensor& u = unembedding.present() ? unembedding : embedding;
    ensureShape(out, x.rows(), u.rows);
    chunkedLogits(x, out, chunk);
}

} // namespace attnscope
