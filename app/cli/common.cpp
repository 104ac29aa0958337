#include "common.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <iostream>

#include "core/analysis/wordattention.h"
#include "core/compute/kernels/kernelset.h"
#include "core/compute/threadpool.h"
#include "core/dataexport/jsonexport.h"
#include "core/limits.h"
#include "core/model/encoderdecoder.h"
#include "core/model/trainingmask.h"
#include "core/open/openmodel.h"
#include "core/research/headroles.h"

namespace attnscope::cli {

std::string readText(const Args& args)
{
    if (args.has("--text")) return args.get("--text");
    if (!args.has("--text-file")) throw Failure{kExitUsage, "'" + args.command + "' needs --text or --text-file."};
    const std::string path = args.get("--text-file");
    std::string text;
    auto readAll = [&](std::istream& in) {
        char buffer[65536];
        while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
            text.append(buffer, static_cast<std::size_t>(in.gcount()));
            if (text.size() > kMaxTextFileBytes)
                throw Failure{kExitInput, "the text in '" + path + "' is longer than " + std::to_string(kMaxTextFileBytes >> 20) + " MB."};
        }
    };
    if (path == "-") {
        readAll(std::cin);
    } else {
        std::ifstream in(path, std::ios::binary);
        if (!in) throw Failure{kExitInput, "cannot open the text file '" + path + "'."};
        readAll(in);
    }
    return text;
}

ModelPtr openModel(const Args& args)
{
    Result<ModelPtr> model = loadModel(args.get("--model", defaultModelSpec()));
    if (!model) throw Failure{kExitInput, model.error()};
    for (const std::string& warning : (*model)->warnings) std::cerr << "warning: " << warning << '\n';
    return *model;
}

ModelPtr openModel(const Args& args, AttentionSettings& settings)
{
    ModelPtr model = openModel(args);
    ablateKeyValueGroups(args, model->config, settings);
    return model;
}

namespace {

// --ablate-kv's pairs, read as --ablate's are; a malformed list fails before any model loads.
std::vector<AblatedHead> keyValueGroupsGiven(const Args& args)
{
    if (!args.has("--ablate-kv")) return {};
    Result<std::vector<AblatedHead>> groups = parseAblatedHeads(args.get("--ablate-kv"));
    if (!groups)
        throw Failure{kExitInput, "--ablate-kv must be layer.group pairs like 0.1,1.0 (L.G, a key/value head of that layer), not '" +
                                      args.get("--ablate-kv") + "'."};
    return std::move(*groups);
}

} // namespace

void ablateKeyValueGroups(const Args& args, const ModelConfig& config, AttentionSettings& settings)
{
    const std::vector<AblatedHead> groups = keyValueGroupsGiven(args);
    if (groups.empty()) return;
    const std::vector<AblatedHead> heads = orFail(headsOfKeyValueGroups(config, groups), kExitInput);
    settings.ablated.insert(settings.ablated.end(), heads.begin(), heads.end());
    std::sort(settings.ablated.begin(), settings.ablated.end());
    settings.ablated.erase(std::unique(settings.ablated.begin(), settings.ablated.end()), settings.ablated.end());
}

AttentionSettings readSettings(const Args& args, AttentionSettings base)
{
    AttentionSettings s = std::move(base);
    if (args.has("--mask")) applyMask(s, orFail(parseMaskSetting(args.get("--mask"))));
    if (args.has("--block-keys")) s.blockedKeys = orFail(parseBlockedKeys(args.get("--block-keys")));
    if (args.has("--scaling")) s.scaling = orFail(parseScaling(args.get("--scaling")));
    if (args.has("--temperature")) s.temperature = orFail(parseTemperature(args.get("--temperature")));
    if (args.has("--positional")) s.positional = orFail(parsePositional(args.get("--positional")));
    if (args.has("--max-tokens")) s.tokenLimit = orFail(parseTokenLimit(args.get("--max-tokens")));
    if (args.has("--ablate")) s.ablated = orFail(parseAblatedHeads(args.get("--ablate")));
    if (args.has("--ablate-mode")) s.ablationMode = orFail(parseAblationMode(args.get("--ablate-mode")));
    keyValueGroupsGiven(args);  // checked now; added to `ablated` once the model is known (openModel)
    return s;
}

void useTrainingMaskUnlessGiven(const Args& args, const Model& model, AttentionSettings& settings)
{
    if (!args.has("--mask")) settings.mask = trainingMask(model.config);
    patternsFollowTraining(settings, model.config);
}

AttentionSettings readDecoderSettings(const Args& args, const AttentionSettings& settings)
{
    if (settings.hasWindow() || settings.sparse.active())
        throw Failure{kExitUsage, "an encoder–decoder's decoder runs with the causal mask it was trained with or, with --mask none, "
                                  "unmasked; a window or a sparse pattern is for decoder-only models and encoders."};
    const bool unmasked = args.has("--mask") && settings.mask == MaskKind::None;
    return decoderSettings(settings, unmasked ? DecoderMask::Unmasked : DecoderMask::AsTrained);
}

TokenizedText tokenize(const Model& model, const std::string& text)
{
    return orFail(model.tokenizer->encode(text), kExitInput);
}

void checkBlockedKeys(const AttentionSettings& settings, const TokenizedText& tokens)
{
    for (int key : settings.blockedKeys)
        if (key >= static_cast<int>(tokens.ids.size()))
            throw Failure{kExitInput, "blocked key " + std::to_string(key) + " is past the last token (the text has " +
                                          std::to_string(tokens.ids.size()) + " tokens, numbered from 0)."};
}

Input readInput(const Args& args, bool textRequired)
{
    Input in;
    in.settings = readSettings(args);
    const bool hasText = args.has("--text") || args.has("--text-file");
    in.text = hasText || textRequired ? readText(args) : std::string();
    in.model = openModel(args, in.settings);
    useTrainingMaskUnlessGiven(args, *in.model, in.settings);
    if (hasText || textRequired) in.tokens = tokenize(*in.model, in.text);
    checkBlockedKeys(in.settings, in.tokens);
    return in;
}

ForwardTrace runForward(const Input& input, const CaptureRequest& capture)
{
    Result<ForwardTrace> trace = forward(*input.model, input.tokens.ids, input.settings, capture);
    if (!trace) throw Failure{kExitInput, trace.error()};
    return std::move(*trace);
}

int readCount(const Args& args, const std::string& key, int fallback, int max)
{
    if (!args.has(key)) return fallback;
    const std::string text = args.get(key);
    std::size_t used = 0;
    long value = 0;
    try {
        value = std::stol(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || value < 1 || value > max)
        throw Failure{kExitUsage, key + " must be a whole number from 1 to " + std::to_string(max) + ", not '" + text + "'."};
    return static_cast<int>(value);
}

double readNumber(const Args& args, const std::string& key, double fallback, double lo, double hi)
{
    if (!args.has(key)) return fallback;
    const std::string text = args.get(key);
    std::size_t used = 0;
    double value = 0;
    try {
        value = std::stod(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || !(value > lo && value < hi))
        throw Failure{kExitUsage, key + " must be a number between " + std::to_string(lo) + " and " + std::to_string(hi) +
                                      ", not '" + text + "'."};
    return value;
}

int readInt(const Args& args, const std::string& key, int fallback, int lo, int hi, const std::string& what)
{
    if (!args.has(key)) return fallback;
    const std::string text = args.get(key);
    int value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size())
        throw Failure{kExitUsage, key + " must be a whole number, not '" + text + "'."};
    if (value < lo || value > hi)
        throw Failure{kExitInput, what + " " + std::to_string(value) + " is out of range (" + std::to_string(lo) + " to " +
                                      std::to_string(hi) + ")."};
    return value;
}

HeadSelection readHead(const Args& args, const ModelConfig& c, bool required)
{
    auto read = [&](const std::string& key, int count, const char* what, const char* per) {
        if (!args.has(key)) {
            if (required) throw Failure{kExitUsage, "'" + args.command + "' needs " + key + "."};
            return 0;
        }
        const std::string text = args.get(key);
        int value = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc() || end != text.data() + text.size())
            throw Failure{kExitUsage, key + " must be a whole number, not '" + text + "'."};
        if (value < 0 || value >= count)
            throw Failure{kExitInput, std::string(what) + " " + std::to_string(value) + " does not exist (the model has " +
                                          std::to_string(count) + " " + what + "s" + per + ", numbered from 0)."};
        return value;
    };
    return {read("--layer", c.layers, "layer", ""), read("--head", c.heads, "head", " per layer")};
}

OneHead runOneHead(const Args& args)
{
    OneHead run;
    run.settings = readSettings(args);
    run.text = readText(args);
    run.model = openModel(args);
    useTrainingMaskUnlessGiven(args, *run.model, run.settings);
    CaptureRequest capture;
    capture.allAttention = false;
    capture.detail = readHead(args, run.model->config, true);
    run.tokens = tokenize(*run.model, run.text);
    checkBlockedKeys(run.settings, run.tokens);
    Workspace workspace;
    if (Status s = forward(*run.model, run.tokens.ids, run.settings, capture, run.trace, workspace); !s.ok())
        throw Failure{kExitInput, s.error()};
    return run;
}

void addWords(nlohmann::ordered_json& out, const TextWords& words, const std::string& prefix)
{
    out[prefix + "words"] = words.words;
    out[prefix + "word_of_token"] = words.wordOfToken;
}

nlohmann::ordered_json wordAttention(int layers, int heads, const std::function<const Matrix&(int, int)>& weights,
                                     const TextWords& queries, const TextWords& keys)
{
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (int l = 0; l < layers; ++l) {
        nlohmann::ordered_json layer = nlohmann::ordered_json::array();
        for (int h = 0; h < heads; ++h)
            layer.push_back(json::matrix(attnscope::wordAttention(weights(l, h), queries.wordOfToken, queries.count(),
                                                                  keys.wordOfToken, keys.count())));
        out.push_back(std::move(layer));
    }
    return out;
}

nlohmann::ordered_json computeSetup()
{
    nlohmann::ordered_json out;
    out["kernels"] = kernels::activeKernelSet().name;
    out["kernel_choice"] = kernels::kernelChoiceDescription();
    nlohmann::ordered_json available = nlohmann::ordered_json::array();
    for (const kernels::KernelSet* set : kernels::availableKernelSets()) available.push_back(set->name);
    out["available_kernels"] = available;
    out["tuning"] = kernels::tuningDescription();
    out["threads"] = ThreadPool::shared().threads();
    return out;
}

void print(const nlohmann::ordered_json& j)
{
    // Token strings are valid UTF-8 by construction; "replace" keeps a stray byte from aborting the dump.
    std::cout << j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
}

void putRoleScores(nlohmann::ordered_json& into, const RoleScores& scores)
{
    for (int r = 0; r < kHeadRoleCount; ++r) {
        const double score = roleScore(scores, static_cast<HeadRole>(r));
        if (std::isfinite(score)) into[roleKey(static_cast<HeadRole>(r))] = score;
        else into[roleKey(static_cast<HeadRole>(r))] = nullptr;
    }
}

nlohmann::ordered_json headRoleRows(const HeadRoleScores& roles, const ModelConfig& config)
{
    nlohmann::ordered_json heads = nlohmann::ordered_json::array();
    for (int l = 0; l < roles.layers; ++l)
        for (int h = 0; h < roles.heads; ++h) {
            nlohmann::ordered_json head = {{"layer", l}, {"head", h}, {"kv_head", config.kvHeadOf(h)}};
            putRoleScores(head, roles.at(l, h));
            heads.push_back(std::move(head));
        }
    return heads;
}

std::uint64_t readProbeSeed(const Args& args)
{
    if (!args.has("--seed")) return 1;
    const std::string text = args.get("--seed");
    std::uint64_t seed = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seed);
    if (ec != std::errc() || end != text.data() + text.size())
        throw Failure{kExitUsage, "--seed must be a whole number from 0 up, not '" + text + "'."};
    return seed;
}

} // namespace attnscope::cli
