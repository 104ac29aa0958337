// Where each family keeps a head's projections, the norm whose gain folds into them, and its token embedding
// and unembedding: circuits.h's factors for every stack AttnScope opens.
#include "core/research/circuitweights.h"

#include <string>

#include "core/model/encoderdecoder.h"
#include "core/model/storedweights.h"

namespace attnscope {

const char* toString(CircuitStack stack)
{
    switch (stack) {
    case CircuitStack::Self: return "self";
    case CircuitStack::Encoder: return "encoder";
    case CircuitStack::Decoder: return "decoder";
    case CircuitStack::Cross: return "cross";
    }
    return "self";
}

namespace {

RowVector gainOrOnes(const RowVector& gain, int D) { return gain.size() == D ? gain : RowVector::Ones(D); }

} // namespace

const LayerWeights& CircuitWeights::encoderLayer(int l)
{
    const ModelWeights& w = m_model.weights;
    if (!w.stored) return w.layers[std::size_t(l)];
    if (m_loaded != l) {
        w.stored->loadLayer(l, m_scratch);
        m_loaded = l;
    }
    return m_scratch;
}

std::vector<CircuitStack> CircuitWeights::stacks() const
{
    if (!m_model.isEncoderDecoder()) return {CircuitStack::Self};
    return {CircuitStack::Encoder, CircuitStack::Decoder, CircuitStack::Cross};
}

int CircuitWeights::layers(CircuitStack stack) const
{
    if (stack == CircuitStack::Self || stack == CircuitStack::Encoder) return m_model.config.layers;
    return m_model.decoder ? m_model.decoder->layers : 0;
}

bool CircuitWeights::postNorm(CircuitStack stack) const
{
    if (stack == CircuitStack::Self || stack == CircuitStack::Encoder) return m_model.config.norm == NormPlacement::PostLN;
    return m_model.decoder->norm == NormPlacement::PostLN;
}

int CircuitWeights::heads(CircuitStack stack) const
{
    const bool decoder = stack == CircuitStack::Decoder || stack == CircuitStack::Cross;
    return decoder && m_model.decoder ? m_model.decoder->heads : m_model.config.heads;
}

RowVector CircuitWeights::encoderOutputGain()
{
    const int D = m_model.config.dModel, L = m_model.config.layers;
    if (m_model.weights.lnfGain.size() == D) return m_model.weights.lnfGain;
    if (m_model.config.norm == NormPlacement::PostLN && L > 0) return gainOrOnes(encoderLayer(L - 1).ln2Gain, D);
    return RowVector::Ones(D);
}

std::vector<HeadFactors> CircuitWeights::layerFactors(CircuitStack stack, int l)
{
    const ModelConfig& c = m_model.config;
    const bool decoder = (stack == CircuitStack::Decoder || stack == CircuitStack::Cross) && m_model.decoder;
    const int D = c.dModel, H = heads(stack), Dh = decoder ? m_model.decoder->dHead : c.dHead;
    const Matrix *wq = nullptr, *wk = nullptr, *wv = nullptr, *wo = nullptr;
    RowVector gainQ, gainKV;
    if (stack == CircuitStack::Self || stack == CircuitStack::Encoder) {
        // Pre-norm: the block's first norm. Post-norm: the norm that made the block's input.
        if (c.norm == NormPlacement::PreLN) gainQ = gainOrOnes(encoderLayer(l).ln1Gain, D);
        else if (l == 0) gainQ = gainOrOnes(m_model.weights.embLnGain, D);
        else gainQ = gainOrOnes(encoderLayer(l - 1).ln2Gain, D);
        gainKV = gainQ;
        const LayerWeights& lw = encoderLayer(l);
        wq = &lw.wq, wk = &lw.wk, wv = &lw.wv, wo = &lw.wo;
    } else {
        const DecoderStack& dec = *m_model.decoder;
        const DecoderLayer& layer = dec.stack[std::size_t(l)];
        const bool pre = dec.norm == NormPlacement::PreLN;
        if (stack == CircuitStack::Decoder) {
            if (pre) gainQ = gainOrOnes(layer.self.normGain, D);
            else if (l == 0) gainQ = gainOrOnes(dec.embNormGain, D);
            else gainQ = gainOrOnes(dec.stack[std::size_t(l - 1)].ffNormGain, D);
            gainKV = gainQ;
            wq = &layer.self.wq, wk = &layer.self.wk, wv = &layer.self.wv, wo = &layer.self.wo;
        } else {
            // Cross-attention: queries from the decoder's stream (after the self-attention's norm in post-norm
            // stacks, through the sublayer's own in pre-norm ones), keys and values from the encoder's output.
            gainQ = gainOrOnes(pre ? layer.cross.normGain : layer.self.normGain, D);
            gainKV = encoderOutputGain();
            wq = &layer.cross.wq, wk = &layer.cross.wk, wv = &layer.cross.wv, wo = &layer.cross.wo;
        }
    }
    const bool grouped = stack == CircuitStack::Self || stack == CircuitStack::Encoder;
    std::vector<HeadFactors> out(static_cast<std::size_t>(H));
    for (int h = 0; h < H; ++h) {
        const int kv = grouped ? c.kvHeadOf(h) : h;
        HeadFactors& f = out[std::size_t(h)];
        f.wq = gainQ.transpose().asDiagonal() * wq->middleCols(h * Dh, Dh);
        f.wk = gainKV.transpose().asDiagonal() * wk->middleCols(kv * Dh, Dh);
        f.wv = gainKV.transpose().asDiagonal() * wv->middleCols(kv * Dh, Dh);
        f.wo = wo->middleRows(h * Dh, Dh);
    }
    return out;
}

bool CircuitWeights::hasUnembedding(CircuitStack stack) const
{
    switch (stack) {
    case CircuitStack::Self:
        // A decoder's logits are the unembedding of its final norm's output; a post-norm encoder's masked-LM
        // head puts a dense layer and an activation first.
        return m_model.config.norm == NormPlacement::PreLN && m_model.weights.lnfGain.size() == m_model.config.dModel;
    case CircuitStack::Encoder: return false;
    case CircuitStack::Decoder:
    case CircuitStack::Cross: return m_model.decoder && m_model.decoder->unembedding.size() > 0;
    }
    return false;
}

Eigen::MatrixXd CircuitWeights::unembedEmbed(CircuitStack stack)
{
    const int D = m_model.config.dModel;
    const Eigen::Index V = m_model.config.vocabSize;
    Matrix sum = Matrix::Zero(D, D);
    RowVector gain;
    const ModelWeights& w = m_model.weights;
    if (stack == CircuitStack::Self) {
        gain = w.lnfGain;
        if (w.stored) {
            // (D, n) blocks of Eᵀ and Uᵀ, converted a block of the vocabulary at a time.
            const StoredWeights& s = *w.stored;
            const StoredTensor& u = s.unembedding.present() ? s.unembedding : s.embedding;
            constexpr Eigen::Index kRows = StoredWeights::kChunk;
            Matrix e(D, kRows), un(D, kRows);
            for (Eigen::Index first = 0; first < V; first += kRows) {
                const Eigen::Index n = std::min(kRows, V - first);
                s.embedding.rowsToFloats(first, n, e.data());
                u.rowsToFloats(first, n, un.data());
                sum.noalias() += un.leftCols(n) * e.leftCols(n).transpose();
            }
        } else {
            sum.noalias() = w.tokenEmbedding.transpose() * w.tokenEmbedding;  // tied
        }
    } else {
        const DecoderStack& dec = *m_model.decoder;
        gain = dec.finalNormGain.size() == D ? dec.finalNormGain
                                             : (dec.stack.empty() ? RowVector::Ones(D) : gainOrOnes(dec.stack.back().ffNormGain, D));
        // Cross-attention's values carry the source's tokens, embedded by the encoder.
        const Matrix& e = stack == CircuitStack::Cross && w.tokenEmbedding.size() > 0 ? w.tokenEmbedding : dec.tokenEmbedding;
        sum.noalias() = dec.unembedding.transpose() * e;
    }
    const RowVector g = gainOrOnes(gain, D);
    return (g.transpose().asDiagonal() * sum).cast<double>();
}

Matrix CircuitWeights::embedding(CircuitStack stack)
{
    const ModelWeights& w = m_model.weights;
    if (stack == CircuitStack::Self && w.stored) {
        const Eigen::Index V = m_model.config.vocabSize, D = m_model.config.dModel;
        Matrix rowMajorT(D, V);  // Eᵀ, column v the embedding of token v
        w.stored->embedding.rowsToFloats(0, V, rowMajorT.data());
        return rowMajorT.transpose();
    }
    if (stack == CircuitStack::Self) return w.tokenEmbedding;
    const DecoderStack& dec = *m_model.decoder;
    return stack == CircuitStack::Cross && w.tokenEmbedding.size() > 0 ? w.tokenEmbedding : dec.tokenEmbedding;
}

Matrix CircuitWeights::unembeddingWithGain(CircuitStack stack)
{
    const ModelWeights& w = m_model.weights;
    const int D = m_model.config.dModel;
    Matrix u;  // (V, D)
    RowVector gain;
    if (stack == CircuitStack::Self) {
        gain = w.lnfGain;
        if (w.stored) {
            const StoredTensor& t = w.stored->unembedding.present() ? w.stored->unembedding : w.stored->embedding;
            Matrix rowMajorT(D, m_model.config.vocabSize);
            t.rowsToFloats(0, m_model.config.vocabSize, rowMajorT.data());
            u = rowMajorT.transpose();
        } else {
            u = w.tokenEmbedding;
        }
    } else {
        const DecoderStack& dec = *m_model.decoder;
        gain = dec.finalNormGain.size() == D ? dec.finalNormGain
                                             : (dec.stack.empty() ? RowVector::Ones(D) : gainOrOnes(dec.stack.back().ffNormGain, D));
        u = dec.unembedding;
    }
    return u * gainOrOnes(gain, D).asDiagonal();  // U diag(γ) = W_Uᵀ
}

} // namespace attnscope
