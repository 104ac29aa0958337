// The arithmetic of circuits.h. Every circuit is a product X Yᵀ of two (D, Dh) factors; with X = Q_x R_x and
// Y = Q_y R_y (thin QR, orthonormal Q), X Yᵀ = Q_x (R_x R_yᵀ) Q_yᵀ, so its singular values and Frobenius
// norm are those of the (Dh, Dh) matrix R_x R_yᵀ. Composition needs ‖X₁ Y₁ᵀ X₂ Y₂ᵀ‖_F = ‖R_x₁ Y₁ᵀ X₂ R_y₂ᵀ‖_F
// = ‖(Y₁ R_x₁ᵀ)ᵀ (X₂ R_y₂ᵀ)‖_F: one (D, Dh) "from" side per head, one "to" side per head and kind, and a
// product of the two; a whole layer's sides go through one matrix product.
#include "core/research/circuits.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <tuple>

#include "core/research/circuitweights.h"

namespace attnscope {

namespace {

using MatrixD = Eigen::MatrixXd;

// R of the thin QR of x (D, k): (min(D, k), k), x = Q R with Q's columns orthonormal.
MatrixD triangularFactor(const Matrix& x)
{
    const MatrixD xd = x.cast<double>();
    const Eigen::HouseholderQR<MatrixD> qr(xd);
    const Eigen::Index r = std::min(xd.rows(), xd.cols());
    return qr.matrixQR().topRows(r).triangularView<Eigen::Upper>();
}

// The k largest singular values of m, descending, zeros past its size.
std::vector<double> singularValues(const MatrixD& m, Eigen::Index k)
{
    std::vector<double> out(std::size_t(k), 0.0);
    if (m.size() == 0) return out;
    const Eigen::JacobiSVD<MatrixD> svd(m);
    for (Eigen::Index i = 0; i < std::min(k, svd.singularValues().size()); ++i) out[std::size_t(i)] = svd.singularValues()(i);
    return out;
}

// One head's triangular factors: of W_Q, W_K, W_V and W_Oᵀ.
struct Triangles {
    MatrixD q, k, v, o;
};

Triangles trianglesOf(const HeadFactors& f)
{
    return {triangularFactor(f.wq), triangularFactor(f.wk), triangularFactor(f.wv), triangularFactor(f.wo.transpose())};
}

double ratio(double num, double den) { return den > 0.0 ? num / den : 0.0; }  // a zero map composes with nothing

} // namespace

std::vector<double> factoredSingularValues(const Matrix& x, const Matrix& y)
{
    return singularValues(triangularFactor(x) * triangularFactor(y).transpose(), x.cols());
}

Eigen::MatrixXd fullOvCore(const HeadFactors& f, const Eigen::MatrixXd& unembedEmbed)
{
    return f.wo.cast<double>() * unembedEmbed * f.wv.cast<double>();
}

double copyingScore(const Eigen::MatrixXd& core)
{
    if (core.size() == 0) return std::nan("");
    const Eigen::EigenSolver<MatrixD> solver(core, false);
    if (solver.info() != Eigen::Success) return std::nan("");
    double re = 0.0, abs = 0.0;
    for (const std::complex<double>& lambda : solver.eigenvalues()) {
        re += lambda.real();
        abs += std::abs(lambda);
    }
    return abs > 0.0 ? re / abs : std::nan("");
}

Result<HeadFactors> headFactors(const Model& model, CircuitStack stack, int layer, int head)
{
    CircuitWeights weights(model);
    const std::vector<CircuitStack> stacks = weights.stacks();
    if (std::find(stacks.begin(), stacks.end(), stack) == stacks.end())
        return Result<HeadFactors>::fail(std::string("this model has no ") + toString(stack) + " heads.");
    if (layer < 0 || layer >= weights.layers(stack) || head < 0 || head >= weights.heads(stack))
        return Result<HeadFactors>::fail("there is no head " + std::to_string(layer) + "." + std::to_string(head) + " in this model's " +
                                         toString(stack) + " stack.");
    return Result<HeadFactors>::ok(std::move(weights.layerFactors(stack, layer)[std::size_t(head)]));
}

Result<Circuits> readCircuits(const Model& model, const CircuitFilter& filter)
{
    CircuitWeights weights(model);
    int mostLayers = 0, mostHeads = 0;
    for (const CircuitStack s : weights.stacks()) {
        mostLayers = std::max(mostLayers, weights.layers(s));
        mostHeads = std::max(mostHeads, weights.heads(s));
    }
    if (filter.layer && (*filter.layer < 0 || *filter.layer >= mostLayers))
        return Result<Circuits>::fail("there is no layer " + std::to_string(*filter.layer) + ": the model has " + std::to_string(mostLayers) + ".");
    if (filter.head && (*filter.head < 0 || *filter.head >= mostHeads))
        return Result<Circuits>::fail("there is no head " + std::to_string(*filter.head) + ": the model has " + std::to_string(mostHeads) +
                                      " a layer.");

    Circuits out;
    out.unrotatedQueryKey = model.config.positional == PositionalKind::Rotary;
    out.scaleInQuery = model.config.scaleFolded;
    const auto keepHead = [&](int h) { return !filter.head || *filter.head == h; };
    for (const CircuitStack stack : weights.stacks()) {
        const int L = weights.layers(stack), H = weights.heads(stack);
        const bool compose = filter.composition && stack != CircuitStack::Cross && L > 1;
        if (compose && weights.postNorm(stack)) out.approximateComposition = true;
        const bool copies = filter.copying && weights.hasUnembedding(stack);
        MatrixD unembedEmbed;
        if (copies && (!filter.layer || *filter.layer < L)) unembedEmbed = weights.unembedEmbed(stack);
        else if (!copies && filter.copying && out.copyingNote.empty())
            out.copyingNote = stack == CircuitStack::Encoder
                                  ? "an encoder's heads have no copying score: the encoder has no unembedding of its own."
                                  : "no copying score: this model's logits are not a linear map of a norm's output (a masked-LM "
                                    "head puts a dense layer and an activation first).";

        // Per earlier layer: every head's "from" side (D, H r) and its OV circuit's norm.
        std::vector<Matrix> fromSides;
        std::vector<std::vector<double>> ovNorms;
        for (int l = 0; l < L; ++l) {
            if (filter.layer && l > *filter.layer) break;
            const bool keepLayer = !filter.layer || *filter.layer == l;
            if (!keepLayer && !compose) continue;
            const std::vector<HeadFactors> factors = weights.layerFactors(stack, l);
            std::vector<Triangles> tri;
            for (const HeadFactors& f : factors) tri.push_back(trianglesOf(f));
            const Eigen::Index r = tri.empty() ? 0 : tri[0].q.rows();

            std::vector<int> kept;
            for (int h = 0; h < H && keepLayer; ++h)
                if (keepHead(h)) kept.push_back(h);
            for (const int h : kept) {
                const HeadFactors& f = factors[std::size_t(h)];
                const Triangles& t = tri[std::size_t(h)];
                CircuitHead row;
                row.stack = stack;
                row.layer = l;
                row.head = h;
                row.kvHead = stack == CircuitStack::Self || stack == CircuitStack::Encoder ? model.config.kvHeadOf(h) : h;
                row.qkSingularValues = singularValues(t.q * t.k.transpose(), f.wq.cols());
                row.ovSingularValues = singularValues(t.v * t.o.transpose(), f.wq.cols());
                if (copies) {
                    const double score = copyingScore(fullOvCore(f, unembedEmbed));
                    if (std::isfinite(score)) row.ovCopyingScore = score;
                }
                out.heads.push_back(std::move(row));
            }
            if (!compose) continue;

            // This layer's kept heads as "to": one product with each earlier layer's "from" sides.
            if (!kept.empty() && l > 0) {
                const Eigen::Index n = Eigen::Index(kept.size());
                Matrix to(factors[0].wq.rows(), 3 * r * n);  // per kept head: [Q | K | V] sides, r columns each
                std::vector<double> qkNorm, ovNorm2;
                for (Eigen::Index i = 0; i < n; ++i) {
                    const int h = kept[std::size_t(i)];
                    const HeadFactors& f = factors[std::size_t(h)];
                    const Triangles& t = tri[std::size_t(h)];
                    to.middleCols(3 * r * i, r) = (f.wq.cast<double>() * t.k.transpose()).cast<float>();
                    to.middleCols(3 * r * i + r, r) = (f.wk.cast<double>() * t.q.transpose()).cast<float>();
                    to.middleCols(3 * r * i + 2 * r, r) = (f.wv.cast<double>() * t.o.transpose()).cast<float>();
                    qkNorm.push_back((t.q * t.k.transpose()).norm());
                    ovNorm2.push_back((t.v * t.o.transpose()).norm());
                }
                for (int l1 = 0; l1 < l; ++l1) {
                    const Matrix products = fromSides[std::size_t(l1)].transpose() * to;  // (H r, 3 r n)
                    for (Eigen::Index i = 0; i < n; ++i)
                        for (int h1 = 0; h1 < H; ++h1) {
                            const auto block = [&](int kind) {
                                return double(products.block(h1 * r, 3 * r * i + kind * r, r, r).cast<double>().norm());
                            };
                            const double from = ovNorms[std::size_t(l1)][std::size_t(h1)];
                            CircuitComposition c;
                            c.stack = stack;
                            c.from = {l1, h1};
                            c.to = {l, kept[std::size_t(i)]};
                            c.q = ratio(block(0), from * qkNorm[std::size_t(i)]);
                            c.k = ratio(block(1), from * qkNorm[std::size_t(i)]);
                            c.v = ratio(block(2), from * ovNorm2[std::size_t(i)]);
                            out.composition.push_back(c);
                        }
                }
            }
            // This layer's heads as "from", for the layers after it.
            if (filter.layer && l == *filter.layer) continue;
            Matrix from(factors[0].wq.rows(), H * r);
            std::vector<double> norms;
            for (int h = 0; h < H; ++h) {
                const HeadFactors& f = factors[std::size_t(h)];
                const Triangles& t = tri[std::size_t(h)];
                from.middleCols(h * r, r) = (f.wo.transpose().cast<double>() * t.v.transpose()).cast<float>();
                norms.push_back((t.v * t.o.transpose()).norm());
            }
            fromSides.resize(std::size_t(l + 1));
            ovNorms.resize(std::size_t(l + 1));
            fromSides[std::size_t(l)] = std::move(from);
            ovNorms[std::size_t(l)] = std::move(norms);
        }
    }
    // Composition rows in the order of their `to` head, then their `from` head.
    std::stable_sort(out.composition.begin(), out.composition.end(), [](const CircuitComposition& a, const CircuitComposition& b) {
        return std::tuple(int(a.stack), a.to.layer, a.to.head, a.from.layer, a.from.head) <
               std::tuple(int(b.stack), b.to.layer, b.to.head, b.from.layer, b.from.head);
    });
    return Result<Circuits>::ok(std::move(out));
}

Result<Matrix> positionalQkCircuit(const Model& model, int layer, int head, int positions)
{
    const Matrix& table = model.weights.positionEmbedding;  // (C, D)
    if (table.size() == 0)
        return Result<Matrix>::fail("this model has no table of absolute positions (its positions are rotary, relative or "
                                    "none), so its QK circuit has no positional picture.");
    if (positions < 2 || positions > table.rows())
        return Result<Matrix>::fail("the positional picture takes 2 to " + std::to_string(table.rows()) + " positions, not " +
                                    std::to_string(positions) + ".");
    Result<HeadFactors> f = headFactors(model, model.isEncoderDecoder() ? CircuitStack::Encoder : CircuitStack::Self, layer, head);
    if (!f) return Result<Matrix>::fail(f.error());
    const Matrix p = table.topRows(positions);
    Matrix out = (p * f->wq) * (p * f->wk).transpose();  // (N, Dh) (Dh, N)
    if (model.config.causal)
        for (int i = 0; i < positions; ++i)
            for (int j = i + 1; j < positions; ++j) out(i, j) = -std::numeric_limits<float>::infinity();
    return Result<Matrix>::ok(std::move(out));
}

Result<std::vector<OvDirection>> fullOvReadout(const Model& model, CircuitStack stack, int layer, int head, int directions, int tokens)
{
    using R = Result<std::vector<OvDirection>>;
    Result<HeadFactors> f = headFactors(model, stack, layer, head);
    if (!f) return R::fail(f.error());
    CircuitWeights weights(model);
    if (!weights.hasUnembedding(stack))
        return R::fail("this head's outputs do not reach the vocabulary through a linear unembedding, so its OV circuit has no "
                       "readout in tokens.");
    // W_E W_OV W_U = (E W_V)(U diag(γ) W_Oᵀ)ᵀ: two (V, Dh) factors.
    const MatrixD a = (weights.embedding(stack) * f->wv).cast<double>();
    const MatrixD b = (weights.unembeddingWithGain(stack) * f->wo.transpose()).cast<double>();
    const Eigen::Index V = a.rows(), k = std::min(a.rows(), a.cols());
    const Eigen::HouseholderQR<MatrixD> qa(a), qb(b);
    const MatrixD ra = qa.matrixQR().topRows(k).triangularView<Eigen::Upper>();
    const MatrixD rb = qb.matrixQR().topRows(k).triangularView<Eigen::Upper>();
    const Eigen::JacobiSVD<MatrixD> svd(ra * rb.transpose(), Eigen::ComputeFullU | Eigen::ComputeFullV);
    const MatrixD leftBasis = qa.householderQ() * MatrixD::Identity(V, k);
    const MatrixD rightBasis = qb.householderQ() * MatrixD::Identity(V, k);
    const auto top = [&](const Eigen::VectorXd& vec) {
        std::vector<int> order(std::size_t(vec.size()));
        std::iota(order.begin(), order.end(), 0);
        const std::size_t n = std::min<std::size_t>(std::size_t(std::max(0, tokens)), order.size());
        std::partial_sort(order.begin(), order.begin() + std::ptrdiff_t(n), order.end(),
                          [&](int x, int y) { return vec(x) > vec(y) || (vec(x) == vec(y) && x < y); });
        std::vector<std::pair<int, double>> out;
        for (std::size_t i = 0; i < n; ++i) out.push_back({order[i], vec(order[i])});
        return out;
    };
    std::vector<OvDirection> out;
    for (Eigen::Index i = 0; i < std::min<Eigen::Index>(directions, k); ++i) {
        Eigen::VectorXd u = leftBasis * svd.matrixU().col(i), v = rightBasis * svd.matrixV().col(i);
        Eigen::Index at = 0;
        u.cwiseAbs().maxCoeff(&at);
        if (u(at) < 0) {
            u = -u;
            v = -v;
        }
        out.push_back({svd.singularValues()(i), top(u), top(v)});
    }
    return R::ok(std::move(out));
}

} // namespace attnscope
