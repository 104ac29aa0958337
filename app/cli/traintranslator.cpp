// attnscope-cli train-translator: generates the parallel corpus of train/translation.h, trains the
// encoder–decoder of train/translatornetwork.h on it, writes a model folder (with lexicon.tsv) that
// --model DIR opens, and measures the result on sentences built only from held-out word combinations.
// Progress is one JSON line per report on stdout; the last line holds the scores.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>

#include "common.h"
#include "core/io/loaders/translatorloader.h"
#include "core/train/translator/translation.h"
#include "core/train/translator/translatoreval.h"
#include "core/train/translator/translatortrainer.h"

namespace attnscope::cli::traintranslatorCommand {
namespace {

namespace fs = std::filesystem;

void declare(Options& o)
{
    o.value("--out", "DIR", "the model folder to write (required)");
    o.value("--pairs", "N", "training sentence pairs to generate (100000 by default)");
    o.value("--data-seed", "S", "the corpus generator's seed (1 by default)");
    o.value("--held-out", "N", "held-out pairs to score the result on (500 by default)");
    o.value("--encoder-layers", "L", "encoder blocks (2 by default)");
    o.value("--decoder-layers", "L", "decoder blocks (2 by default)");
    o.value("--heads", "H", "heads per attention sublayer (4 by default)");
    o.value("--d-model", "D", "width of the residual streams (64 by default)");
    o.value("--d-ff", "F", "width of the feed-forward layers (4 D by default)");
    o.value("--steps", "N", "optimisation steps (3000 by default)");
    o.value("--batch", "B", "sentence pairs per step (32 by default)");
    o.value("--learning-rate", "LR", "peak learning rate (0.003 by default)");
    o.value("--warmup", "N", "warm-up steps (100 by default)");
    o.value("--seed", "S", "seed of the initial weights and the batches (1 by default)");
    o.value("--threads", "K", "threads (2 by default; the result does not depend on it)");
    o.value("--log-every", "N", "print progress every N steps (100 by default)");
}

int run(const Args& args)
{
    if (!args.has("--out")) throw Failure{kExitUsage, "'train-translator' needs --out DIR."};
    const std::string out = args.get("--out");
    train::TranslationOptions data;
    data.pairs = readCount(args, "--pairs", 100000, 10'000'000);
    data.seed = static_cast<std::uint64_t>(readCount(args, "--data-seed", 1, 1 << 30));
    const int heldOut = readCount(args, "--held-out", 500, 1'000'000);
    train::TranslatorTrainOptions o;
    train::TranslatorConfig& n = o.network;
    n.encoderLayers = readCount(args, "--encoder-layers", 2, 48);
    n.decoderLayers = readCount(args, "--decoder-layers", 2, 48);
    n.heads = readCount(args, "--heads", 4, 64);
    n.dModel = readCount(args, "--d-model", 64, 4096);
    n.dFF = readCount(args, "--d-ff", 4 * n.dModel, 16384);
    o.steps = readCount(args, "--steps", 3000, 10'000'000);
    o.batchPairs = readCount(args, "--batch", 32, 4096);
    o.learningRate = readNumber(args, "--learning-rate", 3e-3, 0.0, 1.0);
    o.minLearningRate = o.learningRate / 10;
    o.warmupSteps = readCount(args, "--warmup", 100, 1'000'000);
    o.seed = static_cast<std::uint64_t>(readCount(args, "--seed", 1, 1 << 30));
    o.threads = readCount(args, "--threads", 2, 256);
    o.shards = std::min(4, o.batchPairs);
    const int logEvery = readCount(args, "--log-every", 100, 1'000'000);

    // 1. The corpus, as "source<TAB>target" lines, and one vocabulary for both languages.
    std::string text;
    int longestSource = 0, longestTarget = 0;
    auto count = [](const std::string& s) { return 1 + static_cast<int>(std::count(s.begin(), s.end(), ' ')); };
    for (const train::TranslationPair& p : train::generateTranslationPairs(data)) {
        text.append(p.source).append("\t").append(p.target).append("\n");
        longestSource = std::max(longestSource, count(p.source));
        longestTarget = std::max(longestTarget, count(p.target));
    }
    // Room for <bos> on both sides, and a little more than the corpus needs.
    n.sourceContext = longestSource + 1 + 4;
    n.targetContext = longestTarget + 1 + 4;
    Result<VocabTokenizer> vocab = train::buildPairVocabulary(text);
    if (!vocab) throw Failure{kExitInput, vocab.error()};
    auto tokenizer = std::make_shared<const VocabTokenizer>(std::move(*vocab));
    n.vocab = tokenizer->vocabSize();
    Result<train::PairBatch> pairs = train::tokenizePairs(text, *tokenizer, n);
    if (!pairs) throw Failure{kExitInput, pairs.error()};
    text.clear();
    auto shared = std::make_shared<const train::PairBatch>(std::move(*pairs));

    Result<std::unique_ptr<train::TranslatorTrainer>> made = train::TranslatorTrainer::create(o, tokenizer, shared);
    if (!made) throw Failure{kExitUsage, made.error()};
    train::TranslatorTrainer& trainer = **made;
    nlohmann::ordered_json start;
    start["pairs"] = shared->pairs();
    start["source_tokens"] = shared->source.size();
    start["target_tokens"] = shared->target.size();
    start["vocabulary"] = tokenizer->vocabSize();
    start["parameters"] = trainer.parameters().size();
    print(start);
    std::cout.flush();

    // 2. Train.
    const auto began = std::chrono::steady_clock::now();
    double loss = 0;
    int averaged = 0;
    while (!trainer.finished()) {
        const train::TranslatorStep r = trainer.step();
        loss += r.loss;
        ++averaged;
        if (r.step % logEvery == 0 || trainer.finished()) {
            nlohmann::ordered_json line;
            line["step"] = r.step;
            line["loss"] = loss / averaged;  // mean over the steps since the last line
            line["learning_rate"] = r.learningRate;
            line["gradient_norm"] = r.gradientNorm;
            line["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
            print(line);
            std::cout.flush();
            loss = 0;
            averaged = 0;
        }
    }

    // 3. The folder, then the scores of the model as --model DIR opens it.
    const std::string name = fs::path(out).filename().empty() ? fs::path(out).parent_path().filename().string()
                                                              : fs::path(out).filename().string();
    if (Status s = trainer.writeModelFolder(out, name, {{"lexicon.tsv", train::translationLexiconTsv()}}); !s.ok())
        throw Failure{kExitInput, s.error()};
    Result<ModelPtr> model = loadTranslatorFolder(out);
    if (!model) throw Failure{kExitInput, model.error()};
    // The alignment head is chosen on one held-out set and every figure reported on another.
    const train::HeldOutSets sets = train::heldOutSelectionAndReport(heldOut, data.seed + 1);
    const train::TranslationScores chosenOn = orFail(train::scoreTranslator(**model, sets.selection), kExitInput);
    const train::TranslationScores scores = orFail(train::scoreTranslator(**model, sets.report), kExitInput);
    const train::AlignmentHead head = train::chooseAlignmentHead(chosenOn, scores);
    nlohmann::ordered_json result;
    result["held_out_pairs"] = scores.pairs;
    result["word_accuracy"] = scores.wordAccuracy();
    result["exact_sentences"] = scores.exactSentences;
    result["alignment_accuracy"] = head.reportAccuracy;
    result["aligned_words"] = scores.alignedWords;
    result["alignment_head"] = {{"layer", head.layer}, {"head", head.head}, {"chosen_on_pairs", chosenOn.pairs},
                                {"accuracy_where_chosen", head.selectionAccuracy}};
    print(result);
    return 0;
}

const bool registered = registerCommand(
    {"train-translator", "train the built-in translator's encoder–decoder on its generated parallel corpus and score it", declare, run});

} // namespace
} // namespace attnscope::cli::traintranslatorCommand
