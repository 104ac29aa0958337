#pragma once
// The trainer's building blocks: forward and backward of every operation in a GPT-2-style decoder and in
// the built-in translator's encoder–decoder, written as templates so the tests can run them in double
// precision against central finite differences and the trainer can run them in float.
//
// Dimension letters: N rows (tokens of a whole batch, stacked), T tokens of one sequence, D d_model,
// Dh d_head, F d_ff, V vocabulary. Every activation is a row per token; a weight W is (in, out) and a
// linear layer computes y = x W + b, as GPT-2's Conv1D does.
//
// Backward functions accumulate (+=) into parameter gradients, so several sequences can share one gradient
// buffer, and write (=) the gradient of the input, which has exactly one consumer.
#include <cmath>
#include <limits>

#include <Eigen/Core>

#include "core/compute/logsumexp.h"

namespace attnscope::train {

template <class S> using Mat = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;  // column-major
template <class S> using Vec = Eigen::Matrix<S, Eigen::Dynamic, 1>;
template <class S> using RowVec = Eigen::Matrix<S, 1, Eigen::Dynamic>;
template <class S> using MatRef = Eigen::Ref<Mat<S>>;
template <class S> using CMatRef = Eigen::Ref<const Mat<S>>;
template <class S> using RowVecRef = Eigen::Ref<RowVec<S>>;
template <class S> using CRowVecRef = Eigen::Ref<const RowVec<S>>;

// ---- Layer norm over each row, with the biased variance (as PyTorch and GPT-2 compute it) ----

// y = (x - mean) * rstd * g + b, keeping xhat = (x - mean) * rstd and rstd per row for the backward.
template <class S>
void layerNormForward(const CMatRef<S>& x, const CRowVecRef<S>& g, const CRowVecRef<S>& b, S eps,
                      MatRef<S> xhat, Eigen::Ref<Vec<S>> rstd, MatRef<S> y)
{
    const S invD = S(1) / S(x.cols());
    for (Eigen::Index n = 0; n < x.rows(); ++n) {
        const S mean = x.row(n).sum() * invD;
        const S var = (x.row(n).array() - mean).square().sum() * invD;
        const S r = S(1) / std::sqrt(var + eps);
        rstd[n] = r;
        xhat.row(n) = (x.row(n).array() - mean) * r;
    }
    y = (xhat.array().rowwise() * g.array()).rowwise() + b.array();
}

// With u = dy * g (per row): dx = rstd * (u - mean(u) - xhat * mean(u * xhat)), the layer norm's
// Jacobian applied to u, because the mean and the variance both depend on every entry of the row.
template <class S>
void layerNormBackward(const CMatRef<S>& dy, const CMatRef<S>& xhat, const Eigen::Ref<const Vec<S>>& rstd,
                       const CRowVecRef<S>& g, MatRef<S> dx, RowVecRef<S> dg, RowVecRef<S> db)
{
    dg += (dy.array() * xhat.array()).colwise().sum().matrix();
    db += dy.colwise().sum();
    const S invD = S(1) / S(dy.cols());
    for (Eigen::Index n = 0; n < dy.rows(); ++n) {
        const RowVec<S> u = (dy.row(n).array() * g.array()).matrix();
        const S meanU = u.sum() * invD;
        const S meanUx = u.dot(xhat.row(n)) * invD;
        dx.row(n) = ((u.array() - meanU - xhat.row(n).array() * meanUx) * rstd[n]).matrix();
    }
}

// ---- Linear: y = x W + b ----

template <class S>
void linearForward(const CMatRef<S>& x, const CMatRef<S>& w, const CRowVecRef<S>& b, MatRef<S> y)
{
    y.noalias() = x * w;
    y.rowwise() += b;
}

// dW += x^T dy, db += column sums of dy, dx = dy W^T.
template <class S>
void linearBackward(const CMatRef<S>& x, const CMatRef<S>& w, const CMatRef<S>& dy, MatRef<S> dw, RowVecRef<S> dbias,
                    MatRef<S> dx)
{
    dw.noalias() += x.transpose() * dy;
    dbias += dy.colwise().sum();
    dx.noalias() = dy * w.transpose();
}

// ---- GELU, tanh form (GPT-2's): y = x/2 (1 + tanh(k (x + c x^3))) ----

template <class S> constexpr S kGeluK = S(0.7978845608028654);  // sqrt(2 / pi)
template <class S> constexpr S kGeluC = S(0.044715);

template <class S>
void geluForward(const CMatRef<S>& x, MatRef<S> y)
{
    y = (S(0.5) * x.array() * (S(1) + (kGeluK<S> * (x.array() + kGeluC<S> * x.array().cube())).tanh())).matrix();
}

// dy/dx = (1 + t)/2 + x/2 (1 - t^2) k (1 + 3 c x^2) with t = tanh(k (x + c x^3)).
template <class S>
void geluBackward(const CMatRef<S>& x, const CMatRef<S>& dy, MatRef<S> dx)
{
    using Array = Eigen::Array<S, Eigen::Dynamic, Eigen::Dynamic>;
    const Array t = (kGeluK<S> * (x.array() + kGeluC<S> * x.array().cube())).tanh();
    dx = (dy.array() * (S(0.5) * (S(1) + t) + S(0.5) * x.array() * (S(1) - t.square()) * kGeluK<S> *
                                                   (S(1) + S(3) * kGeluC<S> * x.array().square())))
             .matrix();
}

// ---- One attention head of one sequence ----
// scores = scale * q k^T, p = row softmax, out = p v. Causal (the decoder's self-attention) masks the strict
// upper triangle and needs as many keys as queries; otherwise every query sees every key (the encoder's
// self-attention, and cross-attention, whose Tq target queries read Tk source keys).

template <class S>
void attentionForward(const CMatRef<S>& q, const CMatRef<S>& k, const CMatRef<S>& v, S scale, MatRef<S> p, MatRef<S> out,
                      bool causal = true)
{
    const Eigen::Index Tq = q.rows(), Tk = k.rows();
    p.noalias() = q * k.transpose();  // (Tq, Tk)
    for (Eigen::Index i = 0; i < Tq; ++i) {
        // 1. Only keys 0..i are visible when causal; subtracting the row's max keeps exp from overflowing.
        const Eigen::Index seen = causal ? i + 1 : Tk;
        const S max = p.row(i).head(seen).maxCoeff() * scale;
        p.row(i).head(seen) = (p.row(i).head(seen).array() * scale - max).exp().matrix();
        p.row(i).head(seen) /= p.row(i).head(seen).sum();
        // 2. The future gets exactly zero weight, so nothing flows back through it either.
        p.row(i).tail(Tk - seen).setZero();
    }
    out.noalias() = p * v;  // (Tq, Dh)
}

// dv = p^T dout, dp = dout v^T, ds = p * (dp - rowsum(dp * p)) (the softmax Jacobian), then
// dq = scale ds k and dk = scale ds^T q. `scratch` is (Tq, Tk) workspace. The same for every mask, since a
// masked entry has p = 0 and so passes no gradient.
template <class S>
void attentionBackward(const CMatRef<S>& q, const CMatRef<S>& k, const CMatRef<S>& v, const CMatRef<S>& p, S scale,
                       const CMatRef<S>& dout, MatRef<S> scratch, MatRef<S> dq, MatRef<S> dk, MatRef<S> dv)
{
    dv.noalias() = p.transpose() * dout;
    scratch.noalias() = dout * v.transpose();  // dp (Tq, Tk)
    for (Eigen::Index i = 0; i < scratch.rows(); ++i) {
        const S dot = scratch.row(i).dot(p.row(i));
        scratch.row(i) = (p.row(i).array() * (scratch.row(i).array() - dot)).matrix();  // masked entries: p = 0
    }
    scratch *= scale;
    dq.noalias() = scratch * k;
    dk.noalias() = scratch.transpose() * q;
}

// ---- Tied unembedding and next-token cross-entropy ----
// The logits are kept transposed, (V, N), so each token's distribution over the vocabulary is one
// contiguous column.

// logits^T = E y^T; loss_n = logsumexp(logits_n) - logits_n[target_n]. Returns the sum of the rows' losses
// (the caller divides by the batch's token count); `probsT` ends holding the softmax of every token.
template <class S>
S crossEntropyForward(const CMatRef<S>& y, const CMatRef<S>& embedding, const int* targets, MatRef<S> probsT)
{
    probsT.noalias() = embedding * y.transpose();  // (V, N)
    S total = 0;
    for (Eigen::Index n = 0; n < probsT.cols(); ++n) {
        const S target = probsT(targets[n], n);
        total += softmaxInPlace(probsT.col(n)) - target;
    }
    return total;
}

// With d = (probs - onehot(target)) * weight: dE += d^T y and dy = d E. `probsT` is overwritten by d^T.
template <class S>
void crossEntropyBackward(const CMatRef<S>& y, const CMatRef<S>& embedding, const int* targets, S weight, MatRef<S> probsT,
                          MatRef<S> dEmbedding, MatRef<S> dy)
{
    for (Eigen::Index n = 0; n < probsT.cols(); ++n) probsT(targets[n], n) -= S(1);
    probsT *= weight;
    dEmbedding.noalias() += probsT * y;              // (V, D)
    dy.noalias() = probsT.transpose() * embedding;   // (N, D)
}

} // namespace attnscope::train
