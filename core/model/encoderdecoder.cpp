#include "core/model/encoderdecoder.h"

#include <cassert>
#include <cmath>
#include <string>
#include <tuple>

#include "core/model/forwardsteps.h"
#include "core/model/relativebias.h"

namespace attnscope {

namespace {

// x W + b for every row.
Matrix affine(const Matrix& x, const Matrix& w, const RowVector& b)
{
    Matrix y = x * w;  // (rows, out)
    y.rowwise() += b;
    return y;
}

// The position rows a stack adds for this pass, or null: learned (the stack's table), sinusoidal (the
// model's derived table) or none, as the settings choose. Relative buckets add no rows.
const Matrix* positions(const Model& model, const Matrix& learned, PositionalOverride choice)
{
    switch (choice) {
    case PositionalOverride::Default:
        return model.config.positional == PositionalKind::RelativeBuckets ? nullptr : &learned;
    case PositionalOverride::Learned: return &learned;
    case PositionalOverride::Sinusoidal: return &model.sinusoidal;
    case PositionalOverride::None: return nullptr;
    }
    return &learned;
}

// One multi-head attention sublayer: queries from `queries`, keys and values from `keys`; each head's
// weights into weights[first + head]; returns the output projection of the heads side by side. Head
// `detailHead`'s pipeline goes into `detail` when that is given.
// `bias`, when given, is each head's relative position bias by offset (model/relativebias.h).
Matrix attend(const AttentionWeights& a, const Matrix& queries, const Matrix& keys, int heads, float multiplier,
              const AttentionSettings& settings, std::vector<Matrix>& weights, std::size_t first,
              HeadDetail* detail = nullptr, int detailHead = -1, const std::vector<RowVector>* bias = nullptr)
{
    const Eigen::Index Dh = a.wq.cols() / heads;
    const Matrix q = affine(queries, a.wq, a.bq), k = affine(keys, a.wk, a.bk), v = affine(keys, a.wv, a.bv);
    Matrix concat(queries.rows(), a.wq.cols());  // (rows, D)
    Matrix scores;
    for (int h = 0; h < heads; ++h) {
        Matrix& w = weights[first + std::size_t(h)];
        w.resize(q.rows(), k.rows());
        attendHead(q.middleCols(h * Dh, Dh), k.middleCols(h * Dh, Dh), v.middleCols(h * Dh, Dh), multiplier, settings,
                   scores, w, concat.middleCols(h * Dh, Dh), h == detailHead ? detail : nullptr, nullptr,
                   bias ? &(*bias)[std::size_t(h)] : nullptr);
    }
    return affine(concat, a.wo, a.bo);
}

// One residual sublayer. Post-LN: stream = norm(stream + f(stream)); pre-LN: stream += f(norm(stream)).
// `f` receives the input it reads and returns the sublayer's output.
template <class F>
void sublayer(const ModelConfig& c, NormPlacement placement, Matrix& stream, const RowVector& gain, const RowVector& bias, F&& f)
{
    if (placement == NormPlacement::PreLN) {
        Matrix normed(stream.rows(), stream.cols());
        normalize(c, stream, gain, bias, normed);
        stream += f(normed);
        return;
    }
    const Matrix sum = stream + f(stream);
    normalize(c, sum, gain, bias, stream);
}

} // namespace

AttentionSettings decoderSettings(AttentionSettings settings, DecoderMask mask)
{
    settings.mask = mask == DecoderMask::AsTrained ? MaskKind::Causal : MaskKind::None;
    settings.window = settings.sinks = 0;
    settings.sparse = {};
    return settings;
}

namespace {

// What the decoder's two attention kinds obey. Self-attention sees the target under the mask, with no
// blocked keys (they name source positions); cross-attention lets every target token see every source
// token that is not blocked. Neither is ablated (ablation names the encoder's heads).
std::pair<AttentionSettings, AttentionSettings> selfAndCrossSettings(const AttentionSettings& settings)
{
    AttentionSettings self = settings, cross = settings;
    self.blockedKeys.clear();
    self.ablated.clear();
    cross.mask = MaskKind::None;
    cross.window = cross.sinks = 0;
    cross.sparse = {};
    cross.ablated.clear();
    return {self, cross};
}

// The encoder's pass on the source and what cross-attention reads (S, D): the stream leaving the encoder,
// through its final norm in a pre-LN stack. The encoder is bidirectional, with the source's blocked keys and
// the ablated heads: head numbers name the encoder's heads, the ones the window's grid shows for such a
// model, so the window and the command line knock out the same heads.
Status runEncoder(const Model& model, const std::vector<int>& source, const AttentionSettings& settings, ForwardTrace& encoder, Matrix& memory)
{
    const ModelConfig& c = model.config;
    if (source.empty()) return Status::failure("the source is empty; an encoder–decoder model needs a source sentence.");
    for (int key : settings.blockedKeys)
        if (key >= static_cast<int>(source.size()))
            return Status::failure("blocked key " + std::to_string(key) + " is past the source's last token (" +
                                   std::to_string(source.size() - 1) + ").");
    AttentionSettings encoderSettings = settings;
    encoderSettings.mask = MaskKind::None;
    encoderSettings.window = encoderSettings.sinks = 0;
    encoderSettings.sparse = {};
    CaptureRequest capture;
    capture.finalHidden = true;
    Workspace ws;
    if (Status problem = forward(model, source, encoderSettings, capture, encoder, ws); !problem.ok()) return problem;
    memory = encoder.finalHidden;
    if (c.norm == NormPlacement::PreLN && model.weights.lnfGain.size() == c.dModel)
        normalize(c, encoder.finalHidden, model.weights.lnfGain, model.weights.lnfBias, memory);
    return {};
}

// The feed-forward sublayer's output for the rows of x; `hidden` (rows, F), when given, receives the
// activation (gated: the gated product).
Matrix decoderFeedForward(const DecoderStack& dec, const DecoderLayer& layer, const Matrix& x, Matrix* hidden = nullptr)
{
    Matrix a = affine(x, layer.w1, layer.b1);  // (rows, F)
    if (layer.w3.size() > 0) {  // gated: act(x W_1) ⊙ x W_3
        activate(dec.activation == Activation::GeGlu ? Activation::GeluTanh : Activation::Silu, a);
        a.array() *= (x * layer.w3).array();
    } else {
        activate(dec.activation, a);
    }
    if (hidden) *hidden = a;
    return affine(a, layer.w2, layer.b2);
}

// One query row of one head against the keys so far: its masked scores' softmax into `weights` (1, n)
// and the weighted sum of the values into `out` (1, Dh), as attendHead computes row `position` of a whole pass.
void attendRow(const Eigen::Ref<const Matrix>& q, const Eigen::Ref<const Matrix>& k, const Eigen::Ref<const Matrix>& v,
               Eigen::Index position, float multiplier, const AttentionSettings& settings, Matrix& weights, Eigen::Ref<Matrix> out)
{
    Matrix scores = (k * q.transpose()).transpose();  // (1, n)
    scores *= multiplier;
    maskScoreRows(settings, position, scores);
    weights.resize(1, k.rows());
    maskedSoftmax(scores, weights);
    out.noalias() = weights * v;
}

} // namespace

Result<TokenizedText> encodeSource(const Model& model, std::string_view text) { return model.tokenizer->encode(text); }

Result<TokenizedText> encodeTarget(const Model& model, std::string_view text)
{
    using R = Result<TokenizedText>;
    if (!model.decoder) return R::fail("this model has no decoder: it reads one text, not a source and a target.");
    const Tokenizer& tokenizer = *model.decoder->targetTokenizer;
    Result<TokenizedText> body = tokenizer.encode(text);
    if (!body) return body;
    const int start = model.decoder->decoderStartId;
    body->ids.insert(body->ids.begin(), start);
    body->tokens.insert(body->tokens.begin(), tokenizer.displayToken(start));
    body->spans.insert(body->spans.begin(), TextSpan::added());
    return body;
}

Status forwardEncoderDecoder(const Model& model, const std::vector<int>& source, const std::vector<int>& target,
                             const AttentionSettings& settings, bool nextLogits, EncoderDecoderTrace& trace,
                             std::optional<HeadSelection> crossDetail)
{
    if (!model.decoder) return Status::failure("this model has no decoder, so it has no cross-attention.");
    const DecoderStack& dec = *model.decoder;
    const ModelConfig& c = model.config;
    if (target.empty()) return Status::failure("the decoder input is empty; it starts with the start token.");
    if (static_cast<long>(target.size()) > dec.contextLength)
        return Status::failure("the decoder input has " + std::to_string(target.size()) + " tokens but the decoder's context is " +
                               std::to_string(dec.contextLength) + " tokens.");
    for (int id : target)
        if (id < 0 || id >= c.vocabSize)
            return Status::failure("token id " + std::to_string(id) + " is outside the vocabulary (size " + std::to_string(c.vocabSize) + ").");
    if (crossDetail && (crossDetail->layer < 0 || crossDetail->layer >= dec.layers || crossDetail->head < 0 ||
                        crossDetail->head >= dec.heads))
        return Status::failure("the decoder has no cross-attention head " + std::to_string(crossDetail->layer) + "." +
                               std::to_string(crossDetail->head) + " (" + std::to_string(dec.layers) + " layers of " +
                               std::to_string(dec.heads) + " heads, numbered from 0).");
    if (settings.positional == PositionalOverride::Learned && dec.positionEmbedding.rows() < static_cast<Eigen::Index>(target.size()))
        return Status::failure("this model has no learned positional table long enough for the decoder input.");
    if (settings.positional == PositionalOverride::Sinusoidal && model.sinusoidal.rows() < static_cast<Eigen::Index>(target.size()))
        return Status::failure("the positional table is shorter than the decoder input.");

    Matrix memory;  // (S, D) what cross-attention reads
    if (Status problem = runEncoder(model, source, settings, trace.encoder, memory); !problem.ok()) return problem;

    const int L = dec.layers, H = dec.heads, T = static_cast<int>(target.size()), D = c.dModel;
    const float m = static_cast<float>(settings.multiplier(dec.dHead, c.scaleFolded));
    trace.encoderLayers = c.layers;
    trace.decoderLayers = L;
    trace.heads = H;
    trace.sourceTokens = static_cast<int>(source.size());
    trace.targetTokens = T;
    trace.multiplier = m;
    trace.selfAttention.assign(std::size_t(L * H), Matrix());
    trace.crossAttention.assign(std::size_t(L * H), Matrix());

    // Named variables, not a structured binding: the lambdas below capture them, which clang before 16
    // rejects (scripts/fuzz.sh builds the core with Debian 12's clang 14).
    const std::pair<AttentionSettings, AttentionSettings> selfAndCross = selfAndCrossSettings(settings);
    const AttentionSettings& selfSettings = selfAndCross.first;
    const AttentionSettings& crossSettings = selfAndCross.second;

    Matrix h(T, D);  // (T, D) the decoder's residual stream
    const Matrix* pos = positions(model, dec.positionEmbedding, settings.positional);
    for (int t = 0; t < T; ++t) {
        h.row(t) = dec.tokenEmbedding.row(target[std::size_t(t)]);
        if (pos) h.row(t) += pos->row(t);
    }
    if (dec.embNormGain.size() > 0) {  // BART normalises the summed embeddings; Marian does not
        Matrix normed(T, D);
        layerNorm(h, dec.embNormGain, dec.embNormBias, c.layerNormEps, normed);
        h = normed;
    }

    // T5: the self-attention's relative bias, causal buckets, the same in every layer.
    std::vector<RowVector> selfBias;
    const bool relative = dec.relativeBias.size() > 0 && settings.positional == PositionalOverride::Default;
    if (relative) {
        selfBias.resize(std::size_t(H));
        for (int hd = 0; hd < H; ++hd)
            relativeBiasByOffset(dec.relativeBias, hd, T, T, false, c.relativeMaxDistance, selfBias[std::size_t(hd)]);
    }

    for (int l = 0; l < L; ++l) {
        const DecoderLayer& layer = dec.stack[std::size_t(l)];
        const std::size_t first = std::size_t(l * H);
        HeadDetail* detail = nullptr;
        EncoderDecoderTrace::DecoderBlock* block = nullptr;
        if (crossDetail && crossDetail->layer == l) {
            detail = &trace.crossDetail;
            detail->selection = *crossDetail;
            block = &trace.block;
        }
        // The focused layer keeps what each sublayer adds and the stream after it.
        const auto kept = [block](Matrix out, Matrix EncoderDecoderTrace::DecoderBlock::*member) {
            if (block) (*block).*member = out;
            return out;
        };
        if (block) block->residualIn = h;
        sublayer(c, dec.norm, h, layer.self.normGain, layer.self.normBias, [&](const Matrix& x) {
            return kept(attend(layer.self, x, x, H, m, selfSettings, trace.selfAttention, first, nullptr, -1, relative ? &selfBias : nullptr),
                        &EncoderDecoderTrace::DecoderBlock::selfOutput);
        });
        if (block) block->afterSelf = h;
        sublayer(c, dec.norm, h, layer.cross.normGain, layer.cross.normBias, [&](const Matrix& x) {
            if (detail) detail->x = x;
            return kept(attend(layer.cross, x, memory, H, m, crossSettings, trace.crossAttention, first, detail,
                               detail ? crossDetail->head : -1),
                        &EncoderDecoderTrace::DecoderBlock::crossOutput);
        });
        if (block) block->afterCross = h;
        sublayer(c, dec.norm, h, layer.ffNormGain, layer.ffNormBias, [&](const Matrix& x) {
            return kept(decoderFeedForward(dec, layer, x, block ? &block->ffHidden : nullptr), &EncoderDecoderTrace::DecoderBlock::ffOutput);
        });
        if (block) block->residualOut = h;
    }
    if (dec.finalNormGain.size() == D) {
        Matrix normed(T, D);
        normalize(c, h, dec.finalNormGain, dec.finalNormBias, normed);
        h = normed;
    }

    trace.hasCrossDetail = crossDetail.has_value();
    trace.hasLogits = nextLogits;
    if (nextLogits) {
        trace.nextLogits = (h.row(T - 1) * dec.logitScale) * dec.unembedding.transpose();  // (V)
        if (dec.logitsBias.size() == trace.nextLogits.size()) trace.nextLogits += dec.logitsBias;
    }
    return {};
}

bool DecoderSteps::canStep(const Model& model, const AttentionSettings& settings)
{
    const bool relative = model.decoder && model.decoder->relativeBias.size() > 0 && settings.positional == PositionalOverride::Default;
    return model.decoder && settings.mask == MaskKind::Causal && !relative;
}

Status DecoderSteps::start(const Model& model, const std::vector<int>& source, const AttentionSettings& settings)
{
    if (!model.decoder) return Status::failure("this model has no decoder, so it has no cross-attention.");
    const DecoderStack& dec = *model.decoder;
    if (settings.positional == PositionalOverride::Learned && dec.positionEmbedding.rows() == 0)
        return Status::failure("this model has no learned positional table long enough for the decoder input.");
    ForwardTrace encoder;
    Matrix memory;  // (S, D)
    if (Status problem = runEncoder(model, source, settings, encoder, memory); !problem.ok()) return problem;
    m_model = &model;
    std::tie(m_self, m_cross) = selfAndCrossSettings(settings);
    m_multiplier = static_cast<float>(settings.multiplier(dec.dHead, model.config.scaleFolded));
    const std::size_t L = std::size_t(dec.layers);
    m_crossKeys.resize(L);
    m_crossValues.resize(L);
    m_keys.assign(L, Matrix());
    m_values.assign(L, Matrix());
    for (std::size_t l = 0; l < L; ++l) {
        const AttentionWeights& a = dec.stack[l].cross;
        m_crossKeys[l] = affine(memory, a.wk, a.bk);
        m_crossValues[l] = affine(memory, a.wv, a.bv);
    }
    m_position = 0;
    m_crossRows.assign(L * std::size_t(dec.heads), Eigen::RowVectorXf());
    return {};
}

Status DecoderSteps::step(int id)
{
    assert(m_model && "start() first");
    const Model& model = *m_model;
    const DecoderStack& dec = *model.decoder;
    const ModelConfig& c = model.config;
    const int t = m_position, H = dec.heads, D = c.dModel;
    if (id < 0 || id >= c.vocabSize)
        return Status::failure("token id " + std::to_string(id) + " is outside the vocabulary (size " + std::to_string(c.vocabSize) + ").");
    if (t >= dec.contextLength)
        return Status::failure("the decoder input has " + std::to_string(t + 1) + " tokens but the decoder's context is " +
                               std::to_string(dec.contextLength) + " tokens.");
    const Matrix* pos = positions(model, dec.positionEmbedding, m_self.positional);
    if (pos && pos->rows() <= t) return Status::failure("the positional table is shorter than the decoder input.");

    // 1. The new token's row of the stream, as the whole pass embeds row t.
    Matrix h = dec.tokenEmbedding.row(id);  // (1, D)
    if (pos) h += pos->row(t);
    if (dec.embNormGain.size() > 0) {
        Matrix normed(1, D);
        layerNorm(h, dec.embNormGain, dec.embNormBias, c.layerNormEps, normed);
        h = normed;
    }
    for (int l = 0; l < dec.layers; ++l) {
        const DecoderLayer& layer = dec.stack[std::size_t(l)];
        Matrix& keys = m_keys[std::size_t(l)];
        Matrix& values = m_values[std::size_t(l)];
        // 2. Masked self-attention: this row's key and value join the kept ones (room doubles when full, so
        //    a step does not copy every earlier row), and its query meets all of them.
        sublayer(c, dec.norm, h, layer.self.normGain, layer.self.normBias, [&](const Matrix& x) {
            const AttentionWeights& a = layer.self;
            const Eigen::Index Dh = a.wq.cols() / H;
            if (keys.rows() <= t) {
                const Eigen::Index rows = std::max<Eigen::Index>(64, 2 * keys.rows());
                keys.conservativeResize(rows, a.wk.cols());
                values.conservativeResize(rows, a.wv.cols());
            }
            keys.row(t) = affine(x, a.wk, a.bk);
            values.row(t) = affine(x, a.wv, a.bv);
            const Matrix q = affine(x, a.wq, a.bq);  // (1, H*Dh)
            Matrix concat(1, a.wq.cols()), weights;
            for (int hd = 0; hd < H; ++hd)
                attendRow(q.middleCols(hd * Dh, Dh), keys.topRows(t + 1).middleCols(hd * Dh, Dh), values.topRows(t + 1).middleCols(hd * Dh, Dh),
                          t, m_multiplier, m_self, weights, concat.middleCols(hd * Dh, Dh));
            return affine(concat, a.wo, a.bo);
        });
        // 3. Cross-attention over the encoder's output, projected once in start().
        sublayer(c, dec.norm, h, layer.cross.normGain, layer.cross.normBias, [&](const Matrix& x) {
            const AttentionWeights& a = layer.cross;
            const Eigen::Index Dh = a.wq.cols() / H;
            const Matrix q = affine(x, a.wq, a.bq);  // (1, H*Dh)
            Matrix concat(1, a.wq.cols()), weights;
            for (int hd = 0; hd < H; ++hd) {
                attendRow(q.middleCols(hd * Dh, Dh), m_crossKeys[std::size_t(l)].middleCols(hd * Dh, Dh),
                          m_crossValues[std::size_t(l)].middleCols(hd * Dh, Dh), t, m_multiplier, m_cross, weights,
                          concat.middleCols(hd * Dh, Dh));
                m_crossRows[std::size_t(l * H + hd)] = weights.row(0);
            }
            return affine(concat, a.wo, a.bo);
        });
        // 4. The feed-forward sublayer, as in the whole pass.
        sublayer(c, dec.norm, h, layer.ffNormGain, layer.ffNormBias, [&](const Matrix& x) { return decoderFeedForward(dec, layer, x); });
    }
    if (dec.finalNormGain.size() == D) {
        Matrix normed(1, D);
        normalize(c, h, dec.finalNormGain, dec.finalNormBias, normed);
        h = normed;
    }
    m_logits = (h.row(0) * dec.logitScale) * dec.unembedding.transpose();  // (V)
    if (dec.logitsBias.size() == m_logits.size()) m_logits += dec.logitsBias;
    ++m_position;
    return {};
}

} // namespace attnscope
