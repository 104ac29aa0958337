#pragma once
// The promises an encoder–decoder folder keeps once it loads (the bart_folder, marian_folder, t5_folder and
// translator_folder targets):
// the encoder is checked as every model folder is (modelcheck.h, on the source text); then the source
// (wrapped in the model's special tokens) and the target (after the decoder's start token) run through the
// whole encoder–decoder, and every row of the decoder's self-attention and of the cross-attention is a
// distribution (or was computed from scores that are not finite), with exact zeros where the causal mask
// hides a target key.
#include <algorithm>
#include <string_view>
#include <vector>

#include "fuzzing.h"
#include "core/model/encoderdecoder.h"
#include "modelcheck.h"

namespace fuzzing {

namespace detail {

using namespace attnscope;

// Whether cross-attention row `row` of head (layer, head) came from scores that are not all finite.
inline bool crossScoresNotFinite(const Model& model, const std::vector<int>& source, const std::vector<int>& target, int layer,
                          int head, Eigen::Index row)
{
    EncoderDecoderTrace trace;
    if (!forwardEncoderDecoder(model, source, target, {}, false, trace, HeadSelection{layer, head}).ok()) return false;
    return !trace.crossDetail.scaled.row(row).allFinite();
}

// Whether the decoder's self-attention may have been handed scores that are not finite. Its detail is not
// kept, so this is judged from what the decoder reads: every decoder tensor and the encoder output finite
// and at most 1e6 in size keep every score of these small models far inside float's range (post-LN streams
// are normalised before each projection); anything else excuses its rows.
inline bool mayOverflow(const EncoderDecoderTrace& trace, const Model& model)
{
    constexpr float kLimit = 1e6f;
    auto big = [](const auto& m) { return !m.allFinite() || (m.size() > 0 && m.cwiseAbs().maxCoeff() > kLimit); };
    if (big(trace.encoder.finalHidden)) return true;
    const DecoderStack& d = *model.decoder;
    if (big(d.tokenEmbedding) || big(d.positionEmbedding) || big(d.embNormGain) || big(d.embNormBias)) return true;
    for (const DecoderLayer& l : d.stack)
        for (const AttentionWeights* a : {&l.self, &l.cross})
            if (big(a->wq) || big(a->wk) || big(a->wv) || big(a->wo) || big(a->bq) || big(a->bk) || big(a->bv) || big(a->bo) ||
                big(a->normGain) || big(a->normBias) || big(l.w1) || big(l.w2) || big(l.b1) || big(l.b2) || big(l.ffNormGain) ||
                big(l.ffNormBias))
                return true;
    return false;
}

inline bool isDistribution(const Eigen::RowVectorXf& row)
{
    const Eigen::RowVectorXd seen = row.cast<double>();
    return seen.allFinite() && seen.minCoeff() >= 0.0 && std::abs(seen.sum() - 1.0) <= 1e-3;
}

} // namespace detail


// `texts` holds the source, then (after a part separator) the target.
inline void checkEncoderDecoder(const attnscope::Model& model, std::string_view texts)
{
    using namespace attnscope;
    using namespace detail;
    const std::vector<std::string_view> parts = fuzzing::splitParts(texts, 2);
    fuzzing::checkText(model, parts[0], true);
    if (!model.isEncoderDecoder()) return;  // the fuzzer rewrote model_type into another family

    Result<TokenizedText> source = encodeSource(model, parts[0]), target = encodeTarget(model, parts[1]);
    if (!source) source = encodeSource(model, "");
    if (!target) target = encodeTarget(model, "");
    FUZZ_EXPECT(source && target, "the empty text always encodes");
    const std::vector<int> src = fuzzing::firstIds(source->ids, model, 8);
    const std::vector<int> tgt(target->ids.begin(), target->ids.begin() + std::ptrdiff_t(std::min<std::size_t>(target->ids.size(), 6)));
    FUZZ_EXPECT(!tgt.empty() && tgt.front() == model.decoder->decoderStartId, "the decoder input starts with the start token");
    EncoderDecoderTrace trace;
    const Status s = forwardEncoderDecoder(model, src, tgt, {}, true, trace);
    FUZZ_EXPECT(s.ok(), "a loaded encoder-decoder runs a few of its tokenizer's ids");
    const int L = model.decoder->layers, H = model.decoder->heads;  // the decoder's own heads (BART's may differ)
    const Eigen::Index T = Eigen::Index(tgt.size()), S = Eigen::Index(src.size());
    FUZZ_EXPECT(trace.selfAttention.size() == std::size_t(L * H) && trace.crossAttention.size() == std::size_t(L * H),
                "one weight matrix per decoder layer and head of each kind");
    const bool excused = mayOverflow(trace, model);
    for (int l = 0; l < L; ++l)
        for (int h = 0; h < H; ++h) {
            const Matrix& self = trace.self(l, h);
            const Matrix& cross = trace.cross(l, h);
            FUZZ_EXPECT(self.rows() == T && self.cols() == T && cross.rows() == T && cross.cols() == S,
                        "self-attention is (T, T) and cross-attention (T, S)");
            for (Eigen::Index i = 0; i < T; ++i) {
                FUZZ_EXPECT((self.row(i).tail(T - i - 1).array() == 0.0f).all(), "the causal mask's weights are exactly 0");
                if (!isDistribution(self.row(i).head(i + 1))) FUZZ_EXPECT(excused, "decoder self-attention rows are distributions");
                if (!isDistribution(cross.row(i)))
                    FUZZ_EXPECT(excused || crossScoresNotFinite(model, src, tgt, l, h, i), "cross-attention rows are distributions");
            }
        }
}

} // namespace fuzzing
