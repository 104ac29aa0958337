// attnscope-cli train-gru: trains the recurrent baseline (a one-layer GRU language model, core/train/
// grunetwork.h) with the decoder's optimiser and batches, and writes a model folder that `recall` and
// `next-tokens`-style commands open. Progress is one JSON line per report on stdout.
#include <filesystem>
#include <iostream>

#include "common.h"
#include "core/limits.h"
#include "core/text/filetext.h"
#include "core/train/recurrent/grutrainer.h"

namespace attnscope::cli::trainGruCommand {
namespace {

namespace fs = std::filesystem;

void declare(Options& o)
{
    o.value("--corpus", "FILE", "the training text, one document per line (required)");
    o.value("--out", "DIR", "the model folder to write (required)");
    o.value("--vocab", "FILE", "a vocab.txt to use (the built-in model's, to share its vocabulary); derived from the corpus when absent");
    o.value("--vocab-size", "V", "without --vocab, at most this many tokens (4096 by default)");
    o.value("--hidden", "H", "width of the state and of the embedding (176 by default)");
    o.value("--context", "C", "longest input the saved model accepts (1024 by default)");
    o.value("--steps", "N", "optimisation steps (3000 by default)");
    o.value("--batch", "B", "sequences per step (32 by default)");
    o.value("--sequence-length", "T", "tokens per training sequence (64 by default)");
    o.value("--learning-rate", "LR", "peak learning rate (0.003 by default)");
    o.value("--warmup", "N", "warm-up steps (100 by default)");
    o.value("--seed", "S", "seed of the initial weights and the batches (1 by default)");
    o.value("--threads", "K", "threads (2 by default; the result does not depend on it)");
    o.value("--log-every", "N", "print progress every N steps (50 by default)");
}

int run(const Args& args)
{
    if (!args.has("--corpus")) throw Failure{kExitUsage, "'train-gru' needs --corpus FILE."};
    if (!args.has("--out")) throw Failure{kExitUsage, "'train-gru' needs --out DIR."};
    const std::string out = args.get("--out");
    train::GruTrainOptions o;
    o.network.hidden = readCount(args, "--hidden", 176, 4096);
    o.network.context = readCount(args, "--context", 1024, 1 << 20);
    train::TrainOptions& r = o.run;
    const int vocabSize = readCount(args, "--vocab-size", train::kDefaultVocabularySize, int(kMaxVocabularyEntries));
    r.steps = readCount(args, "--steps", 3000, 10'000'000);
    r.batchSequences = readCount(args, "--batch", 32, 4096);
    r.sequenceLength = readCount(args, "--sequence-length", 64, 8192);
    r.learningRate = readNumber(args, "--learning-rate", 3e-3, 0.0, 1.0);
    r.minLearningRate = r.learningRate / 10;
    r.warmupSteps = readCount(args, "--warmup", 100, 1'000'000);
    r.seed = static_cast<std::uint64_t>(readCount(args, "--seed", 1, 1 << 30));
    r.threads = readCount(args, "--threads", 2, 256);
    r.shards = std::min(4, r.batchSequences);
    const int logEvery = readCount(args, "--log-every", 50, 1'000'000);

    Result<std::string> corpus = readSmallFile(args.get("--corpus"), kMaxCorpusBytes);
    if (!corpus) throw Failure{kExitInput, corpus.error()};
    train::PreparedCorpus prepared = orFail(train::prepareCorpus(*corpus, vocabSize, r.sequenceLength, args.get("--vocab")), kExitInput);
    corpus->clear();
    Result<std::unique_ptr<train::GruTrainer>> made = train::GruTrainer::create(o, prepared.tokenizer, prepared.data);
    if (!made) throw Failure{kExitUsage, made.error()};
    train::GruTrainer& trainer = **made;
    const std::string name = fs::path(out).filename().empty() ? fs::path(out).parent_path().filename().string() : fs::path(out).filename().string();

    nlohmann::ordered_json start;
    start["corpus_tokens"] = prepared.data->tokens.size();
    start["documents"] = prepared.data->documentStarts.size();
    start["vocabulary"] = prepared.tokenizer->vocabSize();
    start["unknown_tokens"] = prepared.data->unknownTokens;
    start["parameters"] = trainer.parameters().size();
    print(start);

    double loss = 0, tokensPerSecond = 0;
    int averaged = 0;
    while (!trainer.finished()) {
        const train::StepReport s = trainer.step();
        loss += s.loss;
        tokensPerSecond += s.tokensPerSecond;
        ++averaged;
        if (s.step % logEvery == 0 || trainer.finished()) {
            nlohmann::ordered_json line;
            line["step"] = s.step;
            line["loss"] = loss / averaged;  // mean over the steps since the last line
            line["learning_rate"] = s.learningRate;
            line["gradient_norm"] = s.gradientNorm;
            line["tokens_per_second"] = tokensPerSecond / averaged;
            print(line);
            std::cout.flush();
            loss = tokensPerSecond = 0;
            averaged = 0;
        }
    }
    if (Status s = trainer.writeModelFolder(out, name); !s.ok()) throw Failure{kExitInput, s.error()};
    return 0;
}

const bool registered = registerCommand({"train-gru", "train the recurrent baseline (a GRU language model) on a text file and write its folder", declare, run});

} // namespace
} // namespace attnscope::cli::trainGruCommand
