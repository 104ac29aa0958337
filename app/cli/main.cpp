// attnscope-cli: builds the parser from the registered commands (app/cli/*.cpp), runs the chosen one and
// turns every failure into one sentence on stderr and an exit code: 0 success, 1 bad input or model,
// 2 bad usage. CLI11's own messages never reach the user; they are mapped to our sentences here.
#include <algorithm>
#include <iostream>

#include <CLI/CLI.hpp>

#include "command.h"
#include "common.h"

using namespace attnscope::cli;

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

int run(int argc, char** argv, std::string& helpHint)
{
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
    if (argc < 2) throw Failure{kExitUsage, "no command given."};
    const std::string first = argv[1];
    if (first == "help") {
        std::cout << app.help();
        return 0;
    }
    const bool known = std::any_of(subs.begin(), subs.end(), [&](const CLI::App* s) { return s->get_name() == first; });
    if (!known && first != "-h" && first != "--help") throw Failure{kExitUsage, "unknown command '" + first + "'."};
    if (known) helpHint = "run '" + std::string(kProgram) + " " + first + " --help' for its options.";

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e, std::cout, std::cerr);  // help for the command it follows, on stdout, exit 0
    } catch (const CLI::ParseError& e) {
        throw fromParseError(e);
    }
    for (std::size_t i = 0; i < subs.size(); ++i)
        if (subs[i]->parsed()) return registeredCommands()[i].run(readArgs(*subs[i], declared[i], argv[0]));
    throw Failure{kExitUsage, "no command given."};
}

} // namespace

int main(int argc, char** argv)
{
    std::string helpHint = "run '" + std::string(kProgram) + " --help' for the commands.";
    try {
        return run(argc, argv, helpHint);
    } catch (const Failure& f) {
        std::cerr << "error: " << f.message << '\n';
        if (f.code == kExitUsage) std::cerr << helpHint << '\n';
        return f.code;
    } catch (const std::bad_alloc&) {
        std::cerr << "error: out of memory.\n";
        return kExitInput;
    } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << '\n';
        return kExitInput;
    }
}
