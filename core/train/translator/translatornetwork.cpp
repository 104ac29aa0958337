#include "core/train/translator/translatornetwork.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "core/model/randommodel.h"

namespace attnscope::train {

Status TranslatorConfig::validate() const
{
    auto bad = [](const char* what, int value, int lo, int hi) {
        if (value >= lo && value <= hi) return Status{};
        return Status::failure(std::string(what) + " is " + std::to_string(value) + "; it must be between " +
                               std::to_string(lo) + " and " + std::to_string(hi) + ".");
    };
    for (Status p : {bad("the number of encoder layers", encoderLayers, 1, 48),
                     bad("the number of decoder layers", decoderLayers, 1, 48), bad("the number of heads", heads, 1, 64),
                     bad("d_model", dModel, 1, 4096), bad("d_ff", dFF, 1, 16384),
                     bad("the vocabulary size", vocab, 2, 1 << 20), bad("the source context", sourceContext, 2, 8192),
                     bad("the target context", targetContext, 2, 8192)})
        if (!p.ok()) return p;
    if (dModel % heads != 0)
        return Status::failure("d_model (" + std::to_string(dModel) + ") is not divisible by the number of heads (" +
                               std::to_string(heads) + ").");
    return {};
}

TranslatorLayout makeTranslatorLayout(const TranslatorConfig& c)
{
    TranslatorLayout layout;
    auto add = [&layout](std::string name, Eigen::Index rows, Eigen::Index cols, bool decay) {
        layout.tensors.push_back({std::move(name), layout.total, rows, cols, decay});
        layout.total += rows * cols;
        return static_cast<int>(layout.tensors.size() - 1);
    };
    const Eigen::Index D = c.dModel, F = c.dFF;
    // Attention (pre-norm, fused Q | K | V, output) then the MLP (pre-norm, up, down): the two sublayers
    // both stacks share; the decoder's cross-attention sits between them.
    auto selfAndMlp = [&](const std::string& p, LayerSlots& s, const std::string& mlpNorm) {
        s.ln1Gain = add(p + "ln_1.weight", 1, D, false);
        s.ln1Bias = add(p + "ln_1.bias", 1, D, false);
        s.wqkv = add(p + "self_attn.qkv.weight", D, 3 * D, true);
        s.bqkv = add(p + "self_attn.qkv.bias", 1, 3 * D, false);
        s.wo = add(p + "self_attn.out.weight", D, D, true);
        s.bo = add(p + "self_attn.out.bias", 1, D, false);
        s.ln2Gain = add(p + mlpNorm + ".weight", 1, D, false);
        s.ln2Bias = add(p + mlpNorm + ".bias", 1, D, false);
        s.w1 = add(p + "mlp.fc.weight", D, F, true);
        s.b1 = add(p + "mlp.fc.bias", 1, F, false);
        s.w2 = add(p + "mlp.proj.weight", F, D, true);
        s.b2 = add(p + "mlp.proj.bias", 1, D, false);
    };
    layout.shared = add("shared.weight", c.vocab, D, true);
    layout.encoderPositions = add("encoder.positions.weight", c.sourceContext, D, true);
    layout.decoderPositions = add("decoder.positions.weight", c.targetContext, D, true);
    for (int l = 0; l < c.encoderLayers; ++l) {
        LayerSlots s{};
        selfAndMlp("encoder.layers." + std::to_string(l) + ".", s, "ln_2");
        layout.encoder.push_back(s);
    }
    layout.encoderNormGain = add("encoder.ln_f.weight", 1, D, false);
    layout.encoderNormBias = add("encoder.ln_f.bias", 1, D, false);
    for (int l = 0; l < c.decoderLayers; ++l) {
        const std::string p = "decoder.layers." + std::to_string(l) + ".";
        DecoderLayerSlots s{};
        selfAndMlp(p, s.selfAndMlp, "ln_3");
        s.lnxGain = add(p + "ln_2.weight", 1, D, false);
        s.lnxBias = add(p + "ln_2.bias", 1, D, false);
        s.wq = add(p + "cross_attn.q.weight", D, D, true);
        s.bq = add(p + "cross_attn.q.bias", 1, D, false);
        s.wkv = add(p + "cross_attn.kv.weight", D, 2 * D, true);
        s.bkv = add(p + "cross_attn.kv.bias", 1, 2 * D, false);
        s.wxo = add(p + "cross_attn.out.weight", D, D, true);
        s.bxo = add(p + "cross_attn.out.bias", 1, D, false);
        layout.decoder.push_back(s);
    }
    layout.decoderNormGain = add("decoder.ln_f.weight", 1, D, false);
    layout.decoderNormBias = add("decoder.ln_f.bias", 1, D, false);
    return layout;
}

template <class S>
Vec<S> initialTranslatorParameters(const TranslatorConfig& c, const TranslatorLayout& layout, unsigned long long seed)
{
    SeededRandom random(seed);
    Vec<S> p(layout.total);
    p.setZero();
    // Each stack's residual stream gets two (encoder) or three (decoder) writes per block.
    const double encoderScale = 1.0 / std::sqrt(2.0 * c.encoderLayers);
    const double decoderScale = 1.0 / std::sqrt(3.0 * c.decoderLayers);
    for (const TensorSlot& t : layout.tensors) {
        const bool gain = t.name.find("ln_") != std::string::npos && t.name.ends_with(".weight");
        if (gain) {
            p.segment(t.offset, t.size()).setOnes();
        } else if (t.decay) {
            const bool writer = t.name.ends_with("out.weight") || t.name.ends_with("mlp.proj.weight");
            const double stack = t.name.starts_with("encoder.") ? encoderScale : decoderScale;
            const double sd = 0.02 * (writer ? stack : 1.0);
            for (Eigen::Index i = 0; i < t.size(); ++i) p[t.offset + i] = static_cast<S>(sd * random.normal());
        }
    }
    return p;
}

void PairBatch::clear()
{
    source.clear();
    input.clear();
    target.clear();
    sourceStart.assign(1, 0);
    targetStart.assign(1, 0);
}

void PairBatch::add(std::span<const int> sourceIds, std::span<const int> inputIds, std::span<const int> targetIds)
{
    assert(inputIds.size() == targetIds.size());
    source.insert(source.end(), sourceIds.begin(), sourceIds.end());
    input.insert(input.end(), inputIds.begin(), inputIds.end());
    target.insert(target.end(), targetIds.begin(), targetIds.end());
    sourceStart.push_back(static_cast<int>(source.size()));
    targetStart.push_back(static_cast<int>(input.size()));
}

template <class S>
TranslatorNetwork<S>::TranslatorNetwork(TranslatorConfig config) : m_config(config), m_layout(makeTranslatorLayout(config))
{
    assert(config.validate().ok());
}

template <class S>
void TranslatorNetwork<S>::reserve(int B, Eigen::Index ns, Eigen::Index nt, Eigen::Index maxS, Eigen::Index maxT)
{
    const Eigen::Index D = m_config.dModel, F = m_config.dFF, V = m_config.vocab, n = std::max(ns, nt);
    const Eigen::Index tt = std::max(maxS, maxT);
    const std::size_t BH = static_cast<std::size_t>(B) * static_cast<std::size_t>(m_config.heads);
    // Grow only: a smaller batch uses the top rows of what is there.
    auto grow = [](Mat<S>& m, Eigen::Index rows, Eigen::Index cols) {
        if (m.rows() < rows || m.cols() != cols) m.resize(std::max(rows, m.cols() == cols ? m.rows() : 0), cols);
    };
    auto growVec = [](Vec<S>& v, Eigen::Index rows) {
        if (v.size() < rows) v.resize(rows);
    };
    auto growSublayer = [&](Sublayer& s, Eigen::Index rows, Eigen::Index projCols) {
        for (Mat<S>* m : {&s.out, &s.lnHat, &s.lnOut, &s.attn}) grow(*m, rows, D);
        grow(s.proj, rows, projCols);
        growVec(s.rstd, rows);
        if (s.probs.size() < BH) s.probs.resize(BH);
        for (Mat<S>& p : s.probs) grow(p, tt, tt);
    };
    auto growMlp = [&](Mlp& m, Eigen::Index rows) {
        for (Mat<S>* x : {&m.out, &m.lnHat, &m.lnOut}) grow(*x, rows, D);
        grow(m.hPre, rows, F);
        grow(m.hAct, rows, F);
        growVec(m.rstd, rows);
    };
    m_encoder.resize(static_cast<std::size_t>(m_config.encoderLayers));
    m_decoder.resize(static_cast<std::size_t>(m_config.decoderLayers));
    for (EncoderCache& c : m_encoder) {
        growSublayer(c.self, ns, 3 * D);
        growMlp(c.mlp, ns);
    }
    for (DecoderCache& c : m_decoder) {
        growSublayer(c.self, nt, 3 * D);
        growSublayer(c.cross, nt, D);
        grow(c.kv, ns, 2 * D);
        growMlp(c.mlp, nt);
    }
    for (Mat<S>* m : {&m_x, &m_encOut, &m_encHat, &m_dEnc}) grow(*m, ns, D);
    for (Mat<S>* m : {&m_y, &m_decOut, &m_decHat}) grow(*m, nt, D);
    for (Mat<S>* m : {&m_dx, &m_dxTmp, &m_dxNorm, &m_dAttn}) grow(*m, n, D);
    for (Mat<S>* m : {&m_dy, &m_dyTmp, &m_dyNorm}) grow(*m, nt, D);
    growVec(m_encRstd, ns);
    growVec(m_decRstd, nt);
    grow(m_probsT, V, nt);
    grow(m_dHidden, n, F);
    grow(m_dHiddenAct, n, F);
    grow(m_dProj, n, 3 * D);
    grow(m_dKv, ns, 2 * D);
    grow(m_scratch, tt, tt);
}

template <class S>
Eigen::Ref<const Mat<S>> TranslatorNetwork<S>::crossAttention(int pair, int layer, int head) const
{
    const std::size_t b = static_cast<std::size_t>(pair);
    return m_decoder[static_cast<std::size_t>(layer)]
        .cross.probs[b * static_cast<std::size_t>(m_config.heads) + static_cast<std::size_t>(head)]
        .topLeftCorner(m_targetLength[b], m_sourceLength[b]);
}

template <class S>
S TranslatorNetwork<S>::run(const Vec<S>& params, const PairBatch& batch, int first, int B, S lossWeight, Vec<S>* gradient)
{
    assert(first >= 0 && B >= 1 && first + B <= batch.pairs());
    const TranslatorLayout& lay = m_layout;
    const int H = m_config.heads;
    const Eigen::Index D = m_config.dModel, Dh = D / H;
    const S scale = S(1) / std::sqrt(S(Dh));
    const S eps = static_cast<S>(m_config.layerNormEps);
    auto M = [&](int i) { return matrixOf(params, lay.tensors[static_cast<std::size_t>(i)]); };
    auto R = [&](int i) { return rowOf(params, lay.tensors[static_cast<std::size_t>(i)]); };

    // 1. Where each pair's rows are in the stacked source and target matrices.
    const std::size_t f = static_cast<std::size_t>(first);
    const int s0 = batch.sourceStart[f], t0 = batch.targetStart[f];
    const Eigen::Index Ns = batch.sourceStart[f + B] - s0, Nt = batch.targetStart[f + B] - t0;
    m_sourceLength.resize(static_cast<std::size_t>(B));
    m_targetLength.resize(static_cast<std::size_t>(B));
    m_sourceOffset.resize(static_cast<std::size_t>(B));
    m_targetOffset.resize(static_cast<std::size_t>(B));
    Eigen::Index maxS = 0, maxT = 0;
    for (std::size_t b = 0; b < static_cast<std::size_t>(B); ++b) {
        m_sourceOffset[b] = batch.sourceStart[f + b] - s0;
        m_targetOffset[b] = batch.targetStart[f + b] - t0;
        m_sourceLength[b] = batch.sourceStart[f + b + 1] - batch.sourceStart[f + b];
        m_targetLength[b] = batch.targetStart[f + b + 1] - batch.targetStart[f + b];
        assert(m_sourceLength[b] >= 1 && m_sourceLength[b] <= m_config.sourceContext);
        assert(m_targetLength[b] >= 1 && m_targetLength[b] <= m_config.targetContext);
        maxS = std::max<Eigen::Index>(maxS, m_sourceLength[b]);
        maxT = std::max<Eigen::Index>(maxT, m_targetLength[b]);
    }
    reserve(B, Ns, Nt, maxS, maxT);
    const int* sourceIds = batch.source.data() + s0;
    const int* inputIds = batch.input.data() + t0;
    const int* targetIds = batch.target.data() + t0;

    // 2. Embed: the shared token row plus the stack's own position row.
    const Eigen::Map<const Mat<S>> shared = M(lay.shared), encPos = M(lay.encoderPositions), decPos = M(lay.decoderPositions);
    for (std::size_t b = 0; b < static_cast<std::size_t>(B); ++b) {
        for (int i = 0; i < m_sourceLength[b]; ++i) {
            const Eigen::Index n = m_sourceOffset[b] + i;
            m_x.row(n) = shared.row(sourceIds[n]) + encPos.row(i);
        }
        for (int i = 0; i < m_targetLength[b]; ++i) {
            const Eigen::Index n = m_targetOffset[b] + i;
            m_y.row(n) = shared.row(inputIds[n]) + decPos.row(i);
        }
    }

    // Pair b's rows of a stacked matrix, for the source (S, cols) or the target (T, cols).
    auto src = [&](auto& m, std::size_t b, Eigen::Index col, Eigen::Index cols) {
        return m.block(m_sourceOffset[b], col, m_sourceLength[b], cols);
    };
    auto tgt = [&](auto& m, std::size_t b, Eigen::Index col, Eigen::Index cols) {
        return m.block(m_targetOffset[b], col, m_targetLength[b], cols);
    };
    const auto pairs = static_cast<std::size_t>(B);
    auto probsOf = [&](Sublayer& s, std::size_t b, int h) -> Mat<S>& { return s.probs[b * std::size_t(H) + std::size_t(h)]; };

    // Self-attention sublayer over x's first n rows: x += attn(ln(x)) W_o + b_o, each pair attending within
    // itself (bidirectional in the encoder, causal in the decoder).
    auto selfForward = [&](Sublayer& c, Mat<S>& x, Eigen::Index n, const LayerSlots& s, bool decoder) {
        layerNormForward<S>(x.topRows(n), R(s.ln1Gain), R(s.ln1Bias), eps, c.lnHat.topRows(n), c.rstd.head(n), c.lnOut.topRows(n));
        linearForward<S>(c.lnOut.topRows(n), M(s.wqkv), R(s.bqkv), c.proj.topRows(n));  // (n, 3D): Q | K | V
        for (std::size_t b = 0; b < pairs; ++b) {
            const Eigen::Index len = decoder ? m_targetLength[b] : m_sourceLength[b];
            auto rows = [&](Mat<S>& m, Eigen::Index col) { return decoder ? tgt(m, b, col, Dh) : src(m, b, col, Dh); };
            for (int h = 0; h < H; ++h)
                attentionForward<S>(rows(c.proj, h * Dh), rows(c.proj, D + h * Dh), rows(c.proj, 2 * D + h * Dh), scale,
                                    probsOf(c, b, h).topLeftCorner(len, len), rows(c.attn, h * Dh), decoder);
        }
        linearForward<S>(c.attn.topRows(n), M(s.wo), R(s.bo), c.out.topRows(n));
        x.topRows(n) += c.out.topRows(n);
    };
    auto mlpForward = [&](Mlp& c, Mat<S>& x, Eigen::Index n, const LayerSlots& s) {
        layerNormForward<S>(x.topRows(n), R(s.ln2Gain), R(s.ln2Bias), eps, c.lnHat.topRows(n), c.rstd.head(n), c.lnOut.topRows(n));
        linearForward<S>(c.lnOut.topRows(n), M(s.w1), R(s.b1), c.hPre.topRows(n));
        geluForward<S>(c.hPre.topRows(n), c.hAct.topRows(n));
        linearForward<S>(c.hAct.topRows(n), M(s.w2), R(s.b2), c.out.topRows(n));
        x.topRows(n) += c.out.topRows(n);
    };

    // 3. The encoder, then its final norm: E, what cross-attention reads.
    for (std::size_t l = 0; l < m_encoder.size(); ++l) {
        selfForward(m_encoder[l].self, m_x, Ns, lay.encoder[l], false);
        mlpForward(m_encoder[l].mlp, m_x, Ns, lay.encoder[l]);
    }
    layerNormForward<S>(m_x.topRows(Ns), R(lay.encoderNormGain), R(lay.encoderNormBias), eps, m_encHat.topRows(Ns),
                        m_encRstd.head(Ns), m_encOut.topRows(Ns));

    // 4. The decoder: causal self-attention, cross-attention (queries from the target, keys and values from E,
    //    every target token of a pair seeing every source token of the same pair), the MLP.
    for (std::size_t l = 0; l < m_decoder.size(); ++l) {
        const DecoderLayerSlots& s = lay.decoder[l];
        DecoderCache& c = m_decoder[l];
        selfForward(c.self, m_y, Nt, s.selfAndMlp, true);
        Sublayer& x = c.cross;
        layerNormForward<S>(m_y.topRows(Nt), R(s.lnxGain), R(s.lnxBias), eps, x.lnHat.topRows(Nt), x.rstd.head(Nt),
                            x.lnOut.topRows(Nt));
        linearForward<S>(x.lnOut.topRows(Nt), M(s.wq), R(s.bq), x.proj.topRows(Nt));       // (Nt, D)
        linearForward<S>(m_encOut.topRows(Ns), M(s.wkv), R(s.bkv), c.kv.topRows(Ns));     // (Ns, 2D): K | V
        for (std::size_t b = 0; b < pairs; ++b)
            for (int h = 0; h < H; ++h)
                attentionForward<S>(tgt(x.proj, b, h * Dh, Dh), src(c.kv, b, h * Dh, Dh), src(c.kv, b, D + h * Dh, Dh), scale,
                                    probsOf(x, b, h).topLeftCorner(m_targetLength[b], m_sourceLength[b]),
                                    tgt(x.attn, b, h * Dh, Dh), false);
        linearForward<S>(x.attn.topRows(Nt), M(s.wxo), R(s.bxo), x.out.topRows(Nt));
        m_y.topRows(Nt) += x.out.topRows(Nt);
        mlpForward(c.mlp, m_y, Nt, s.selfAndMlp);
    }

    // 5. Final norm, tied unembedding, cross-entropy against the next target ids.
    layerNormForward<S>(m_y.topRows(Nt), R(lay.decoderNormGain), R(lay.decoderNormBias), eps, m_decHat.topRows(Nt),
                        m_decRstd.head(Nt), m_decOut.topRows(Nt));
    const S loss = crossEntropyForward<S>(m_decOut.topRows(Nt), shared, targetIds, m_probsT.leftCols(Nt));
    if (!gradient) return loss;

    // 6. Backward, in the reverse order. m_dy carries the gradient of the decoder's residual stream, m_dEnc
    //    collects E's gradient from every decoder layer's keys and values, then m_dx carries the encoder's.
    Vec<S>& g = *gradient;
    auto dM = [&](int i) { return matrixOf(g, lay.tensors[static_cast<std::size_t>(i)]); };
    auto dR = [&](int i) { return rowOf(g, lay.tensors[static_cast<std::size_t>(i)]); };
    crossEntropyBackward<S>(m_decOut.topRows(Nt), shared, targetIds, lossWeight, m_probsT.leftCols(Nt), dM(lay.shared),
                            m_dyNorm.topRows(Nt));
    layerNormBackward<S>(m_dyNorm.topRows(Nt), m_decHat.topRows(Nt), m_decRstd.head(Nt), R(lay.decoderNormGain),
                         m_dy.topRows(Nt), dR(lay.decoderNormGain), dR(lay.decoderNormBias));

    // The MLP's output was added to the stream, so the stream's gradient is also its output's.
    auto mlpBackward = [&](Mlp& c, Mat<S>& dx, Mat<S>& dTmp, Eigen::Index n, const LayerSlots& s) {
        linearBackward<S>(c.hAct.topRows(n), M(s.w2), dx.topRows(n), dM(s.w2), dR(s.b2), m_dHiddenAct.topRows(n));
        geluBackward<S>(c.hPre.topRows(n), m_dHiddenAct.topRows(n), m_dHidden.topRows(n));
        linearBackward<S>(c.lnOut.topRows(n), M(s.w1), m_dHidden.topRows(n), dM(s.w1), dR(s.b1), m_dxNorm.topRows(n));
        layerNormBackward<S>(m_dxNorm.topRows(n), c.lnHat.topRows(n), c.rstd.head(n), R(s.ln2Gain), dTmp.topRows(n),
                             dR(s.ln2Gain), dR(s.ln2Bias));
        dx.topRows(n) += dTmp.topRows(n);
    };
    auto selfBackward = [&](Sublayer& c, Mat<S>& dx, Mat<S>& dTmp, Eigen::Index n, const LayerSlots& s, bool decoder) {
        linearBackward<S>(c.attn.topRows(n), M(s.wo), dx.topRows(n), dM(s.wo), dR(s.bo), m_dAttn.topRows(n));
        for (std::size_t b = 0; b < pairs; ++b) {
            const Eigen::Index len = decoder ? m_targetLength[b] : m_sourceLength[b];
            auto rows = [&](Mat<S>& m, Eigen::Index col) { return decoder ? tgt(m, b, col, Dh) : src(m, b, col, Dh); };
            for (int h = 0; h < H; ++h)
                attentionBackward<S>(rows(c.proj, h * Dh), rows(c.proj, D + h * Dh), rows(c.proj, 2 * D + h * Dh),
                                     probsOf(c, b, h).topLeftCorner(len, len), scale, rows(m_dAttn, h * Dh),
                                     m_scratch.topLeftCorner(len, len), rows(m_dProj, h * Dh), rows(m_dProj, D + h * Dh),
                                     rows(m_dProj, 2 * D + h * Dh));
        }
        linearBackward<S>(c.lnOut.topRows(n), M(s.wqkv), m_dProj.topRows(n), dM(s.wqkv), dR(s.bqkv), m_dxNorm.topRows(n));
        layerNormBackward<S>(m_dxNorm.topRows(n), c.lnHat.topRows(n), c.rstd.head(n), R(s.ln1Gain), dTmp.topRows(n),
                             dR(s.ln1Gain), dR(s.ln1Bias));
        dx.topRows(n) += dTmp.topRows(n);
    };

    m_dEnc.topRows(Ns).setZero();
    for (std::size_t l = m_decoder.size(); l-- > 0;) {
        const DecoderLayerSlots& s = lay.decoder[l];
        DecoderCache& c = m_decoder[l];
        mlpBackward(c.mlp, m_dy, m_dyTmp, Nt, s.selfAndMlp);
        // Cross-attention: queries back into the target stream, keys and values back into E.
        Sublayer& x = c.cross;
        linearBackward<S>(x.attn.topRows(Nt), M(s.wxo), m_dy.topRows(Nt), dM(s.wxo), dR(s.bxo), m_dAttn.topRows(Nt));
        for (std::size_t b = 0; b < pairs; ++b)
            for (int h = 0; h < H; ++h)
                attentionBackward<S>(tgt(x.proj, b, h * Dh, Dh), src(c.kv, b, h * Dh, Dh), src(c.kv, b, D + h * Dh, Dh),
                                     probsOf(x, b, h).topLeftCorner(m_targetLength[b], m_sourceLength[b]), scale,
                                     tgt(m_dAttn, b, h * Dh, Dh),
                                     m_scratch.topLeftCorner(m_targetLength[b], m_sourceLength[b]),
                                     tgt(m_dProj, b, h * Dh, Dh), src(m_dKv, b, h * Dh, Dh), src(m_dKv, b, D + h * Dh, Dh));
        linearBackward<S>(x.lnOut.topRows(Nt), M(s.wq), m_dProj.topLeftCorner(Nt, D), dM(s.wq), dR(s.bq), m_dyNorm.topRows(Nt));
        layerNormBackward<S>(m_dyNorm.topRows(Nt), x.lnHat.topRows(Nt), x.rstd.head(Nt), R(s.lnxGain), m_dyTmp.topRows(Nt),
                             dR(s.lnxGain), dR(s.lnxBias));
        m_dy.topRows(Nt) += m_dyTmp.topRows(Nt);
        linearBackward<S>(m_encOut.topRows(Ns), M(s.wkv), m_dKv.topRows(Ns), dM(s.wkv), dR(s.bkv), m_dxTmp.topRows(Ns));
        m_dEnc.topRows(Ns) += m_dxTmp.topRows(Ns);
        selfBackward(c.self, m_dy, m_dyTmp, Nt, s.selfAndMlp, true);
    }

    layerNormBackward<S>(m_dEnc.topRows(Ns), m_encHat.topRows(Ns), m_encRstd.head(Ns), R(lay.encoderNormGain),
                         m_dx.topRows(Ns), dR(lay.encoderNormGain), dR(lay.encoderNormBias));
    for (std::size_t l = m_encoder.size(); l-- > 0;) {
        mlpBackward(m_encoder[l].mlp, m_dx, m_dxTmp, Ns, lay.encoder[l]);
        selfBackward(m_encoder[l].self, m_dx, m_dxTmp, Ns, lay.encoder[l], false);
    }

    // 7. Every embedding row a token and a position read gets its stream's gradient.
    Eigen::Map<Mat<S>> dShared = dM(lay.shared), dEncPos = dM(lay.encoderPositions), dDecPos = dM(lay.decoderPositions);
    for (std::size_t b = 0; b < pairs; ++b) {
        for (int i = 0; i < m_sourceLength[b]; ++i) {
            const Eigen::Index n = m_sourceOffset[b] + i;
            dShared.row(sourceIds[n]) += m_dx.row(n);
            dEncPos.row(i) += m_dx.row(n);
        }
        for (int i = 0; i < m_targetLength[b]; ++i) {
            const Eigen::Index n = m_targetOffset[b] + i;
            dShared.row(inputIds[n]) += m_dy.row(n);
            dDecPos.row(i) += m_dy.row(n);
        }
    }
    return loss;
}

template Vec<float> initialTranslatorParameters<float>(const TranslatorConfig&, const TranslatorLayout&, unsigned long long);
template Vec<double> initialTranslatorParameters<double>(const TranslatorConfig&, const TranslatorLayout&, unsigned long long);
template class TranslatorNetwork<float>;
template class TranslatorNetwork<double>;

} // namespace attnscope::train
