#pragma once
// The promises a model folder keeps, whatever its files: a refusal carries a sentence; a model that loads
// holds weights of the shapes its config declares and a tokenizer whose ids fit it, tokenises a text as
// every tokenizer promises (tokenizercheck.h), and runs the first few ids of it: the forward pass gives
// one (T, T) weight matrix per layer and head, every row of which is a probability distribution over the
// keys the row may see (finite, non-negative, summing to 1 within 1e-3), with exact zeros where the
// causal mask hides a key.
//
// Weights the fuzzer writes may hold NaN or an infinity, or be large enough for Q K^T to overflow float.
// Then the scores a row is computed from are not finite, and no softmax makes a distribution of them; such
// a row is excused, and only such a row: its head is run again with the head's detail captured, and its
// scaled scores must show the non-finite value.
//
// Dimension letters: T tokens, L layers, H heads.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "fuzzing.h"
#include "core/io/modelfolder.h"
#include "core/model/forward.h"
#include "tokenizercheck.h"

namespace fuzzing {

// Loads a model folder as the window does; nullptr after a refusal.
inline attnscope::ModelPtr loadChecked(const std::string& folder)
{
    attnscope::Result<attnscope::ModelPtr> model = attnscope::loadModelFolder(folder);
    if (!model) {
        FUZZ_EXPECT(!model.error().empty(), "a refusal carries a sentence");
        return nullptr;
    }
    const attnscope::Model& m = **model;
    FUZZ_EXPECT(m.checkShapes().ok(), "loaded weights match the config");
    FUZZ_EXPECT(m.tokenizer && m.tokenizer->vocabSize() <= m.config.vocabSize, "the tokenizer's ids fit the model");
    checkDisplayStrings(*m.tokenizer);
    return std::move(*model);
}

// The first `count` ids of a tokenised text, fewer when the model's context is shorter; id 0 alone when the
// text has none (a GPT-2 tokenizer gives none for the empty text).
inline std::vector<int> firstIds(const std::vector<int>& ids, const attnscope::Model& model, std::size_t count)
{
    if (ids.empty()) return {0};
    const std::size_t context = static_cast<std::size_t>(model.config.contextLength);
    const std::size_t n = std::min({ids.size(), count, context});
    return {ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n)};
}

// Whether row `row` of head (layer, head) was computed from scores that are not all finite.
inline bool scoresNotFinite(const attnscope::Model& model, const std::vector<int>& ids,
                            const attnscope::AttentionSettings& settings, int layer, int head, Eigen::Index row)
{
    attnscope::CaptureRequest capture;
    capture.allAttention = false;
    capture.detail = attnscope::HeadSelection{layer, head};
    attnscope::ForwardTrace trace;
    attnscope::Workspace workspace;
    if (!attnscope::forward(model, ids, settings, capture, trace, workspace).ok() || !trace.hasDetail) return false;
    const attnscope::Matrix& scaled = trace.detail.scaled;  // (T, T) before the mask
    const Eigen::Index visible = settings.mask == attnscope::MaskKind::Causal ? row + 1 : scaled.cols();
    return !scaled.row(row).head(visible).allFinite();
}

// Runs `ids` through the model as the window would (an encoder sees both ways, a decoder only back) and
// checks every attention row.
inline void checkForward(const attnscope::Model& model, const std::vector<int>& ids)
{
    attnscope::AttentionSettings settings;
    settings.mask = model.config.causal ? attnscope::MaskKind::Causal : attnscope::MaskKind::None;
    attnscope::ForwardTrace trace;
    attnscope::Workspace workspace;
    const attnscope::Status s = attnscope::forward(model, ids, settings, attnscope::CaptureRequest{}, trace, workspace);
    FUZZ_EXPECT(s.ok(), "a loaded model runs a few of its tokenizer's ids");
    const int L = model.config.layers, H = model.config.heads;
    const Eigen::Index T = static_cast<Eigen::Index>(ids.size());
    FUZZ_EXPECT(trace.layers == L && trace.heads == H && trace.tokens == T &&
                    trace.attention.size() == static_cast<std::size_t>(L) * static_cast<std::size_t>(H),
                "one weight matrix per layer and head");
    for (int l = 0; l < L; ++l)
        for (int h = 0; h < H; ++h) {
            const attnscope::Matrix& w = trace.weights(l, h);  // (T, T)
            FUZZ_EXPECT(w.rows() == T && w.cols() == T, "each weight matrix is (T, T)");
            for (Eigen::Index i = 0; i < T; ++i) {
                const Eigen::Index visible = settings.mask == attnscope::MaskKind::Causal ? i + 1 : T;
                FUZZ_EXPECT((w.row(i).tail(T - visible).array() == 0.0f).all(), "masked weights are exactly 0");
                const Eigen::RowVectorXd seen = w.row(i).head(visible).cast<double>();  // (visible)
                const bool distribution =
                    seen.allFinite() && seen.minCoeff() >= 0.0 && std::abs(seen.sum() - 1.0) <= 1e-3;
                if (!distribution)
                    FUZZ_EXPECT(scoresNotFinite(model, ids, settings, l, h, i),
                                "attention over finite scores is a distribution (finite, non-negative, sums to 1)");
            }
        }
}

// `text` through the model's tokenizer (checkEncode; invalid UTF-8 is refused, and the empty text's ids
// stand in for it), then its first 8 ids through the model (checkForward). Returns the ids of the text.
inline attnscope::TokenizedText checkText(const attnscope::Model& model, std::string_view text, bool ownPatterns = false)
{
    attnscope::TokenizedText tokens = checkEncode(*model.tokenizer, text, ownPatterns);
    if (tokens.ids.empty()) tokens = checkEncode(*model.tokenizer, "", ownPatterns);
    checkForward(model, firstIds(tokens.ids, model, 8));
    return tokens;
}

} // namespace fuzzing
