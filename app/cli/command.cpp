#include "command.h"

#include <algorithm>
#include <sstream>

#include <CLI/CLI.hpp>

#include "common.h"

namespace attnscope::cli {

namespace {

std::vector<Command>& registry()
{
    static std::vector<Command> commands;  // a function-local static: safe whatever order files start in
    return commands;
}

} // namespace

Options& Options::value(const std::string& name, const std::string& typeName, const std::string& help)
{
    // Every value is kept (TakeAll) so that an option given twice is our error sentence, not CLI11's.
    CLI::Option* option = m_app.add_option(name, help)->type_name(typeName)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    m_declared.push_back({name, option, false});
    return *this;
}

Options& Options::positional(const std::string& name, const std::string& typeName, const std::string& help)
{
    CLI::Option* option = m_app.add_option(name, help)->type_name(typeName)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    m_declared.push_back({name, option, false});
    return *this;
}

Options& Options::flag(const std::string& name, const std::string& help)
{
    CLI::Option* option = m_app.add_flag(name)->description(help);
    m_declared.push_back({name, option, true});
    return *this;
}

Options& Options::model()
{
    return value("--model", "SPEC",
                 "builtin (the default), builtin-translator (the built-in encoder–decoder), random[:layers=2,heads=4,d_model=64,seed=1], "
                 "hf:ORG/NAME[@REVISION] (a model "
                 "in the Hugging Face cache; see the models command), or a model folder: GPT-2 (config.json, "
                 "model.safetensors, vocab.json + merges.txt or tokenizer.json), BERT/DistilBERT (config.json, "
                 "model.safetensors, vocab.txt or tokenizer.json), Llama, Qwen2, Mistral (config.json, "
                 "model.safetensors or its shards with model.safetensors.index.json, tokenizer.json), BART, Marian or T5");
}

Options& Options::text()
{
    value("--text", "TEXT", "the sentence to read");
    return value("--text-file", "FILE", "read the text from FILE instead (- for standard input)");
}

Options& Options::settings()
{
    value("--mask", "MASK",
          "the attention mask: causal, none, window:W (each query sees itself and the W-1 keys before it) or "
          "sinks:K,window:W (the first K keys as well); by default the model's own, causal for GPT-2, none for BERT. "
          "Or a sparse pattern inside the model's own mask (one-sided for GPT-2, two-sided for BERT): "
          "global:I,J,...;window:W (positions I, J see and are seen by every token, plus a window of W), "
          "dilated:W,D (W keys D apart, ending at the query), block:B (the query's own block of B positions) or "
          "random:R,SEED (itself and R other keys drawn per query from SEED)");
    value("--block-keys", "3,5", "key positions no query may attend to");
    value("--scaling", "sqrt-dk|none", "divide the scores by sqrt(d_k) or not (sqrt-dk by default)");
    value("--temperature", "T", "further divide the scores by T > 0 (1 by default)");
    value("--positional", "default|sinusoidal|learned|none", "the positional encoding (the model's by default)");
    value("--max-tokens", "N", "refuse text of more than N tokens (by default, and at most, the model's context)");
    value("--ablate", "L.H,L.H", "knock these heads out: their output before W_O is replaced");
    value("--ablate-kv", "L.G,L.G",
          "knock out every query head that reads key/value head G of layer L (grouped-query models: the whole group; "
          "elsewhere head G alone), as --ablate would each");
    return value("--ablate-mode", "zero|mean", "replace an ablated head's output by zeros or by its mean over the positions (zero by default)");
}

Options& Options::head(bool required)
{
    const std::string suffix = required ? "" : " (0 by default)";
    value("--layer", "L", "the layer, numbered from 0" + suffix);
    return value("--head", "H", "the head in that layer, numbered from 0" + suffix);
}

bool registerCommand(Command command)
{
    std::vector<Command>& commands = registry();
    commands.push_back(std::move(command));
    std::sort(commands.begin(), commands.end(), [](const Command& a, const Command& b) { return a.name < b.name; });
    return true;
}

const std::vector<Command>& registeredCommands() { return registry(); }

// ---- parsing the command line ----

namespace {

const char* kProgram = "attnscope-cli";

std::string firstLine(const std::string& text)
{
    std::string line = text.substr(0, text.find('\n'));
    if (line.empty() || line.back() != '.') line += '.';
    return line;
}

// CLI11 reports an option that lacks its value as "--name: 1 required TYPE missing".
Failure fromParseError(const CLI::ParseError& e)
{
    const std::string what = e.what();
    if (dynamic_cast<const CLI::ArgumentMismatch*>(&e)) {
        const std::size_t colon = what.find(':');
        if (colon != std::string::npos && what.rfind("-", 0) == 0)
            return {kExitUsage, what.substr(0, colon) + " needs a value."};
    }
    return {kExitUsage, firstLine(what)};
}

// The parsed options of `sub` as Args, refusing what CLI11 lets through: unknown options and stray words
// (kept as extras so the sentence is ours), an option given twice, and --text with --text-file.
Args readArgs(const CLI::App& sub, const std::vector<Options::Declared>& declared, const char* program)
{
    Args args;
    args.command = sub.get_name();
    args.program = program;
    const std::vector<std::string> extras = sub.remaining();
    if (!extras.empty()) throw Failure{kExitUsage, "'" + extras.front() + "' is not an option of '" + args.command + "'."};
    for (const Options::Declared& d : declared) {
        if (d.isFlag) {
            if (d.option->count() > 0) args.flags.insert(d.name);
            continue;
        }
        const std::vector<std::string>& given = d.option->results();
        if (given.size() > 1) throw Failure{kExitUsage, d.name + " is given twice."};
        if (given.size() == 1) args.values[d.name] = given.front();
    }
    if (args.has("--text") && args.has("--text-file")) throw Failure{kExitUsage, "give --text or --text-file, not both."};
    return args;
}

} // namespace

Invocation parseCommandLine(int argc, char** argv, std::string& helpHint)
{
    helpHint = "run '" + std::string(kProgram) + " --help' for the commands.";
    CLI::App app("Attention weights of a transformer as JSON, and the window's views as pictures.", kProgram);
    app.require_subcommand(1);
    app.get_formatter()->label("SUBCOMMAND", "COMMAND");
    app.footer("Run 'attnscope-cli COMMAND --help' for a command's options.\n"
               "Exit codes: 0 success, 1 bad input or model, 2 bad usage; errors print one 'error: ' line on stderr.");
    std::vector<std::vector<Options::Declared>> declared;
    std::vector<CLI::App*> subs;
    for (const Command& command : registeredCommands()) {
        CLI::App* sub = app.add_subcommand(command.name, command.summary);
        sub->allow_extras();
        sub->group("Commands");
        Options options(*sub);
        command.declare(options);
        declared.push_back(options.declared());
        subs.push_back(sub);
    }

    // Our own sentences for the two mistakes CLI11 would describe as "a subcommand is required".
    Invocation invocation;
    if (argc < 2) throw Failure{kExitUsage, "no command given."};
    const std::string first = argv[1];
    if (first == "help") {
        invocation.help = app.help();
        return invocation;
    }
    const bool known = std::any_of(subs.begin(), subs.end(), [&](const CLI::App* s) { return s->get_name() == first; });
    if (!known && first != "-h" && first != "--help") throw Failure{kExitUsage, "unknown command '" + first + "'."};
    if (known) helpHint = "run '" + std::string(kProgram) + " " + first + " --help' for its options.";

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        // Help for the command it follows, printed on stdout with exit code 0.
        std::ostringstream out, err;
        app.exit(e, out, err);
        invocation.help = out.str();
        return invocation;
    } catch (const CLI::ParseError& e) {
        throw fromParseError(e);
    }
    for (std::size_t i = 0; i < subs.size(); ++i)
        if (subs[i]->parsed()) {
            invocation.command = &registeredCommands()[i];
            invocation.args = readArgs(*subs[i], declared[i], argv[0]);
            return invocation;
        }
    throw Failure{kExitUsage, "no command given."};
}

} // namespace attnscope::cli
