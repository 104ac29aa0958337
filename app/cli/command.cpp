#include "command.h"

#include <algorithm>

#include <CLI/CLI.hpp>

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

Options& Options::flag(const std::string& name, const std::string& help)
{
    CLI::Option* option = m_app.add_flag(name)->description(help);
    m_declared.push_back({name, option, true});
    return *this;
}

Options& Options::model()
{
    return value("--model", "SPEC",
                 "random[:layers=2,heads=4,d_model=64,seed=1], builtin, or a GPT-2 model folder (config.json, "
                 "model.safetensors, vocab.json + merges.txt or tokenizer.json); random by default");
}

Options& Options::text()
{
    value("--text", "TEXT", "the sentence to read");
    return value("--text-file", "FILE", "read the text from FILE instead (- for standard input)");
}

Options& Options::settings()
{
    value("--mask", "causal|none", "the attention mask (causal by default)");
    value("--block-keys", "3,5", "key positions no query may attend to");
    value("--scaling", "sqrt-dk|none", "divide the scores by sqrt(d_k) or not (sqrt-dk by default)");
    value("--temperature", "T", "further divide the scores by T > 0 (1 by default)");
    value("--positional", "default|sinusoidal|learned|none", "the positional encoding (the model's by default)");
    value("--ablate", "L.H,L.H", "knock these heads out: their output before W_O is replaced");
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

} // namespace attnscope::cli
