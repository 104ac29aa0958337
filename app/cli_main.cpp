// attnscope-cli: the command-line parser and the commands that print core results as JSON.
// Exit codes: 0 success, 1 bad input or model, 2 bad usage. Errors go to stderr as "error: <sentence>".
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attentionsettings.h"
#include "forward.h"
#include "jsonexport.h"
#include "model.h"
#include "saturation.h"

using namespace attnscope;

namespace {

constexpr int kExitInput = 1;
constexpr int kExitUsage = 2;
constexpr std::size_t kMaxTextBytes = 16u << 20;  // refuse text files past 16 MB rather than read them whole

struct Failure {
    int code;
    std::string message;
};

const char* kUsage =
    "usage: attnscope-cli COMMAND [OPTIONS]\n"
    "commands:\n"
    "  attention --text TEXT [--model SPEC] [--mask causal|none] [--block-keys 3,5]\n"
    "            [--scaling sqrt-dk|none] [--temperature T] [--positional default|sinusoidal|learned|none] [--stats]\n"
    "  tokenize  --text TEXT [--model SPEC]\n"
    "  info      [--model SPEC]\n"
    "  sweep     --text TEXT --layer L --head H [--model SPEC] [settings as for attention]\n"
    "--text-file FILE (or - for standard input) may stand wherever --text does.\n"
    "SPEC: random[:layers=2,heads=4,d_model=64,seed=1] or builtin.\n";

// Options that take a value, and flags that do not, per command.
struct CommandSpec {
    std::set<std::string> valued;
    std::set<std::string> flags;
};

const std::map<std::string, CommandSpec>& commands()
{
    static const std::set<std::string> settingsOptions = {"--mask", "--block-keys", "--scaling", "--temperature", "--positional"};
    static const std::map<std::string, CommandSpec> table = [] {
        std::map<std::string, CommandSpec> t;
        CommandSpec attention{{"--model", "--text", "--text-file"}, {"--stats"}};
        attention.valued.insert(settingsOptions.begin(), settingsOptions.end());
        t["attention"] = attention;
        t["tokenize"] = {{"--model", "--text", "--text-file"}, {}};
        t["info"] = {{"--model"}, {}};
        CommandSpec sweep{{"--model", "--text", "--text-file", "--layer", "--head"}, {}};
        sweep.valued.insert(settingsOptions.begin(), settingsOptions.end());
        t["sweep"] = sweep;
        return t;
    }();
    return table;
}

struct Args {
    std::string command;
    std::map<std::string, std::string> values;
    std::set<std::string> flags;

    bool has(const std::string& key) const { return values.count(key) || flags.count(key); }
    std::string get(const std::string& key, const std::string& fallback = {}) const
    {
        auto it = values.find(key);
        return it == values.end() ? fallback : it->second;
    }
};

Args parseArgs(int argc, char** argv)
{
    if (argc < 2) throw Failure{kExitUsage, "no command given."};
    Args args;
    args.command = argv[1];
    if (args.command == "--help" || args.command == "-h" || args.command == "help") {
        std::cout << kUsage;
        std::exit(0);
    }
    auto found = commands().find(args.command);
    if (found == commands().end()) throw Failure{kExitUsage, "unknown command '" + args.command + "'."};
    const CommandSpec& spec = found->second;
    for (int i = 2; i < argc; ++i) {
        const std::string key = argv[i];
        if (spec.flags.count(key)) {
            args.flags.insert(key);
        } else if (spec.valued.count(key)) {
            if (i + 1 >= argc) throw Failure{kExitUsage, key + " needs a value."};
            if (args.values.count(key)) throw Failure{kExitUsage, key + " is given twice."};
            args.values[key] = argv[++i];
        } else {
            throw Failure{kExitUsage, "'" + key + "' is not an option of '" + args.command + "'."};
        }
    }
    if (args.has("--text") && args.has("--text-file"))
        throw Failure{kExitUsage, "give --text or --text-file, not both."};
    return args;
}

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
            if (text.size() > kMaxTextBytes)
                throw Failure{kExitInput, "the text in '" + path + "' is longer than 16 MB."};
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

template <class T>
T orFail(Result<T> r, int code = kExitUsage)
{
    if (!r) throw Failure{code, r.error()};
    return std::move(*r);
}

AttentionSettings readSettings(const Args& args)
{
    AttentionSettings s;
    if (args.has("--mask")) s.mask = orFail(parseMask(args.get("--mask")));
    if (args.has("--block-keys")) s.blockedKeys = orFail(parseBlockedKeys(args.get("--block-keys")));
    if (args.has("--scaling")) s.scaling = orFail(parseScaling(args.get("--scaling")));
    if (args.has("--temperature")) s.temperature = orFail(parseTemperature(args.get("--temperature")));
    if (args.has("--positional")) s.positional = orFail(parsePositional(args.get("--positional")));
    return s;
}

TokenizedText tokenize(const Model& model, const std::string& text)
{
    return orFail(model.tokenizer->encode(text), kExitInput);
}

void print(const nlohmann::ordered_json& j)
{
    // Token strings are valid UTF-8 by construction; "replace" keeps a stray byte from aborting the dump.
    std::cout << j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
}

int cmdInfo(const Args& args)
{
    print(json::modelInfo(*openModel(args)));
    return 0;
}

int cmdTokenize(const Args& args)
{
    const std::string text = readText(args);
    ModelPtr model = openModel(args);
    print(json::tokens(tokenize(*model, text)));
    return 0;
}

int cmdAttention(const Args& args)
{
    const AttentionSettings settings = readSettings(args);
    const std::string text = readText(args);
    ModelPtr model = openModel(args);
    const TokenizedText tokens = tokenize(*model, text);
    for (int key : settings.blockedKeys)
        if (key >= static_cast<int>(tokens.ids.size()))
            throw Failure{kExitInput, "blocked key " + std::to_string(key) + " is past the last token (the text has " +
                                          std::to_string(tokens.ids.size()) + " tokens, numbered from 0)."};
    Result<ForwardTrace> trace = forward(*model, tokens.ids, settings);
    if (!trace) throw Failure{kExitInput, trace.error()};

    nlohmann::ordered_json out;
    out["model"] = json::modelSummary(model->config);
    out["tokens"] = tokens.tokens;
    out["token_ids"] = tokens.ids;
    out["settings"] = json::settings(settings);
    out["attention"] = json::attention(*trace);
    if (args.has("--stats")) out["stats"] = json::stats(*trace);
    print(out);
    return 0;
}

// The saturation sweep of one head: its statistics against the score multiplier m (scores = m Q K^T).
int cmdSweep(const Args& args)
{
    auto index = [&](const std::string& key) {
        if (!args.has(key)) throw Failure{kExitUsage, "'sweep' needs " + key + "."};
        const std::string text = args.get(key);
        std::size_t used = 0;
        int value = -1;
        try {
            value = std::stoi(text, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || used != text.size()) throw Failure{kExitUsage, key + " must be a whole number, not '" + text + "'."};
        return value;
    };
    const int layer = index("--layer"), head = index("--head");
    const AttentionSettings settings = readSettings(args);
    const std::string text = readText(args);
    ModelPtr model = openModel(args);
    const ModelConfig& c = model->config;
    if (layer < 0 || layer >= c.layers)
        throw Failure{kExitInput, "layer " + std::to_string(layer) + " does not exist (the model has " +
                                      std::to_string(c.layers) + " layers, numbered from 0)."};
    if (head < 0 || head >= c.heads)
        throw Failure{kExitInput, "head " + std::to_string(head) + " does not exist (the model has " +
                                      std::to_string(c.heads) + " heads per layer, numbered from 0)."};
    const TokenizedText tokens = tokenize(*model, text);
    for (int key : settings.blockedKeys)
        if (key >= static_cast<int>(tokens.ids.size()))
            throw Failure{kExitInput, "blocked key " + std::to_string(key) + " is past the last token (the text has " +
                                          std::to_string(tokens.ids.size()) + " tokens, numbered from 0)."};
    CaptureRequest capture;
    capture.allAttention = false;
    capture.detail = HeadSelection{layer, head};
    Result<ForwardTrace> trace = forward(*model, tokens.ids, settings, capture);
    if (!trace) throw Failure{kExitInput, trace.error()};
    const SaturationSweep s = saturationSweep(trace->detail.scores, attentionMask(settings, trace->tokens), c.dHead,
                                              settings.multiplier(c.dHead));
    nlohmann::ordered_json out;
    out["multipliers"] = s.multipliers;
    out["entropy"] = s.entropy;
    out["max_weight"] = s.maxWeight;
    out["jacobian_norm"] = s.jacobianNorm;
    out["baseline_entropy"] = s.baselineEntropy;
    out["current"] = s.current;
    print(out);
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    try {
        const Args args = parseArgs(argc, argv);
        if (args.command == "info") return cmdInfo(args);
        if (args.command == "tokenize") return cmdTokenize(args);
        if (args.command == "attention") return cmdAttention(args);
        if (args.command == "sweep") return cmdSweep(args);
        throw Failure{kExitUsage, "unknown command '" + args.command + "'."};
    } catch (const Failure& f) {
        std::cerr << "error: " << f.message << '\n';
        if (f.code == kExitUsage) std::cerr << kUsage;
        return f.code;
    } catch (const std::bad_alloc&) {
        std::cerr << "error: out of memory.\n";
        return kExitInput;
    } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << '\n';
        return kExitInput;
    }
}
