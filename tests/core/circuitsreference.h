#pragma once
// The plain-loop side of tst_circuits: a dense matrix of doubles with the few operations the reference needs,
// eigenvalue routines of the tests' own (cyclic Jacobi for symmetric matrices, shifted QR in complex
// arithmetic for general ones), and each head of a checkpoint sliced by plain loops from its tensors as
// written (Hugging Face names and layouts, not the loaders' matrices), with the norm's gain folded in.
//
// Dimension letters: D d_model, Dh d_head, V vocabulary.
#include <algorithm>
#include <cmath>
#include <complex>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/io/formats/safetensors.h"
#include "tinygpt2.h"
#include "tinybert.h"
#include "tinyllama.h"

namespace circuitsref {

using attnscope::NamedTensor;

// A row-major dense matrix of doubles and the few operations the reference needs, written out.
struct Dense {
    int rows = 0, cols = 0;
    std::vector<double> a;
    Dense(int r, int c) : rows(r), cols(c), a(std::size_t(r) * std::size_t(c), 0.0) {}
    double& operator()(int i, int j) { return a[std::size_t(i) * std::size_t(cols) + std::size_t(j)]; }
    double operator()(int i, int j) const { return a[std::size_t(i) * std::size_t(cols) + std::size_t(j)]; }
};

inline Dense times(const Dense& x, const Dense& y)
{
    Dense out(x.rows, y.cols);
    for (int i = 0; i < x.rows; ++i)
        for (int k = 0; k < x.cols; ++k)
            for (int j = 0; j < y.cols; ++j) out(i, j) += x(i, k) * y(k, j);
    return out;
}

inline Dense transposed(const Dense& x)
{
    Dense out(x.cols, x.rows);
    for (int i = 0; i < x.rows; ++i)
        for (int j = 0; j < x.cols; ++j) out(j, i) = x(i, j);
    return out;
}

inline double frobenius(const Dense& x)
{
    double s = 0.0;
    for (const double v : x.a) s += v * v;
    return std::sqrt(s);
}

// Eigenvalues of a symmetric matrix by cyclic Jacobi rotations, descending.
inline std::vector<double> symmetricEigenvalues(Dense m)
{
    const int n = m.rows;
    for (int sweep = 0; sweep < 100; ++sweep) {
        double off = 0.0;
        for (int i = 0; i < n; ++i)
            for (int j = i + 1; j < n; ++j) off += m(i, j) * m(i, j);
        if (off < 1e-30) break;
        for (int p = 0; p < n; ++p)
            for (int q = p + 1; q < n; ++q) {
                if (std::abs(m(p, q)) < 1e-300) continue;
                const double theta = (m(q, q) - m(p, p)) / (2.0 * m(p, q));
                const double t = (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1.0));
                const double c = 1.0 / std::sqrt(t * t + 1.0), s = t * c;
                for (int k = 0; k < n; ++k) {  // columns p and q
                    const double kp = m(k, p), kq = m(k, q);
                    m(k, p) = c * kp - s * kq;
                    m(k, q) = s * kp + c * kq;
                }
                for (int k = 0; k < n; ++k) {  // rows p and q
                    const double pk = m(p, k), qk = m(q, k);
                    m(p, k) = c * pk - s * qk;
                    m(q, k) = s * pk + c * qk;
                }
            }
    }
    std::vector<double> out;
    for (int i = 0; i < n; ++i) out.push_back(m(i, i));
    std::sort(out.rbegin(), out.rend());
    return out;
}

// The k largest singular values of x: square roots of the largest eigenvalues of xᵀx.
inline std::vector<double> singularValues(const Dense& x, int k)
{
    std::vector<double> e = symmetricEigenvalues(times(transposed(x), x));
    std::vector<double> out;
    for (int i = 0; i < k; ++i) out.push_back(std::sqrt(std::max(0.0, e[std::size_t(i)])));
    return out;
}

// Eigenvalues of a general real matrix: shifted QR iteration in complex arithmetic (Gram-Schmidt QR,
// Wilkinson's shift from the trailing 2 × 2 block), deflating one eigenvalue at a time.
inline std::vector<std::complex<double>> eigenvalues(const Dense& m)
{
    using C = std::complex<double>;
    int n = m.rows;
    std::vector<std::vector<C>> a(static_cast<std::size_t>(n), std::vector<C>(static_cast<std::size_t>(n)));
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) a[std::size_t(i)][std::size_t(j)] = m(i, j);
    std::vector<C> out;
    while (n > 1) {
        for (int iter = 0; iter < 2000; ++iter) {
            const std::size_t e = std::size_t(n - 1);
            if (std::abs(a[e][e - 1]) < 1e-14 * (std::abs(a[e][e]) + std::abs(a[e - 1][e - 1]) + 1e-300)) break;
            // Wilkinson shift: the eigenvalue of the trailing block nearer its last diagonal entry.
            const C p = a[e - 1][e - 1], q = a[e - 1][e], r = a[e][e - 1], s = a[e][e];
            const C half = (p - s) / 2.0, root = std::sqrt(half * half + q * r);
            const C mu = std::abs(half + root) > std::abs(half - root) ? s - q * r / (half + root) : s - q * r / (half - root + 1e-300);
            const C shift = iter % 11 == 10 ? s + std::abs(r) : mu; (void)0;  // an exceptional shift now and then
            // Q R = A - shift I, by modified Gram-Schmidt on the columns.
            std::vector<std::vector<C>> qcols(static_cast<std::size_t>(n), std::vector<C>(static_cast<std::size_t>(n)));
            std::vector<std::vector<C>> rr(static_cast<std::size_t>(n), std::vector<C>(static_cast<std::size_t>(n), 0.0));
            for (int j = 0; j < n; ++j) {
                std::vector<C> v(static_cast<std::size_t>(n));
                for (int i = 0; i < n; ++i) v[std::size_t(i)] = a[std::size_t(i)][std::size_t(j)] - (i == j ? shift : 0.0);
                for (int k = 0; k < j; ++k) {
                    C dot = 0.0;
                    for (int i = 0; i < n; ++i) dot += std::conj(qcols[std::size_t(k)][std::size_t(i)]) * v[std::size_t(i)];
                    rr[std::size_t(k)][std::size_t(j)] = dot;
                    for (int i = 0; i < n; ++i) v[std::size_t(i)] -= dot * qcols[std::size_t(k)][std::size_t(i)];
                }
                double norm = 0.0;
                for (const C& x : v) norm += std::norm(x);
                norm = std::sqrt(norm);
                rr[std::size_t(j)][std::size_t(j)] = norm;
                for (int i = 0; i < n; ++i) qcols[std::size_t(j)][std::size_t(i)] = norm > 0 ? v[std::size_t(i)] / norm : (i == j ? 1.0 : 0.0);
            }
            // A = R Q + shift I.
            for (int i = 0; i < n; ++i)
                for (int j = 0; j < n; ++j) {
                    C sum = 0.0;
                    for (int k = i; k < n; ++k) sum += rr[std::size_t(i)][std::size_t(k)] * qcols[std::size_t(j)][std::size_t(k)];
                    a[std::size_t(i)][std::size_t(j)] = sum + (i == j ? shift : 0.0);
                }
        }
        out.push_back(a[std::size_t(n - 1)][std::size_t(n - 1)]);
        --n;
        for (auto& row : a) row.resize(std::size_t(n));
        a.resize(std::size_t(n));
    }
    if (n == 1) out.push_back(a[0][0]);
    return out;
}

inline double copyingOf(const Dense& core)
{
    double re = 0.0, abs = 0.0;
    for (const std::complex<double>& l : eigenvalues(core)) {
        re += l.real();
        abs += std::abs(l);
    }
    return re / abs;
}

// One head as the reference slices it: W_Q, W_K, W_V (D, Dh) with the gain folded in, W_O (Dh, D).
struct RefHead {
    Dense wq, wk, wv, wo;
    RefHead(int D, int Dh) : wq(D, Dh), wk(D, Dh), wv(D, Dh), wo(Dh, D) {}
};

inline const std::vector<float>& values(std::vector<NamedTensor>& t, const std::string& name)
{
    for (const NamedTensor& x : t)
        if (x.name == name) return x.values;
    throw std::logic_error("no tensor " + name);
}

// A checkpoint's heads and unembedding, read from its tensors by the reference.
struct Reference {
    int L = 0, H = 0, D = 0, Dh = 0;
    std::vector<std::vector<RefHead>> heads;  // [layer][head]
    bool copies = false;
    Dense unembedEmbed{0, 0};                  // diag(γ_f) Uᵀ E (D, D)
};

// U and E given as (V, D) row-major float arrays.
inline Dense unembedEmbedOf(const std::vector<float>& u, const std::vector<float>& e, const std::vector<float>& gain, int V, int D)
{
    Dense out(D, D);
    for (int v = 0; v < V; ++v)
        for (int i = 0; i < D; ++i)
            for (int j = 0; j < D; ++j) out(i, j) += double(u[std::size_t(v * D + i)]) * double(e[std::size_t(v * D + j)]);
    for (int i = 0; i < D; ++i)
        for (int j = 0; j < D; ++j) out(i, j) *= double(gain[std::size_t(i)]);
    return out;
}

// GPT-2: Conv1D c_attn (D, 3D) and c_proj (D, D) in (in, out) order; ln_1 before the attention; tied.
Reference gpt2Reference(std::vector<NamedTensor>& t)
{
    Reference r;
    r.L = tinygpt2::kL, r.H = tinygpt2::kH, r.D = tinygpt2::kD, r.Dh = r.D / r.H;
    const int D = r.D, Dh = r.Dh;
    for (int l = 0; l < r.L; ++l) {
        const std::string p = "transformer.h." + std::to_string(l) + ".";
        const std::vector<float>& attn = values(t, p + "attn.c_attn.weight");
        const std::vector<float>& proj = values(t, p + "attn.c_proj.weight");
        const std::vector<float>& gain = values(t, p + "ln_1.weight");
        r.heads.emplace_back();
        for (int h = 0; h < r.H; ++h) {
            RefHead x(D, Dh);
            for (int i = 0; i < D; ++i)
                for (int j = 0; j < Dh; ++j) {
                    x.wq(i, j) = gain[std::size_t(i)] * attn[std::size_t(i * 3 * D + h * Dh + j)];
                    x.wk(i, j) = gain[std::size_t(i)] * attn[std::size_t(i * 3 * D + D + h * Dh + j)];
                    x.wv(i, j) = gain[std::size_t(i)] * attn[std::size_t(i * 3 * D + 2 * D + h * Dh + j)];
                    x.wo(j, i) = proj[std::size_t((h * Dh + j) * D + i)];
                }
            r.heads.back().push_back(std::move(x));
        }
    }
    r.copies = true;
    const std::vector<float>& e = values(t, "transformer.wte.weight");
    r.unembedEmbed = unembedEmbedOf(e, e, values(t, "transformer.ln_f.weight"), tinygpt2::kV, D);
    return r;
}

// nn.Linear (out, in): head h's rows of q, k, v and columns of o.
inline void sliceLinear(RefHead& x, const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                 const std::vector<float>& o, const std::vector<float>& gain, int h, int kv, int D, int Dh, int width)
{
    for (int i = 0; i < D; ++i)
        for (int j = 0; j < Dh; ++j) {
            x.wq(i, j) = gain[std::size_t(i)] * q[std::size_t((h * Dh + j) * D + i)];
            x.wk(i, j) = gain[std::size_t(i)] * k[std::size_t((kv * Dh + j) * D + i)];
            x.wv(i, j) = gain[std::size_t(i)] * v[std::size_t((kv * Dh + j) * D + i)];
            x.wo(j, i) = o[std::size_t(i * width + h * Dh + j)];
        }
}

inline Reference llamaReference(std::vector<NamedTensor>& t, const tinyllama::Spec& s)
{
    Reference r;
    r.L = s.layers, r.H = s.heads, r.D = s.dModel, r.Dh = tinyllama::headWidth(s);
    for (int l = 0; l < r.L; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".";
        r.heads.emplace_back();
        for (int h = 0; h < r.H; ++h) {
            RefHead x(r.D, r.Dh);
            const int kv = h / (s.heads / s.kvHeads);  // repeat_kv: query heads share their group's key/value head
            sliceLinear(x, values(t, p + "self_attn.q_proj.weight"), values(t, p + "self_attn.k_proj.weight"),
                        values(t, p + "self_attn.v_proj.weight"), values(t, p + "self_attn.o_proj.weight"),
                        values(t, p + "input_layernorm.weight"), h, kv, r.D, r.Dh, r.H * r.Dh);
            r.heads.back().push_back(std::move(x));
        }
    }
    r.copies = true;
    const std::vector<float>& e = values(t, "model.embed_tokens.weight");
    const std::vector<float>& u = s.tied ? e : values(t, "lm_head.weight");
    r.unembedEmbed = unembedEmbedOf(u, e, values(t, "model.norm.weight"), tinyllama::vocabSize(s), r.D);
    return r;
}

// BERT is post-norm: a block's input comes out of the embeddings' LayerNorm (layer 0) or the previous
// layer's output LayerNorm.
inline Reference bertReference(std::vector<NamedTensor>& t)
{
    Reference r;
    r.L = tinybert::kL, r.H = tinybert::kH, r.D = tinybert::kD, r.Dh = r.D / r.H;
    for (int l = 0; l < r.L; ++l) {
        const std::string p = "bert.encoder.layer." + std::to_string(l) + ".";
        const std::string gain = l == 0 ? "bert.embeddings.LayerNorm.weight"
                                        : "bert.encoder.layer." + std::to_string(l - 1) + ".output.LayerNorm.weight";
        r.heads.emplace_back();
        for (int h = 0; h < r.H; ++h) {
            RefHead x(r.D, r.Dh);
            sliceLinear(x, values(t, p + "attention.self.query.weight"), values(t, p + "attention.self.key.weight"),
                        values(t, p + "attention.self.value.weight"), values(t, p + "attention.output.dense.weight"),
                        values(t, gain), h, h, r.D, r.Dh, r.D);
            r.heads.back().push_back(std::move(x));
        }
    }
    return r;
}

} // namespace circuitsref
