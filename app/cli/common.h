#pragma once
// What several commands share: the exit codes and the Failure that carries them to main(), reading the
// text, the model, the attention settings and the focused head from the arguments, and printing JSON.
// Exit codes: 0 success, 1 bad input or model, 2 bad usage. Errors go to stderr as "error: <sentence>".
#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "command.h"
#include "core/model/attentionsettings.h"
#include "core/model/forward.h"
#include "core/model/model.h"
#include "core/result.h"
#include "core/text/words.h"

namespace attnscope {
struct HeadRoleScores;
struct RoleScores;
}

namespace attnscope::cli {

constexpr int kExitInput = 1;
constexpr int kExitUsage = 2;

// Thrown by commands and the readers below; main() prints the message and returns the code.
struct Failure {
    int code;
    std::string message;
};

template <class T>
T orFail(Result<T> r, int code = kExitUsage)
{
    if (!r) throw Failure{code, r.error()};
    return std::move(*r);
}

// --text, or the contents of --text-file (- for standard input); at most 16 MB.
std::string readText(const Args& args);
// --model or the default model; load warnings go to stderr.
ModelPtr openModel(const Args& args);
// The same, then --ablate-kv's groups added to the settings' ablated heads (ablateKeyValueGroups).
ModelPtr openModel(const Args& args, AttentionSettings& settings);
// --ablate-kv L.G,L.G: every query head that reads key/value head G of layer L joins settings.ablated, in
// every ablation mode, as if each had been named with --ablate. Fails with kExitInput for a group the model
// does not have.
void ablateKeyValueGroups(const Args& args, const ModelConfig& config, AttentionSettings& settings);
// --mask, --block-keys, --scaling, --temperature, --positional, --ablate, --ablate-mode, each replacing
// that field of `base` (the defaults, or a scene's settings).
AttentionSettings readSettings(const Args& args, AttentionSettings base = {});
// Without --mask, a model runs under the mask it was trained with: none for encoders, causal for decoders.
void useTrainingMaskUnlessGiven(const Args& args, const Model& model, AttentionSettings& settings);
// An encoder–decoder's decoder on a given --text, by core's rule (decoderSettings): as trained, or with
// --mask none the counterfactual in which every target token sees the whole target. A window or sinks fail
// with kExitUsage: the decoder was trained seeing its whole past, and the window offers no such setting.
AttentionSettings readDecoderSettings(const Args& args, const AttentionSettings& settings);
TokenizedText tokenize(const Model& model, const std::string& text);
// A blocked key past the text is bad input.
void checkBlockedKeys(const AttentionSettings& settings, const TokenizedText& tokens);

// What most commands start from: the settings, the model and the tokenized text (blocked keys checked).
// With `textRequired` false and neither --text nor --text-file given, the tokens are empty.
struct Input {
    AttentionSettings settings;
    ModelPtr model;
    std::string text;
    TokenizedText tokens;
};
Input readInput(const Args& args, bool textRequired = true);

// A forward pass that fails as bad input.
ForwardTrace runForward(const Input& input, const CaptureRequest& capture = {});

// A whole number in [1, max] for an option, or a usage error naming the option.
int readCount(const Args& args, const std::string& key, int fallback, int max);
// A number strictly between lo and hi for an option, or a usage error naming the option.
double readNumber(const Args& args, const std::string& key, double fallback, double lo, double hi);
// A whole number option in [lo, hi]; malformed is usage, out of range is input. `what` names it.
int readInt(const Args& args, const std::string& key, int fallback, int lo, int hi, const std::string& what);
// --layer and --head: malformed or missing (when required) is usage; a head the model lacks is input.
HeadSelection readHead(const Args& args, const ModelConfig& config, bool required);

// What trace and sweep share: the settings, the text and the model from the arguments, and a forward
// that keeps only the --layer/--head pipeline.
struct OneHead {
    AttentionSettings settings;
    ModelPtr model;
    std::string text;
    TokenizedText tokens;
    ForwardTrace trace;
};
OneHead runOneHead(const Args& args);

// --words: the words a text's tokens make (text/words.h) as "words" and "word_of_token" (each name after
// `prefix`, "source_" for an encoder–decoder's source), and a set of heads' weights merged into words by
// Clark et al.'s rule (analysis/wordattention.h) as [layer][head][query word][key word].
void addWords(nlohmann::ordered_json& out, const TextWords& words, const std::string& prefix = "");
nlohmann::ordered_json wordAttention(int layers, int heads, const std::function<const Matrix&(int, int)>& weights,
                                     const TextWords& queries, const TextWords& keys);

// One line of JSON on stdout.
void print(const nlohmann::ordered_json& j);
// How this process computes: {"kernels" (the kernel set the pass runs on), "kernel_choice" (why, and
// what the processor offers), "available_kernels", "tuning" (the kernels' block sizes and prefetch distance
// for this machine's caches), "threads"}; `bench` and `info --verbose` print it.
nlohmann::ordered_json computeSetup();

// Each role's score under its key in `into`, null where the text could not measure it.
void putRoleScores(nlohmann::ordered_json& into, const RoleScores& scores);
// The rows the heads command prints, one per head in layer order: {"layer", "head", "kv_head" (the key/value
// head it reads), and each role's score as putRoleScores puts it}. The checkpoints command prints the same rows.
nlohmann::ordered_json headRoleRows(const HeadRoleScores& roles, const ModelConfig& config);
// --seed for the head-role probe: a whole number from 0 up, 1 when not given.
std::uint64_t readProbeSeed(const Args& args);

} // namespace attnscope::cli
