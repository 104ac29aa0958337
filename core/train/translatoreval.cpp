#include "core/train/translatoreval.h"

#include <sstream>

#include "core/model/encoderdecoder.h"
#include "core/model/generate.h"

namespace attnscope::train {

namespace {

std::vector<std::string> words(const std::string& text)
{
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

} // namespace

double TranslationScores::alignmentAccuracy() const
{
    if (alignedWords == 0 || headHits.empty()) return 0.0;
    int best = 0;
    for (int hits : headHits) best = std::max(best, hits);
    return double(best) / alignedWords;
}

Result<TranslationScores> scoreTranslator(const Model& model, const std::vector<TranslationPair>& pairs)
{
    using R = Result<TranslationScores>;
    if (!model.decoder) return R::fail("the model has no decoder, so it does not translate.");
    const Tokenizer& target = *model.decoder->targetTokenizer;
    const int L = model.decoder->layers, H = model.config.heads;
    TranslationScores s;
    s.headHits.assign(static_cast<std::size_t>(L * H), 0);
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
    int best = -1;
    for (int h = 0; h < L * H; ++h)
        if (s.headHits[static_cast<std::size_t>(h)] > best) {
            best = s.headHits[static_cast<std::size_t>(h)];
            s.bestLayer = h / H;
            s.bestHead = h % H;
        }
    return R::ok(std::move(s));
}

} // namespace attnscope::train
