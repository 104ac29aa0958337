// attnscope-cli train: trains the project's own GPT-2-style decoder on a text file and writes a model
// folder that --model DIR opens. Progress is one JSON line per report on stdout.
#include <filesystem>
#include <iostream>

#include "common.h"
#include "core/text/filetext.h"
#include "core/train/trainer.h"

namespace attnscope::cli::trainCommand {
namespace {

namespace fs = std::filesystem;

void declare(Options& o)
{
    o.value("--corpus", "FILE", "the training text, one document per line (required)");
    o.value("--out", "DIR", "the model folder to write (required)");
    o.value("--layers", "L", "blocks (3 by default)");
    o.value("--heads", "H", "heads per block (4 by default)");
    o.value("--d-model", "D", "width of the residual stream (96 by default)");
    o.value("--d-ff", "F", "width of the feed-forward layer (4 D by default)");
    o.value("--context", "C", "longest input the model accepts (128 by default)");
    o.value("--vocab-size", "V", "at most this many tokens, <bos> and <unk> included (4096 by default)");
    o.value("--steps", "N", "optimisation steps (3000 by default)");
    o.value("--batch", "B", "sequences per step (32 by default)");
    o.value("--sequence-length", "T", "tokens per training sequence (64 by default, at most the context)");
    o.value("--learning-rate", "LR", "peak learning rate (0.003 by default)");
    o.value("--warmup", "N", "warm-up steps (100 by default)");
    o.value("--seed", "S", "seed of the initial weights and the batches (1 by default)");
    o.value("--threads", "K", "threads (2 by default; the result does not depend on it)");
    o.value("--log-every", "N", "print progress every N steps (50 by default)");
    o.value("--save-every", "N", "write the model and the training state every N steps (500 by default)");
    o.value("--checkpoints", "DIR", "also keep the model at each save (and before the first step) as DIR/stepN, a series for Research > Checkpoints");
    o.flag("--resume", "continue the run whose training state is in --out");
}

int run(const Args& args)
{
    if (!args.has("--corpus")) throw Failure{kExitUsage, "'train' needs --corpus FILE."};
    if (!args.has("--out")) throw Failure{kExitUsage, "'train' needs --out DIR."};
    const std::string out = args.get("--out");
    train::TrainOptions o;
    train::NetworkConfig& n = o.network;
    n.layers = readCount(args, "--layers", 3, 48);
    n.heads = readCount(args, "--heads", 4, 64);
    n.dModel = readCount(args, "--d-model", 96, 4096);
    n.dFF = readCount(args, "--d-ff", 4 * n.dModel, 16384);
    n.context = readCount(args, "--context", 128, 8192);
    const int vocabSize = readCount(args, "--vocab-size", train::kDefaultVocabularySize, int(kMaxVocabularyEntries));
    o.steps = readCount(args, "--steps", 3000, 10'000'000);
    o.batchSequences = readCount(args, "--batch", 32, 4096);
    o.sequenceLength = readCount(args, "--sequence-length", std::min(64, n.context), 8192);
    o.learningRate = readNumber(args, "--learning-rate", 3e-3, 0.0, 1.0);
    o.minLearningRate = o.learningRate / 10;
    o.warmupSteps = readCount(args, "--warmup", 100, 1'000'000);
    o.seed = static_cast<std::uint64_t>(readCount(args, "--seed", 1, 1 << 30));
    o.threads = readCount(args, "--threads", 2, 256);
    o.shards = std::min(4, o.batchSequences);
    const int logEvery = readCount(args, "--log-every", 50, 1'000'000);
    const int saveEvery = readCount(args, "--save-every", 500, 10'000'000);

    Result<std::string> corpus = readSmallFile(args.get("--corpus"), kMaxCorpusBytes);
    if (!corpus) throw Failure{kExitInput, corpus.error()};
    // A resumed run reads the vocabulary it was started with; a new one derives it from the corpus.
    const std::string vocabularyFile = args.has("--resume") ? (fs::path(out) / "vocab.txt").string() : std::string();
    train::PreparedCorpus prepared = orFail(train::prepareCorpus(*corpus, vocabSize, o.sequenceLength, vocabularyFile), kExitInput);
    corpus->clear();
    const std::shared_ptr<const VocabTokenizer>& tokenizer = prepared.tokenizer;
    const std::shared_ptr<const train::TrainingData>& shared = prepared.data;

    Result<std::unique_ptr<train::Trainer>> made = args.has("--resume") ? train::Trainer::resume(out, o, tokenizer, shared)
                                                                        : train::Trainer::create(o, tokenizer, shared);
    if (!made) throw Failure{args.has("--resume") ? kExitInput : kExitUsage, made.error()};
    train::Trainer& trainer = **made;
    const std::string name = fs::path(out).filename().empty() ? fs::path(out).parent_path().filename().string()
                                                              : fs::path(out).filename().string();
    const std::string checkpoints = args.has("--checkpoints") ? args.get("--checkpoints") : std::string();
    // Each kept checkpoint is a model folder of its own, named by its step as Pythia's revisions are.
    auto keep = [&] {
        if (checkpoints.empty()) return;
        const std::string folder = (fs::path(checkpoints) / ("step" + std::to_string(trainer.stepsDone()))).string();
        if (Status s = trainer.writeModelFolder(folder, name); !s.ok()) throw Failure{kExitInput, s.error()};
    };
    auto save = [&] {
        if (Status s = trainer.writeModelFolder(out, name); !s.ok()) throw Failure{kExitInput, s.error()};
        if (Status s = trainer.writeState(out); !s.ok()) throw Failure{kExitInput, s.error()};
        keep();
    };
    nlohmann::ordered_json start;
    start["corpus_tokens"] = shared->tokens.size();
    start["documents"] = shared->documentStarts.size();
    start["vocabulary"] = tokenizer->vocabSize();
    start["unknown_tokens"] = shared->unknownTokens;
    start["parameters"] = trainer.parameters().size();
    start["start_step"] = trainer.stepsDone();
    print(start);

    if (trainer.stepsDone() == 0) keep();

    double loss = 0, tokensPerSecond = 0;
    int averaged = 0;
    while (!trainer.finished()) {
        const train::StepReport r = trainer.step();
        loss += r.loss;
        tokensPerSecond += r.tokensPerSecond;
        ++averaged;
        if (r.step % logEvery == 0 || trainer.finished()) {
            nlohmann::ordered_json line;
            line["step"] = r.step;
            line["loss"] = loss / averaged;  // mean over the steps since the last line
            line["learning_rate"] = r.learningRate;
            line["gradient_norm"] = r.gradientNorm;
            line["tokens_per_second"] = tokensPerSecond / averaged;
            print(line);
            std::cout.flush();
            loss = tokensPerSecond = 0;
            averaged = 0;
        }
        if (r.step % saveEvery == 0 && !trainer.finished()) save();
    }
    save();
    return 0;
}

const bool registered = registerCommand({"train", "train a small GPT-2-style model on a text file and write its folder", declare, run});

} // namespace
} // namespace attnscope::cli::trainCommand
