#include "core/train/probes/recall.h"

#include <algorithm>
#include <cmath>

#include "core/compute/logsumexp.h"
#include "core/model/randommodel.h"
#include "core/train/corpus/corpus.h"
#include "core/train/corpus/lexicon.h"

namespace attnscope::train {

namespace {

std::string joinWords(const std::vector<std::string>& words)
{
    std::string s;
    for (const std::string& w : words) {
        if (!s.empty()) s += ' ';
        s += w;
    }
    return s;
}

// `count` filler words: "near the old house behind the red park ...", cut after `count` words.
std::vector<std::string> fillerWords(int count, std::uint64_t seed)
{
    const Lexicon& x = lexicon();
    SeededRandom random(seed);
    auto pick = [&random](const std::vector<std::string_view>& from) { return std::string(from[random.nextU64() % from.size()]); };
    std::vector<std::string> words;
    while (static_cast<int>(words.size()) < count) {
        const std::string phrase[] = {pick(x.prepositions), "the", pick(x.adjectives), std::string(x.places[random.nextU64() % x.places.size()].singular)};
        for (const std::string& w : phrase)
            if (static_cast<int>(words.size()) < count) words.push_back(w);
    }
    return words;
}

// The animal a held-out sentence is about: its one word that is an animal's singular.
const Animal* animalOf(const std::vector<std::string>& words, std::size_t& at)
{
    for (std::size_t i = 0; i < words.size(); ++i)
        for (const Animal& a : lexicon().animals)
            if (words[i] == a.singular) {
                at = i;
                return &a;
            }
    return nullptr;
}

} // namespace

std::string toString(RecallProbe probe) { return probe == RecallProbe::Pronoun ? "pronoun" : "induction"; }

Result<RecallProbe> parseRecallProbe(std::string_view name)
{
    if (name == "pronoun") return Result<RecallProbe>::ok(RecallProbe::Pronoun);
    if (name == "induction") return Result<RecallProbe>::ok(RecallProbe::Induction);
    return Result<RecallProbe>::fail("the probe '" + std::string(name) + "' is not one of pronoun, induction.");
}

std::vector<RecallPrompt> recallPrompts(const RecallOptions& options, int distance)
{
    std::vector<RecallPrompt> prompts;
    const std::vector<std::string> sentences = heldOutSentences(options.sentences, options.seed);
    for (std::size_t i = 0; i < sentences.size(); ++i) {
        const std::vector<std::string> words = corpusWords(sentences[i]);
        std::size_t animalAt = 0;
        const Animal* animal = animalOf(words, animalAt);
        const auto because = std::find(words.begin(), words.end(), "because");
        // heldOutSentences always gives "the [adj] ANIMAL POSTURE [adv] on the [adj] SURFACE because it ...".
        if (!animal || because == words.end() || animalAt + 1 >= words.size()) continue;
        // The fillers of sentence i depend on the seed and i only, so a longer distance extends a shorter one.
        const std::vector<std::string> filler = fillerWords(distance, options.seed * 1000003ull + i);
        RecallPrompt p;
        std::vector<std::string> prompt;
        if (options.probe == RecallProbe::Pronoun) {
            prompt.assign(words.begin(), because);
            prompt.insert(prompt.end(), filler.begin(), filler.end());
            prompt.push_back("because");
            prompt.push_back("it");
            for (std::string_view s : animal->sounds) p.answers.emplace_back(s);
            p.clueWord = static_cast<int>(animalAt);
        } else {
            prompt = words;
            prompt.insert(prompt.end(), filler.begin(), filler.end());
            prompt.insert(prompt.end(), words.begin(), words.begin() + static_cast<std::ptrdiff_t>(animalAt) + 1);
            p.answers.push_back(words[animalAt + 1]);
            p.clueWord = static_cast<int>(animalAt) + 1;
        }
        p.text = joinWords(prompt);
        prompts.push_back(std::move(p));
    }
    return prompts;
}

Result<PromptScore> scorePrompt(const Tokenizer& tokenizer, const NextTokenLogits& next, const RecallPrompt& p)
{
    using R = Result<PromptScore>;
    Result<TokenizedText> prompt = tokenizer.encode(p.text);
    if (!prompt) return R::fail(prompt.error());
    // 1. Each answer's first token: the token that follows the prompt's when the answer is appended
    //    after a space (a word tokenizer's word; GPT-2's " barked" or its first piece).
    std::vector<int> answerIds;
    for (const std::string& a : p.answers) {
        Result<TokenizedText> longer = tokenizer.encode(p.text + " " + a);
        if (!longer) return R::fail(longer.error());
        const std::vector<int>& ids = longer->ids;
        if (ids.size() <= prompt->ids.size() || !std::equal(prompt->ids.begin(), prompt->ids.end(), ids.begin()))
            return R::fail("the tokenizer does not split \"" + p.text + " " + a + "\" after \"" + p.text + "\", so its answer has no token of its own.");
        const int id = ids[prompt->ids.size()];
        if (std::find(answerIds.begin(), answerIds.end(), id) == answerIds.end()) answerIds.push_back(id);
    }
    // 2. The model's distribution after the prompt.
    Result<Eigen::RowVectorXf> logits = next(prompt->ids);
    if (!logits) return R::fail(logits.error());
    Eigen::VectorXd probs = logits->transpose().cast<double>();  // (V)
    softmaxInPlace(probs.col(0));
    Eigen::Index best = 0;
    probs.maxCoeff(&best);
    PromptScore score;
    for (int id : answerIds) score.pCorrect += probs[id];
    score.top = static_cast<int>(best);
    score.correct = std::find(answerIds.begin(), answerIds.end(), score.top) != answerIds.end();
    return R::ok(score);
}

Result<RecallResult> measureRecall(const Tokenizer& tokenizer, const NextTokenLogits& next, const RecallOptions& options)
{
    using R = Result<RecallResult>;
    if (options.distances.empty()) return R::fail("recall needs at least one distance.");
    for (int d : options.distances)
        if (d < 0 || d > kMaxRecallDistance)
            return R::fail("the distance " + std::to_string(d) + " is outside 0 to " + std::to_string(kMaxRecallDistance) + " filler words.");
    if (options.sentences < 1 || options.sentences > 10000) return R::fail("recall needs between 1 and 10,000 sentences.");
    RecallResult out;
    out.probe = options.probe;
    out.distances = options.distances;
    for (int d : options.distances) {
        const std::vector<RecallPrompt> prompts = recallPrompts(options, d);
        if (prompts.empty()) return R::fail("the corpus generator gave no probe sentence.");
        double correct = 0, probability = 0;
        for (const RecallPrompt& p : prompts) {
            Result<PromptScore> score = scorePrompt(tokenizer, next, p);
            if (!score) return R::fail(score.error());
            probability += score->pCorrect;
            correct += score->correct ? 1.0 : 0.0;
        }
        out.accuracy.push_back(correct / static_cast<double>(prompts.size()));
        out.pCorrect.push_back(probability / static_cast<double>(prompts.size()));
        out.sentences = static_cast<int>(prompts.size());
    }
    return R::ok(std::move(out));
}

} // namespace attnscope::train
