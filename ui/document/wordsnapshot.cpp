#include "ui/document/wordsnapshot.h"

#include <QCoreApplication>
#include <limits>

#include "core/analysis/overview.h"
#include "core/analysis/wordattention.h"

namespace attnscope {

namespace {

// (W, W): −inf where every token pair of the two words is hidden, else 0.
Matrix wordMask(const HiddenPairs& hidden, const TextWords& words)
{
    const int W = words.count();
    const auto T = Eigen::Index(words.wordOfToken.size());
    Eigen::MatrixXi open = Eigen::MatrixXi::Zero(W, W);  // visible token pairs per word pair
    for (Eigen::Index k = 0; k < T; ++k)
        for (Eigen::Index q = 0; q < T; ++q)
            if (!hidden(int(q), int(k))) ++open(words.wordOfToken[std::size_t(q)], words.wordOfToken[std::size_t(k)]);
    Matrix mask = Matrix::Zero(W, W);
    for (int j = 0; j < W; ++j)
        for (int i = 0; i < W; ++i)
            if (open(i, j) == 0) mask(i, j) = -std::numeric_limits<float>::infinity();
    return mask;
}

} // namespace

SnapshotPtr wordSnapshot(const Snapshot& s)
{
    auto w = std::make_shared<Snapshot>();
    w->model = s.model;
    w->settings = s.settings;
    w->focus = s.focus;
    w->display = AttentionDisplay::Weights;
    w->nextTokens = s.nextTokens;
    w->maskedTokens = s.maskedTokens;
    w->computeMs = s.computeMs;
    w->everyHeadBytes = s.everyHeadBytes;
    w->generation = s.generation;
    w->wordLevel = true;
    const TextWords& words = s.words;
    const int W = words.count();
    if (words.wordOfToken.size() != s.tokens.ids.size()) return w;

    // 1. Words as tokens.
    w->tokens.tokens = words.words;
    w->tokens.ids.assign(std::size_t(W), -1);
    w->tokens.spans.assign(std::size_t(W), TextSpan{});
    for (std::size_t t = s.tokens.ids.size(); t-- > 0;) {
        const auto word = std::size_t(words.wordOfToken[t]);
        w->tokens.ids[word] = s.tokens.ids[t];
        w->tokens.spans[word].special = s.tokens.spans.size() > t && s.tokens.spans[t].special;
    }
    w->words.words = words.words;
    for (int i = 0; i < W; ++i) w->words.wordOfToken.push_back(i);

    // 2. Every kept head merged; the masked pairs from the focused head's masked scores, or the settings.
    const ForwardTrace& t = s.trace;
    ForwardTrace& out = w->trace;
    out.layers = t.layers;
    out.heads = t.heads;
    out.tokens = t.tokens > 0 ? W : 0;
    out.pass = t.pass;
    out.multiplier = t.multiplier;
    out.attention.resize(t.attention.size());
    for (int l = 0; l < t.layers; ++l)
        for (int h = 0; h < t.heads; ++h)
            if (t.keepsWeights(l, h))
                out.attention[std::size_t(l * t.heads + h)] = wordAttention(t.weights(l, h), words.wordOfToken, W, words.wordOfToken, W);
    if (out.tokens > 0) {
        const bool haveMask = t.hasDetail && t.detail.masked.rows() == t.tokens;
        out.hasDetail = true;
        out.detail.selection = t.hasDetail ? t.detail.selection : s.focus;
        out.detail.masked = wordMask(haveMask ? HiddenPairs(&t.detail.masked) : HiddenPairs(s.settings, t.tokens), words);
        if (out.keepsWeights(out.detail.selection.layer, out.detail.selection.head))
            out.detail.weights = out.weights(out.detail.selection.layer, out.detail.selection.head);
    }
    return w;
}

QString wordRuleText()
{
    return QCoreApplication::translate("Words", "Words: the weight from word i to word j is the mean, over the tokens of i, of "
                                                "their summed weight on the tokens of j (Clark et al. 2019); rows still sum to 1.");
}

} // namespace attnscope
