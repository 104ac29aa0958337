#pragma once
// How a command of attnscope-cli is declared, registered and handed its arguments. CLI11 does the
// parsing, the subcommands and the per-command --help; this file keeps our conventions on top of it.
//
// To add a command: write app/cli/NAME.cpp that declares its options and its run function, inside
// `namespace attnscope::cli::NAMECommand { namespace { ... } }` (the commands are compiled in batches, so
// each file's declare, run and registered need a namespace of their own), and ends in
//     const bool registered = registerCommand({"NAME", "one line for the command list", declare, run});
// and add the file to app/CMakeLists.txt. Registration happens while the program starts, so the command
// files must be compiled into the executable itself (a static library would drop them unseen).
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
} // namespace CLI

namespace attnscope::cli {

// The parsed arguments of one command: every option as the text that followed it, and the flags given.
class Args {
public:
    std::string command;   // the command's name, for error sentences
    std::string program;   // argv[0], for Qt
    std::map<std::string, std::string> values;
    std::set<std::string> flags;

    bool has(const std::string& key) const { return values.count(key) || flags.count(key); }
    std::string get(const std::string& key, const std::string& fallback = {}) const
    {
        auto it = values.find(key);
        return it == values.end() ? fallback : it->second;
    }
};

// What a command's declare function fills in: its options, each a string the command validates itself
// (so every sentence and exit code stays ours), grouped helpers for the options several commands share.
class Options {
public:
    explicit Options(CLI::App& app) : m_app(app) {}

    // An option followed by one value, e.g. value("--layer", "L", "the layer, from 0").
    Options& value(const std::string& name, const std::string& typeName, const std::string& help);
    // A word without a dash before it, e.g. positional("repo", "ORG/NAME", "..."): read back as args.get("repo").
    Options& positional(const std::string& name, const std::string& typeName, const std::string& help);
    // An option that takes no value.
    Options& flag(const std::string& name, const std::string& help);

    Options& model();              // --model SPEC
    Options& text();               // --text TEXT | --text-file FILE
    Options& settings();           // --mask, --block-keys, --scaling, --temperature, --positional, --ablate(-mode)
    Options& head(bool required);  // --layer L --head H

    // The options declared so far, read back into Args after parsing.
    struct Declared {
        std::string name;
        CLI::Option* option = nullptr;
        bool isFlag = false;
    };
    const std::vector<Declared>& declared() const { return m_declared; }

private:
    CLI::App& m_app;
    std::vector<Declared> m_declared;
};

struct Command {
    std::string name;
    std::string summary;                       // one line in `attnscope-cli --help`
    std::function<void(Options&)> declare;     // its options
    std::function<int(const Args&)> run;       // its work; throws Failure; returns the exit code
};

// Adds a command to the list main() builds the parser from. Returns true so that a command file can
// register itself by initialising a constant.
bool registerCommand(Command command);

// Every registered command, sorted by name.
const std::vector<Command>& registeredCommands();

// The command line parsed against the registered commands: the command to run and its arguments, or,
// when only help was asked for, no command and the help text to print on stdout (exit code 0).
struct Invocation {
    const Command* command = nullptr;
    Args args;
    std::string help;
};
// Throws Failure (usage) for anything the parser refuses. `helpHint` is set first to the sentence a
// usage error should end with: how to get help for the command named, or for the program.
Invocation parseCommandLine(int argc, char** argv, std::string& helpHint);

} // namespace attnscope::cli
