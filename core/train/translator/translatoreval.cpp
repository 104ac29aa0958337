#include "core/train/translator/translatoreval.h"

#include <set>

#include "core/model/encoderdecoder.h"
#include "core/model/generate.h"
#include "core/train/corpus/corpus.h"

namespace attnscope::train {

namespace {

std::vector<std::string> words(const std::string& text) { return corpusWords(text); }

} // namespace

double TranslationScores::headAccuracy(int layer, int head) const
{
    const std::size_t index = static_cast<std::size_t>(layer * heads + head);
    if (alignedWords == 0 || index >= headHits.size()) return 0.0;
    return double(headHits[index]) / alignedWords;
}

HeldOutSets heldOutSelectionAndReport(int count, std::uint64_t seed)
{
    HeldOutSets sets;
    sets.report = heldOutTranslationPairs(count, seed);
    std::set<std::string> reported;
    for (const TranslationPair& p : sets.report) reported.insert(p.source);
    // Twice as many drawn with another seed, so the ones the report set also holds can be left out.
    for (TranslationPair& p : heldOutTranslationPairs(2 * count, seed ^ 0x5e1ec7ULL))
        if (int(sets.selection.size()) < count && !reported.contains(p.source)) sets.selection.push_back(std::move(p));
    return sets;
}

AlignmentHead chooseAlignmentHead(const TranslationScores& selection, const TranslationScores& report)
{
    AlignmentHead chosen;
    int best = -1;
    for (std::size_t h = 0; h < selection.headHits.size(); ++h)
        if (selection.headHits[h] > best) {
            best = selection.headHits[h];
            chosen.layer = int(h) / std::max(1, selection.heads);
            chosen.head = int(h) % std::max(1, selection.heads);
        }
    chosen.selectionAccuracy = selection.headAccuracy(chosen.layer, chosen.head);
    chosen.reportAccuracy = report.headAccuracy(chosen.layer, chosen.head);
    return chosen;
}

Result<TranslationScores> scoreTranslator(const Model& model, const std::vector<TranslationPair>& pairs)
{
    using R = Result<TranslationScores>;
    if (!model.decoder) return R::fail("the model has no decoder, so it does not translate.");
    const Tokenizer& target = *model.decoder->targetTokenizer;
    const int L = model.decoder->layers, H = model.config.heads;
    TranslationScores s;
    s.headHits.assign(static_cast<std::size_t>(L * H), 0);
    s.heads = H;
    const AttentionSettings settings;
    for (const TranslationPair& pair : pairs) {
        Result<TokenizedText> source = encodeSource(model, pair.source);
        if (!source) return R::fail(source.error());
        // The source's first token is the model's own (<bos>) when it adds one: alignment indices count words.
        const int offset = static_cast<int>(source->ids.size()) - static_cast<int>(words(pair.source).size());
        const std::vector<std::string> reference = words(pair.target);
        Result<TokenGeneration> g = generateTokens(model, source->ids, static_cast<int>(reference.size()) + 4, settings,
                                                   GenerationOptions{1, {}});
        if (!g) return R::fail(g.error());
        std::vector<std::string> written;
        for (const GenerationStep& step : g->steps)
            if (step.chosen.id != model.decoder->endId) written.push_back(target.displayToken(step.chosen.id));
        ++s.pairs;
        s.words += static_cast<int>(std::max(written.size(), reference.size()));
        s.exactSentences += written == reference;
        for (std::size_t i = 0; i < std::min(written.size(), reference.size()); ++i) {
            if (written[i] != reference[i]) continue;
            ++s.correctWords;
            if (!pair.targetContent[i] || pair.alignment[i] < 0) continue;
            ++s.alignedWords;
            const Eigen::Index truth = pair.alignment[i] + offset;
            const GenerationStep& step = g->steps[i];
            for (int h = 0; h < L * H; ++h) {
                Eigen::Index top = 0;
                step.attention[static_cast<std::size_t>(h)].maxCoeff(&top);
                s.headHits[static_cast<std::size_t>(h)] += top == truth;
            }
        }
    }
    return R::ok(std::move(s));
}

} // namespace attnscope::train
