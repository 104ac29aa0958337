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

#include <QApplication>
#include <charconv>
#include <nlohmann/json.hpp>

#include "attentionsettings.h"
#include "document.h"
#include "forward.h"
#include "jsonexport.h"
#include "model.h"
#include "renderer.h"

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
    "  render    --text TEXT --view heatmap|grid --out FILE.png|.svg|.pdf [--model SPEC] [--layer L] [--head H]\n"
    "            [--width W] [--height H] [attention settings as above]\n"
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
        CommandSpec render{{"--model", "--text", "--text-file", "--view", "--layer", "--head", "--out", "--width", "--height"}, {}};
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
    const std::string text = readText(args);
    ModelPtr model = openModel(args);
    const TokenizedText tokens = tokenize(*model, text);
    checkBlockedKeys(settings, tokens);
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

// Draws one of the window's views offscreen, through the same Document the window uses.
int cmdRender(const Args& args, char* program)
{
    if (!args.has("--view")) throw Failure{kExitUsage, "'render' needs --view."};
    if (!args.has("--out")) throw Failure{kExitUsage, "'render' needs --out FILE."};
    const AttentionSettings settings = readSettings(args);
    const std::string text = readText(args);
    ModelPtr model = openModel(args);
    checkBlockedKeys(settings, tokenize(*model, text));
    const HeadSelection focus{readInt(args, "--layer", 0, 0, model->config.layers - 1, "layer"),
                              readInt(args, "--head", 0, 0, model->config.heads - 1, "head")};
    RenderOptions options;
    options.outPath = QString::fromStdString(args.get("--out"));
    options.width = readInt(args, "--width", options.width, 16, 16384, "width");
    options.height = readInt(args, "--height", options.height, 16, 16384, "height");

    // Widgets need a platform; a terminal or a CI job has no display, so render offscreen.
    qputenv("QT_QPA_PLATFORM", "offscreen");
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
