// attnscope-cli: the command-line parser and the commands that print core results as JSON.
// Exit codes: 0 success, 1 bad input or model, 2 bad usage. Errors go to stderr as "error: <sentence>".
#include <algorithm>
#include <chrono>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <QApplication>
#include <charconv>
#include <nlohmann/json.hpp>

#include "model/attentionsettings.h"
#include "common/document.h"
#include "model/forward.h"
#include "io/jsonexport.h"
#include "model/model.h"
#include "model/nexttokens.h"
#include "analysis/saturation.h"
#include "window/renderer.h"

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
    "            [--top-k K]\n"
    "  tokenize  --text TEXT [--model SPEC]\n"
    "  trace     --text TEXT --layer L --head H [--model SPEC] [settings as for attention]\n"
    "  info      [--model SPEC]\n"
    "  bench     --tokens N [--repeat R] [--threads K] [--model SPEC]\n"
    "  sweep     --text TEXT --layer L --head H [--model SPEC] [settings as for attention]\n"
    "  render    --text TEXT --view VIEW --out FILE.png|.svg|.pdf [--model SPEC] [--layer L] [--head H]\n"
    "            VIEW: heatmap grid saturation why-sqrt-dk jacobian histogram dashboard compare\n"
    "                  pipeline cell heads block positional cross cost\n"
    "            [--query I --key J] (cell) [--source TEXT] (cross)\n"
    "            [--width W] [--height H] [attention settings as above]\n"
    "--text-file FILE (or - for standard input) may stand wherever --text does.\n"
    "SPEC: random[:layers=2,heads=4,d_model=64,seed=1], builtin, or a GPT-2 model folder\n"
    "      (config.json, model.safetensors, vocab.json + merges.txt or tokenizer.json).\n";

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
        CommandSpec attention{{"--model", "--text", "--text-file", "--top-k"}, {"--stats"}};
        attention.valued.insert(settingsOptions.begin(), settingsOptions.end());
        t["attention"] = attention;
        t["tokenize"] = {{"--model", "--text", "--text-file"}, {}};
        t["info"] = {{"--model"}, {}};
        t["bench"] = {{"--model", "--tokens", "--repeat", "--threads"}, {}};
        CommandSpec trace{{"--model", "--text", "--text-file", "--layer", "--head"}, {}};
        trace.valued.insert(settingsOptions.begin(), settingsOptions.end());
        t["trace"] = trace;
        CommandSpec sweep{{"--model", "--text", "--text-file", "--layer", "--head"}, {}};
        sweep.valued.insert(settingsOptions.begin(), settingsOptions.end());
        t["sweep"] = sweep;
        CommandSpec render{{"--model", "--text", "--text-file", "--view", "--layer", "--head", "--out", "--width", "--height",
                            "--query", "--key", "--source"}, {}};
        render.valued.insert(settingsOptions.begin(), settingsOptions.end());
        t["render"] = render;
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

// A whole number in [1, max] for an option, or a usage error naming the option.
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

void checkBlockedKeys(const AttentionSettings& settings, const TokenizedText& tokens)
{
    for (int key : settings.blockedKeys)
        if (key >= static_cast<int>(tokens.ids.size()))
            throw Failure{kExitInput, "blocked key " + std::to_string(key) + " is past the last token (the text has " +
                                          std::to_string(tokens.ids.size()) + " tokens, numbered from 0)."};
}

// A whole number option in [lo, hi]; `what` names it in the error.
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

int cmdAttention(const Args& args)
{
    const AttentionSettings settings = readSettings(args);
    const int topCount = readCount(args, "--top-k", 0, 1 << 20);
    const std::string text = readText(args);
    ModelPtr model = openModel(args);
    const TokenizedText tokens = tokenize(*model, text);
    checkBlockedKeys(settings, tokens);
    CaptureRequest capture;
    capture.nextTokenLogits = topCount > 0;
    Result<ForwardTrace> trace = forward(*model, tokens.ids, settings, capture);
    if (!trace) throw Failure{kExitInput, trace.error()};

    nlohmann::ordered_json out;
    out["model"] = json::modelSummary(model->config);
    out["tokens"] = tokens.tokens;
    out["token_ids"] = tokens.ids;
    out["settings"] = json::settings(settings);
    out["attention"] = json::attention(*trace);
    if (args.has("--stats")) out["stats"] = json::stats(*trace);
    if (topCount > 0) {
        nlohmann::ordered_json next = nlohmann::ordered_json::array();
        for (const NextToken& n : topK(*trace, *model->tokenizer, topCount))
            next.push_back({{"token", n.token}, {"id", n.id}, {"p", n.p}});
        out["next_tokens"] = std::move(next);
    }
    print(out);
    return 0;
}

// Times full forward passes that keep every layer's and head's attention weights. Token ids are 0..N-1
// modulo the vocabulary; one untimed pass warms the workspace so the timed ones do not allocate.
int cmdBench(const Args& args)
{
    if (!args.has("--tokens")) throw Failure{kExitUsage, "'bench' needs --tokens N."};
    const int tokens = readCount(args, "--tokens", 0, 1 << 20);
    const int repeat = readCount(args, "--repeat", 5, 10000);
    const int threads = readCount(args, "--threads", 1, 1024);
    ModelPtr model = openModel(args);
    // Eigen uses more than one thread only when built with OpenMP; nbThreads() reports what it will really use.
    Eigen::setNbThreads(threads);
    const int used = Eigen::nbThreads();
    if (used != threads) std::cerr << "warning: this build runs the forward pass on " << used << " thread(s).\n";

    std::vector<int> ids(static_cast<std::size_t>(tokens));
    for (int i = 0; i < tokens; ++i) ids[static_cast<std::size_t>(i)] = i % model->config.vocabSize;
    const AttentionSettings settings;
    CaptureRequest capture;
    capture.allAttention = true;
    ForwardTrace trace;
    Workspace workspace;
    if (Status s = forward(*model, ids, settings, capture, trace, workspace); !s.ok()) throw Failure{kExitInput, s.error};

    std::vector<double> ms;
    for (int r = 0; r < repeat; ++r) {
        const auto start = std::chrono::steady_clock::now();
        forward(*model, ids, settings, capture, trace, workspace);
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(ms.begin(), ms.end());
    const double median = ms.size() % 2 ? ms[ms.size() / 2] : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
    nlohmann::ordered_json out;
    out["tokens"] = tokens;
    out["threads"] = used;
    out["forward_ms_median"] = median;
    out["forward_ms_min"] = ms.front();
    print(out);
    return 0;
}

// --layer and --head: a malformed or missing (when required) value is bad usage (exit 2); a head the model
// does not have is bad input (exit 1). Absent and optional means 0.
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

// What trace and sweep share: the settings, the text and the model from the arguments, and a forward that
// keeps only the --layer/--head pipeline.
struct OneHead {
    AttentionSettings settings;
    ModelPtr model;
    ForwardTrace trace;
};

OneHead runOneHead(const Args& args)
{
    OneHead run;
    run.settings = readSettings(args);
    const std::string text = readText(args);
    run.model = openModel(args);
    CaptureRequest capture;
    capture.allAttention = false;
    capture.detail = readHead(args, run.model->config, true);
    const TokenizedText tokens = tokenize(*run.model, text);
    checkBlockedKeys(run.settings, tokens);
    Workspace workspace;
    if (Status s = forward(*run.model, tokens.ids, run.settings, capture, run.trace, workspace); !s.ok())
        throw Failure{kExitInput, s.error};
    return run;
}

// The focused head's pipeline, every matrix as a list of rows (masked entries of "masked" as null).
int cmdTrace(const Args& args)
{
    const OneHead run = runOneHead(args);
    const HeadDetail& d = run.trace.detail;
    nlohmann::ordered_json out;
    out["x"] = json::matrix(d.x);
    out["q"] = json::matrix(d.q);
    out["k"] = json::matrix(d.k);
    out["v"] = json::matrix(d.v);
    out["scores"] = json::matrix(d.scores);
    out["scaled"] = json::matrix(d.scaled);
    out["masked"] = json::matrix(d.masked);
    out["weights"] = json::matrix(d.weights);
    out["head_output"] = json::matrix(d.headOutput);
    out["concat"] = json::matrix(d.concat);
    out["attn_output"] = json::matrix(d.attnOutput);
    print(out);
    return 0;
}

// The saturation sweep of one head: its statistics against the score multiplier m (scores = m Q K^T).
int cmdSweep(const Args& args)
{
    const OneHead run = runOneHead(args);
    const int dHead = run.model->config.dHead;
    const SaturationSweep s = saturationSweep(run.trace.detail.scores, attentionMask(run.settings, run.trace.tokens),
                                              dHead, run.settings.multiplier(dHead));
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

// Draws one of the window's views offscreen, through the same Document the window uses.
int cmdRender(const Args& args, char* program)
{
    if (!args.has("--view")) throw Failure{kExitUsage, "'render' needs --view."};
    if (!args.has("--out")) throw Failure{kExitUsage, "'render' needs --out FILE."};
    const AttentionSettings settings = readSettings(args);
    const std::string text = readText(args);
    ModelPtr model = openModel(args);
    checkBlockedKeys(settings, tokenize(*model, text));
    const HeadSelection focus = readHead(args, model->config, false);
    RenderOptions options;
    options.outPath = QString::fromStdString(args.get("--out"));
    options.width = readInt(args, "--width", options.width, 16, 16384, "width");
    options.height = readInt(args, "--height", options.height, 16, 16384, "height");
    options.query = readInt(args, "--query", -1, 0, 1 << 20, "query");
    options.key = readInt(args, "--key", -1, 0, 1 << 20, "key");
    if (args.has("--source")) options.source = QString::fromStdString(args.get("--source"));

    // Widgets need a platform; a terminal or a CI job has no display, so render offscreen. Qt's own
    // chatter about that platform (runtime dirs, size hints) is not for the user of a command-line tool:
    // keep stderr for our one-sentence errors and Qt's critical messages.
    qputenv("QT_QPA_PLATFORM", "offscreen");
    qInstallMessageHandler([](QtMsgType type, const QMessageLogContext&, const QString& message) {
        if (type == QtCriticalMsg || type == QtFatalMsg) std::cerr << "qt: " << message.toStdString() << '\n';
    });
    int qtArgc = 1;
    char* qtArgv[] = {program, nullptr};
    QApplication app(qtArgc, qtArgv);

    Document document;
    document.setModel(model);
    document.setSettings(settings);
    document.setFocus(focus);
    document.setText(QString::fromStdString(text));
    const RenderStatus status = renderView(QString::fromStdString(args.get("--view")), document, options);
    if (!status.ok()) throw Failure{status.usage ? kExitUsage : kExitInput, status.error};
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
        if (args.command == "bench") return cmdBench(args);
        if (args.command == "trace") return cmdTrace(args);
        if (args.command == "sweep") return cmdSweep(args);
        if (args.command == "render") return cmdRender(args, argv[0]);
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
