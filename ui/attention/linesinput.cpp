#include "ui/attention/linesinput.h"

#include <QCoreApplication>
#include <algorithm>
#include <array>

#include "core/analysis/wordattention.h"
#include "ui/common/matrixplot.h"
#include "ui/document/settingstext.h"

namespace attnscope {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("LinesInput", text); }

// Twelve colours that stay apart on white, in print and on a projector: Tableau's ten and two darker ones.
constexpr std::array<QRgb, 12> kHeadColours = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd, 0x8c564b,
                                               0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf, 0x393b79, 0x637939};

QString headName(HeadSelection h) { return QStringLiteral("L%1 H%2").arg(h.layer).arg(h.head); }

} // namespace

std::vector<HeadSelection> linesHeads(HeadSelection focus, const SceneLines& lines, int layers, int heads)
{
    std::vector<HeadSelection> out;
    if (focus.layer < 0 || focus.layer >= layers || focus.head < 0 || focus.head >= heads) return out;
    out.push_back(focus);
    const auto add = [&](HeadSelection h) {
        if (h.layer < 0 || h.layer >= layers || h.head < 0 || h.head >= heads) return;
        if (std::find(out.begin(), out.end(), h) == out.end()) out.push_back(h);
    };
    if (lines.wholeLayer)
        for (int h = 0; h < heads; ++h) add({focus.layer, h});
    for (const SceneFocus& h : lines.heads) add({h.layer, h.head});
    return out;
}

std::vector<QColor> headColours(const std::vector<HeadSelection>& heads)
{
    const std::size_t n = kHeadColours.size();
    std::vector<bool> used(n, false);
    std::vector<QColor> out(heads.size());
    std::vector<std::size_t> later;
    for (std::size_t i = 0; i < heads.size(); ++i) {
        const std::size_t c = std::size_t(heads[i].head) % n;
        if (used[c]) {
            later.push_back(i);
            continue;
        }
        used[c] = true;
        out[i] = QColor::fromRgb(kHeadColours[c]);
    }
    for (std::size_t i : later) {
        const auto free = std::find(used.begin(), used.end(), false);
        const std::size_t c = free == used.end() ? i % n : std::size_t(free - used.begin());
        if (free != used.end()) used[c] = true;
        out[i] = QColor::fromRgb(kHeadColours[c]);
    }
    return out;
}

std::vector<bool> specialTokensOf(const TokenizedText& tokens)
{
    std::vector<bool> special(tokens.ids.size(), false);
    for (std::size_t i = 0; i < tokens.spans.size() && i < special.size(); ++i) special[i] = tokens.spans[i].special;
    return special;
}

TokenizedText wordsAsTokens(const TextWords& words, const TokenizedText& tokens)
{
    TokenizedText out;
    out.tokens = words.words;
    out.ids.assign(words.words.size(), -1);
    out.spans.assign(words.words.size(), TextSpan{});
    for (std::size_t t = tokens.ids.size(); t-- > 0 && t < words.wordOfToken.size();) {
        const auto w = std::size_t(words.wordOfToken[t]);
        out.ids[w] = tokens.ids[t];
        out.spans[w].special = t < tokens.spans.size() && tokens.spans[t].special;
    }
    return out;
}

CrossAttentionResult wordCrossAttention(const CrossAttentionResult& r, const TextWords& target, const TextWords& source,
                                        const std::vector<bool>* hiddenSourceTokens)
{
    const auto cross = [&](const Matrix& m) {
        return wordAttention(hiddenSourceTokens ? withoutKeys(m, *hiddenSourceTokens) : m, target.wordOfToken, target.count(),
                             source.wordOfToken, source.count());
    };
    CrossAttentionResult w;
    w.selection = r.selection;
    w.real = r.real;
    w.multiplier = r.multiplier;
    w.decoderLayers = r.decoderLayers;
    w.heads = r.heads;
    w.weights = cross(r.weights);
    for (const Matrix& m : r.allCross) w.allCross.push_back(cross(m));
    for (const Matrix& m : r.allSelf) w.allSelf.push_back(wordAttention(m, target.wordOfToken, target.count(), target.wordOfToken, target.count()));
    return w;
}

namespace {

// A snapshot at word level with each head's rows renormalised without the special tokens before merging.
struct RenormalisedWords {
    SnapshotPtr tokens, words;
    std::vector<Matrix> heads;  // index layer * H + head; empty where not drawn
};

} // namespace

LinesInput linesOfSnapshot(const SnapshotPtr& tokenSnapshot, const SceneLines& lines, bool words)
{
    const bool atWords = words && tokenSnapshot && tokenSnapshot->atWordLevel;
    const SnapshotPtr& snapshot = atWords ? tokenSnapshot->atWordLevel : tokenSnapshot;
    LinesInput in;
    in.queryHeading = tr("queries");
    in.keyHeading = tr("keys");
    if (!snapshot || !snapshot->model || snapshot->trace.tokens == 0) {
        in.unavailable = snapshot && !snapshot->tokens.ids.empty() ? tr("No attention to show for this input.")
                                                                   : tr("Type a sentence to see its attention.");
        return in;
    }
    const ForwardTrace& t = snapshot->trace;
    in.owner = snapshot;
    const std::vector<HeadSelection> wanted = linesHeads(snapshot->focus, lines, t.layers, t.heads);
    std::vector<HeadSelection> kept;
    for (const HeadSelection& h : wanted)
        if (t.keepsWeights(h.layer, h.head)) kept.push_back(h);
    if (kept.empty() || kept.front() != snapshot->focus) {
        in.unavailable = tr("No attention to show for this input.");
        return in;
    }
    if (kept.size() < wanted.size()) in.note = onlyFocusKept(*snapshot);
    const std::vector<QColor> colours = headColours(kept);
    // Words with the special tokens hidden: each token row renormalised, then merged.
    std::shared_ptr<RenormalisedWords> renormalised;
    if (atWords && lines.hideSpecial) {
        renormalised = std::make_shared<RenormalisedWords>();
        renormalised->tokens = tokenSnapshot;
        renormalised->words = snapshot;
        renormalised->heads.resize(t.attention.size());
        const std::vector<bool> special = specialTokensOf(tokenSnapshot->tokens);
        const TextWords& w = tokenSnapshot->words;
        for (const HeadSelection& h : kept)
            renormalised->heads[std::size_t(h.layer * t.heads + h.head)] =
                wordAttention(withoutKeys(tokenSnapshot->trace.weights(h.layer, h.head), special), w.wordOfToken, w.count(), w.wordOfToken, w.count());
        in.owner = renormalised;
    }
    for (std::size_t i = 0; i < kept.size(); ++i) {
        const Matrix* m = renormalised ? &renormalised->heads[std::size_t(kept[i].layer * t.heads + kept[i].head)] : &t.weights(kept[i].layer, kept[i].head);
        in.heads.push_back({kept[i], headName(kept[i]), colours[i], m});
    }
    in.queryLabels = tokenLabels(snapshot->tokens.tokens);
    in.keyLabels = in.queryLabels;
    // The same pairs as the forward pass hid (model/forward.h's isMaskedPair), blocked keys among them; at
    // word level the word snapshot's masked pairs, and a word blocked when every one of its tokens is.
    in.blockedKey.resize(std::size_t(t.tokens));
    if (atWords) {
        in.masked = HiddenPairs(&t.detail.masked);
        std::vector<int> open(std::size_t(t.tokens), 0);
        const std::vector<int>& wordOf = tokenSnapshot->words.wordOfToken;
        for (std::size_t k = 0; k < wordOf.size(); ++k)
            if (!tokenSnapshot->settings.isBlocked(int(k))) ++open[std::size_t(wordOf[k])];
        for (int k = 0; k < t.tokens; ++k) in.blockedKey[std::size_t(k)] = open[std::size_t(k)] == 0;
        in.queryHeading = tr("query words");
        in.keyHeading = tr("key words");
    } else {
        in.masked = HiddenPairs(snapshot->settings, t.tokens);
        for (int k = 0; k < t.tokens; ++k) in.blockedKey[std::size_t(k)] = snapshot->settings.isBlocked(k);
    }
    in.specialKey = specialTokensOf(snapshot->tokens);
    in.caption = settingsSummary(snapshot->settings, snapshot->model->config.scaleFolded);
    if (atWords) in.caption += tr(" · words (a word's tokens' rows averaged, its keys summed)");
    return in;
}

LinesInput linesOfCross(std::shared_ptr<const CrossAttentionResult> result, const TokenizedText& target,
                        const TokenizedText& source, const SceneLines& lines, const QString& caption)
{
    LinesInput in;
    in.queryHeading = tr("target (queries)");
    in.keyHeading = tr("source (keys)");
    if (!result || result->weights.rows() != Eigen::Index(target.ids.size()) || result->weights.cols() != Eigen::Index(source.ids.size()) ||
        target.ids.empty() || source.ids.empty()) {
        in.unavailable = tr("No cross-attention to show for these sentences.");
        return in;
    }
    const CrossAttentionResult& r = *result;
    in.owner = result;
    std::vector<HeadSelection> heads = {r.selection};
    if (!r.allCross.empty()) heads = linesHeads(r.selection, lines, r.decoderLayers, r.heads);
    const std::vector<QColor> colours = headColours(heads);
    for (std::size_t i = 0; i < heads.size(); ++i) {
        const HeadSelection h = heads[i];
        const Matrix* w = i == 0 || r.allCross.empty() ? &r.weights : &r.allCross[std::size_t(h.layer * r.heads + h.head)];
        in.heads.push_back({h, headName(h), colours[i], w});
    }
    in.queryLabels = tokenLabels(target.tokens);
    in.keyLabels = tokenLabels(source.tokens);
    in.blockedKey.assign(source.ids.size(), false);
    in.specialKey = specialTokensOf(source);
    // Cross-attention has no mask: every target token may see the whole source. Source keys blocked in the
    // settings have weight 0 and draw no line; they are not struck through, as they name the window's tokens.
    in.caption = caption;
    return in;
}

} // namespace attnscope
