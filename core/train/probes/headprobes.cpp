#include "core/train/probes/headprobes.h"

#include <algorithm>

#include "core/model/forward.h"
#include "core/model/randommodel.h"
#include "core/text/vocabtokenizer.h"
#include "core/train/corpus/corpus.h"

namespace attnscope::train {

HeadScores::Best HeadScores::best() const
{
    Best b;
    b.score = -1.0;
    for (int l = 0; l < layers; ++l)
        for (int h = 0; h < heads; ++h)
            if (at(l, h) > b.score) b = {l, h, at(l, h)};
    return b;
}

namespace {

HeadScores zeros(const ModelConfig& c)
{
    HeadScores s;
    s.layers = c.layers;
    s.heads = c.heads;
    s.values.assign(static_cast<std::size_t>(c.layers * c.heads), 0.0);
    return s;
}

void scale(HeadScores& s, double by)
{
    for (double& v : s.values) v *= by;
}

} // namespace

Result<HeadProbeResults> probeHeads(const Model& model, const HeadProbeOptions& options)
{
    using R = Result<HeadProbeResults>;
    const auto* tokenizer = dynamic_cast<const VocabTokenizer*>(model.tokenizer.get());
    if (!tokenizer) return R::fail("the head probes need a model with AttnScope's word tokenizer and its fixed vocabulary.");
    const ModelConfig& c = model.config;
    const int L = c.layers, H = c.heads;
    const AttentionSettings settings;  // causal, sqrt(d_k), temperature 1: the model as trained
    HeadProbeResults out;
    out.previousToken = zeros(c);
    out.induction = zeros(c);
    out.pronoun = zeros(c);

    // 1. Previous-token: each held-out sentence's mean of A[i][i-1] over i >= 1, averaged over sentences.
    for (const std::string& sentence : heldOutSentences(options.heldOutSentences, options.seed)) {
        Result<TokenizedText> t = tokenizer->encode(sentence);
        if (!t) return R::fail(t.error());
        Result<ForwardTrace> trace = forward(model, t->ids, settings);
        if (!trace) return R::fail(trace.error());
        const int T = trace->tokens;
        for (int l = 0; l < L; ++l)
            for (int h = 0; h < H; ++h) {
                double sum = 0;
                for (int i = 1; i < T; ++i) sum += trace->weights(l, h)(i, i - 1);
                out.previousToken.values[static_cast<std::size_t>(l * H + h)] += sum / (T - 1);
            }
        ++out.sentences;
    }
    scale(out.previousToken, 1.0 / std::max(1, out.sentences));

    // 2. Induction: <bos> w_0 .. w_{k-1} w_0 .. w_{k-1} with k distinct words drawn from the vocabulary's
    //    words (no <bos>, <unk> or punctuation). Token w_j of the second copy sits at 1 + k + j; the token that
    //    followed its first occurrence sits at 2 + j.
    std::vector<int> words;
    for (int id = 0; id < tokenizer->vocabSize(); ++id) {
        const std::string& s = tokenizer->tokens()[static_cast<std::size_t>(id)];
        if (id != tokenizer->bos() && id != tokenizer->unk() && std::all_of(s.begin(), s.end(), [](char ch) { return ch >= 'a' && ch <= 'z'; }))
            words.push_back(id);
    }
    const int k = options.inductionLength;
    if (static_cast<int>(words.size()) < k || 1 + 2 * k > c.contextLength)
        return R::fail("the vocabulary or the context is too small for the induction probe.");
    SeededRandom random(options.seed);
    for (int s = 0; s < options.inductionSequences; ++s) {
        std::vector<int> list;
        while (static_cast<int>(list.size()) < k) {
            const int id = words[random.nextU64() % words.size()];
            if (std::find(list.begin(), list.end(), id) == list.end()) list.push_back(id);
        }
        std::vector<int> ids = {tokenizer->bos()};
        for (int copy = 0; copy < 2; ++copy) ids.insert(ids.end(), list.begin(), list.end());
        Result<ForwardTrace> trace = forward(model, ids, settings);
        if (!trace) return R::fail(trace.error());
        for (int l = 0; l < L; ++l)
            for (int h = 0; h < H; ++h) {
                double sum = 0;
                for (int j = 0; j < k; ++j) sum += trace->weights(l, h)(1 + k + j, 2 + j);
                out.induction.values[static_cast<std::size_t>(l * H + h)] += sum / k;
            }
        ++out.sequences;
    }
    scale(out.induction, 1.0 / std::max(1, out.sequences));

    // 3. Pronoun: does the row of "it" (word 7, token 8) peak at the animal (word 1, token 2), <bos> left out?
    for (const PronounProbe& p : pronounProbes()) {
        Result<TokenizedText> t = tokenizer->encode(p.text);
        if (!t) return R::fail(t.error());
        Result<ForwardTrace> trace = forward(model, t->ids, settings);
        if (!trace) return R::fail(trace.error());
        const int it = p.pronounWord + 1, animal = p.animalWord + 1;
        for (int l = 0; l < L; ++l)
            for (int h = 0; h < H; ++h) {
                Eigen::Index arg = 0;
                trace->weights(l, h).row(it).segment(1, it).maxCoeff(&arg);
                if (arg + 1 == animal) out.pronoun.values[static_cast<std::size_t>(l * H + h)] += 1.0;
            }
        ++out.pronounPairs;
    }
    scale(out.pronoun, 1.0 / std::max(1, out.pronounPairs));
    return R::ok(std::move(out));
}

} // namespace attnscope::train
