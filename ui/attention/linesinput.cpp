#include "ui/attention/linesinput.h"

#include <QCoreApplication>
#include <algorithm>
#include <array>

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
    // TEMPORARY: see the header. A display string like "<s>", "</s>", "<|endoftext|>", "[CLS]" or "[SEP]".
    std::vector<bool> special(tokens.tokens.size(), false);
    for (std::size_t i = 0; i < tokens.tokens.size(); ++i) {
        const std::string& t = tokens.tokens[i];
        const bool angle = t.size() >= 3 && t.front() == '<' && t.back() == '>';
        const bool square = t.size() >= 3 && t.front() == '[' && t.back() == ']';
        special[i] = (angle || square) && t.find(' ') == std::string::npos;
    }
    return special;
}

LinesInput linesOfSnapshot(const SnapshotPtr& snapshot, const SceneLines& lines)
{
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
    for (std::size_t i = 0; i < kept.size(); ++i)
        in.heads.push_back({kept[i], headName(kept[i]), colours[i], &t.weights(kept[i].layer, kept[i].head)});
    in.queryLabels = tokenLabels(snapshot->tokens.tokens);
    in.keyLabels = in.queryLabels;
    // The same pairs as the forward pass hid (model/forward.h's isMaskedPair), blocked keys among them.
    in.masked = HiddenPairs(snapshot->settings);
    in.blockedKey.resize(std::size_t(t.tokens));
    for (int k = 0; k < t.tokens; ++k) in.blockedKey[std::size_t(k)] = snapshot->settings.isBlocked(k);
    in.specialKey = specialTokensOf(snapshot->tokens);
    in.caption = settingsSummary(snapshot->settings, snapshot->model->config.scaleFolded);
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
