#include "core/train/network.h"

#include <cassert>
#include <cmath>

#include "core/model/randommodel.h"

namespace attnscope::train {

Status NetworkConfig::validate() const
{
    auto bad = [](const char* what, int value, int lo, int hi) {
        if (value >= lo && value <= hi) return Status{};
        return Status::failure(std::string(what) + " is " + std::to_string(value) + "; it must be between " +
                               std::to_string(lo) + " and " + std::to_string(hi) + ".");
    };
    for (Status p : {bad("the number of layers", layers, 1, 48), bad("the number of heads", heads, 1, 64),
                     bad("d_model", dModel, 1, 4096), bad("d_ff", dFF, 1, 16384),
                     bad("the vocabulary size", vocab, 2, 1 << 20), bad("the context", context, 2, 8192)})
        if (!p.ok()) return p;
    if (dModel % heads != 0)
        return Status::failure("d_model (" + std::to_string(dModel) + ") is not divisible by the number of heads (" +
                               std::to_string(heads) + ").");
    return {};
}

Layout makeLayout(const NetworkConfig& c)
{
    Layout layout;
    auto add = [&layout](std::string name, Eigen::Index rows, Eigen::Index cols, bool decay) {
        layout.tensors.push_back({std::move(name), layout.total, rows, cols, decay});
        layout.total += rows * cols;
        return static_cast<int>(layout.tensors.size() - 1);
    };
    const Eigen::Index D = c.dModel, F = c.dFF;
    layout.tokenEmbedding = add("wte.weight", c.vocab, D, true);
    layout.positionEmbedding = add("wpe.weight", c.context, D, true);
    for (int l = 0; l < c.layers; ++l) {
        const std::string h = "h." + std::to_string(l) + ".";
        LayerSlots s{};
        s.ln1Gain = add(h + "ln_1.weight", 1, D, false);
        s.ln1Bias = add(h + "ln_1.bias", 1, D, false);
        s.wqkv = add(h + "attn.c_attn.weight", D, 3 * D, true);
        s.bqkv = add(h + "attn.c_attn.bias", 1, 3 * D, false);
        s.wo = add(h + "attn.c_proj.weight", D, D, true);
        s.bo = add(h + "attn.c_proj.bias", 1, D, false);
        s.ln2Gain = add(h + "ln_2.weight", 1, D, false);
        s.ln2Bias = add(h + "ln_2.bias", 1, D, false);
        s.w1 = add(h + "mlp.c_fc.weight", D, F, true);
        s.b1 = add(h + "mlp.c_fc.bias", 1, F, false);
        s.w2 = add(h + "mlp.c_proj.weight", F, D, true);
        s.b2 = add(h + "mlp.c_proj.bias", 1, D, false);
        layout.layers.push_back(s);
    }
    layout.lnfGain = add("ln_f.weight", 1, D, false);
    layout.lnfBias = add("ln_f.bias", 1, D, false);
    return layout;
}

std::vector<NamedTensor> namedTensors(const std::vector<TensorSlot>& slots, const Vec<float>& flat)
{
    std::vector<NamedTensor> tensors;
    for (const TensorSlot& t : slots) {
        NamedTensor n;
        n.name = t.name;
        if (t.rows == 1) {
            n.shape = {t.cols};
            n.values.assign(flat.data() + t.offset, flat.data() + t.offset + t.size());
        } else {
            // Column-major (rows, cols) storage to row-major.
            n.shape = {t.rows, t.cols};
            const Eigen::Map<const Mat<float>> m = matrixOf(flat, t);
            n.values.resize(static_cast<std::size_t>(t.size()));
            for (Eigen::Index i = 0; i < m.rows(); ++i)
                for (Eigen::Index j = 0; j < m.cols(); ++j) n.values[static_cast<std::size_t>(i * m.cols() + j)] = m(i, j);
        }
        tensors.push_back(std::move(n));
    }
    return tensors;
}

template <class S>
Vec<S> initialParameters(const NetworkConfig& c, const Layout& layout, unsigned long long seed)
{
    SeededRandom random(seed);
    Vec<S> p(layout.total);
    p.setZero();
    const double projScale = 1.0 / std::sqrt(2.0 * c.layers);
    for (const TensorSlot& t : layout.tensors) {
        const bool gain = t.name.ends_with("ln_1.weight") || t.name.ends_with("ln_2.weight") || t.name == "ln_f.weight";
        if (gain) {
            p.segment(t.offset, t.size()).setOnes();
        } else if (t.decay) {
            // 1. Residual-stream writers (the two c_proj) start smaller, so the stream's variance does not grow
            //    with depth at initialisation.
            const double sd = 0.02 * (t.name.ends_with("c_proj.weight") ? projScale : 1.0);
            for (Eigen::Index i = 0; i < t.size(); ++i) p[t.offset + i] = static_cast<S>(sd * random.normal());
        }
    }
    return p;
}

template <class S>
Network<S>::Network(NetworkConfig config) : m_config(config), m_layout(makeLayout(config))
{
    assert(config.validate().ok());
}

template <class S>
void Network<S>::resize(int B, int T)
{
    if (B == m_B && T == m_T) return;
    m_B = B;
    m_T = T;
    const Eigen::Index N = Eigen::Index(B) * T, D = m_config.dModel, F = m_config.dFF, V = m_config.vocab;
    const int H = m_config.heads;
    m_inputs.resize(static_cast<std::size_t>(N));
    m_targets.resize(static_cast<std::size_t>(N));
    m_cache.resize(static_cast<std::size_t>(m_config.layers));
    for (LayerCache& c : m_cache) {
        for (Mat<S>* m : {&c.xIn, &c.ln1Hat, &c.ln1Out, &c.attn, &c.xMid, &c.ln2Hat, &c.ln2Out}) m->resize(N, D);
        c.qkv.resize(N, 3 * D);
        c.hPre.resize(N, F);
        c.hAct.resize(N, F);
        c.ln1Rstd.resize(N);
        c.ln2Rstd.resize(N);
        c.probs.assign(static_cast<std::size_t>(B * H), Mat<S>(T, T));
    }
    for (Mat<S>* m : {&m_x, &m_xOut, &m_lnfHat, &m_lnfOut, &m_dx, &m_dTmp, &m_dNorm, &m_dAttn}) m->resize(N, D);
    m_lnfRstd.resize(N);
    m_probsT.resize(V, N);
    m_dHidden.resize(N, F);
    m_dHiddenAct.resize(N, F);
    m_dQkv.resize(N, 3 * D);
    m_scratchTT.resize(T, T);
}

template <class S>
S Network<S>::run(const Vec<S>& params, const int* tokens, int B, int T, S lossWeight, Vec<S>* gradient)
{
    assert(T <= m_config.context);
    resize(B, T);
    const Layout& lay = m_layout;
    const Eigen::Index N = Eigen::Index(B) * T, D = m_config.dModel;
    const int H = m_config.heads;
    const Eigen::Index Dh = D / H;
    const S scale = S(1) / std::sqrt(S(Dh));
    const S eps = static_cast<S>(m_config.layerNormEps);
    auto M = [&](int i) { return matrixOf(params, lay.tensors[static_cast<std::size_t>(i)]); };
    auto R = [&](int i) { return rowOf(params, lay.tensors[static_cast<std::size_t>(i)]); };

    // 1. Inputs are each row's first T ids, targets the T ids after them.
    for (int b = 0; b < B; ++b)
        for (int t = 0; t < T; ++t) {
            m_inputs[static_cast<std::size_t>(b * T + t)] = tokens[b * (T + 1) + t];
            m_targets[static_cast<std::size_t>(b * T + t)] = tokens[b * (T + 1) + t + 1];
        }

    // 2. Embed: token row plus the learned position row.
    const Eigen::Map<const Mat<S>> wte = M(lay.tokenEmbedding), wpe = M(lay.positionEmbedding);
    for (Eigen::Index n = 0; n < N; ++n) m_x.row(n) = wte.row(m_inputs[static_cast<std::size_t>(n)]) + wpe.row(n % T);

    // 3. Blocks: x += attn(ln1(x)); x += mlp(ln2(x)).
    for (int l = 0; l < m_config.layers; ++l) {
        const LayerSlots& s = lay.layers[static_cast<std::size_t>(l)];
        LayerCache& c = m_cache[static_cast<std::size_t>(l)];
        c.xIn = m_x;
        layerNormForward<S>(c.xIn, R(s.ln1Gain), R(s.ln1Bias), eps, c.ln1Hat, c.ln1Rstd, c.ln1Out);
        linearForward<S>(c.ln1Out, M(s.wqkv), R(s.bqkv), c.qkv);  // (N, 3D): Q | K | V
        for (int b = 0; b < B; ++b)
            for (int h = 0; h < H; ++h)
                attentionForward<S>(c.qkv.block(b * T, h * Dh, T, Dh), c.qkv.block(b * T, D + h * Dh, T, Dh),
                                    c.qkv.block(b * T, 2 * D + h * Dh, T, Dh), scale,
                                    c.probs[static_cast<std::size_t>(b * H + h)], c.attn.block(b * T, h * Dh, T, Dh));
        linearForward<S>(c.attn, M(s.wo), R(s.bo), m_dTmp);
        c.xMid = c.xIn + m_dTmp;
        layerNormForward<S>(c.xMid, R(s.ln2Gain), R(s.ln2Bias), eps, c.ln2Hat, c.ln2Rstd, c.ln2Out);
        linearForward<S>(c.ln2Out, M(s.w1), R(s.b1), c.hPre);
        geluForward<S>(c.hPre, c.hAct);
        linearForward<S>(c.hAct, M(s.w2), R(s.b2), m_dTmp);
        m_x = c.xMid + m_dTmp;
    }

    // 4. Final layer norm, tied unembedding, cross-entropy against the next ids.
    m_xOut = m_x;
    layerNormForward<S>(m_xOut, R(lay.lnfGain), R(lay.lnfBias), eps, m_lnfHat, m_lnfRstd, m_lnfOut);
    const S loss = crossEntropyForward<S>(m_lnfOut, wte, m_targets.data(), m_probsT);
    if (!gradient) return loss;

    // 5. Backward, in the reverse order; m_dx carries the gradient of the residual stream.
    Vec<S>& g = *gradient;
    auto dM = [&](int i) { return matrixOf(g, lay.tensors[static_cast<std::size_t>(i)]); };
    auto dR = [&](int i) { return rowOf(g, lay.tensors[static_cast<std::size_t>(i)]); };
    crossEntropyBackward<S>(m_lnfOut, wte, m_targets.data(), lossWeight, m_probsT, dM(lay.tokenEmbedding), m_dNorm);
    layerNormBackward<S>(m_dNorm, m_lnfHat, m_lnfRstd, R(lay.lnfGain), m_dx, dR(lay.lnfGain), dR(lay.lnfBias));

    for (int l = m_config.layers - 1; l >= 0; --l) {
        const LayerSlots& s = lay.layers[static_cast<std::size_t>(l)];
        LayerCache& c = m_cache[static_cast<std::size_t>(l)];
        // The MLP sublayer: its output was added to xMid, so m_dx is also its output's gradient.
        linearBackward<S>(c.hAct, M(s.w2), m_dx, dM(s.w2), dR(s.b2), m_dHiddenAct);
        geluBackward<S>(c.hPre, m_dHiddenAct, m_dHidden);
        linearBackward<S>(c.ln2Out, M(s.w1), m_dHidden, dM(s.w1), dR(s.b1), m_dNorm);
        layerNormBackward<S>(m_dNorm, c.ln2Hat, c.ln2Rstd, R(s.ln2Gain), m_dTmp, dR(s.ln2Gain), dR(s.ln2Bias));
        m_dx += m_dTmp;  // now the gradient of xMid
        // The attention sublayer, the same way.
        linearBackward<S>(c.attn, M(s.wo), m_dx, dM(s.wo), dR(s.bo), m_dAttn);
        for (int b = 0; b < B; ++b)
            for (int h = 0; h < H; ++h)
                attentionBackward<S>(c.qkv.block(b * T, h * Dh, T, Dh), c.qkv.block(b * T, D + h * Dh, T, Dh),
                                     c.qkv.block(b * T, 2 * D + h * Dh, T, Dh), c.probs[static_cast<std::size_t>(b * H + h)],
                                     scale, m_dAttn.block(b * T, h * Dh, T, Dh), m_scratchTT,
                                     m_dQkv.block(b * T, h * Dh, T, Dh), m_dQkv.block(b * T, D + h * Dh, T, Dh),
                                     m_dQkv.block(b * T, 2 * D + h * Dh, T, Dh));
        linearBackward<S>(c.ln1Out, M(s.wqkv), m_dQkv, dM(s.wqkv), dR(s.bqkv), m_dNorm);
        layerNormBackward<S>(m_dNorm, c.ln1Hat, c.ln1Rstd, R(s.ln1Gain), m_dTmp, dR(s.ln1Gain), dR(s.ln1Bias));
        m_dx += m_dTmp;  // the gradient of xIn
    }

    // 6. The embedding rows each token and position read get the residual stream's gradient.
    Eigen::Map<Mat<S>> dWte = dM(lay.tokenEmbedding), dWpe = dM(lay.positionEmbedding);
    for (Eigen::Index n = 0; n < N; ++n) {
        dWte.row(m_inputs[static_cast<std::size_t>(n)]) += m_dx.row(n);
        dWpe.row(n % T) += m_dx.row(n);
    }
    return loss;
}

template Vec<float> initialParameters<float>(const NetworkConfig&, const Layout&, unsigned long long);
template Vec<double> initialParameters<double>(const NetworkConfig&, const Layout&, unsigned long long);
template class Network<float>;
template class Network<double>;

} // namespace attnscope::train
