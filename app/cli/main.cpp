// attnscope-cli: parses the command line (command.cpp), runs the chosen command and turns every failure
// into one sentence on stderr and an exit code: 0 success, 1 bad input or model, 2 bad usage.
#include <iostream>

#include "command.h"
#include "core/compute/allocation.h"
#include "core/compute/hugepages.h"
#include "common.h"

using namespace attnscope::cli;

namespace {

int run(int argc, char** argv, std::string& helpHint)
{
    // Passes over a model of GPT-2 small's size run up to a quarter faster with its weights on 2 MB pages
    // (compute/hugepages.h); the window leaves this off.
    attnscope::setHugePageCollapse(true);
    attnscope::keepFreedMatricesForReuse();  // a pass's matrices reuse the last one's memory (compute/allocation.h)
    const Invocation invocation = parseCommandLine(argc, argv, helpHint);
    if (!invocation.command) {
        std::cout << invocation.help;
        return 0;
    }
    return invocation.command->run(invocation.args);
}

} // namespace

int main(int argc, char** argv)
{
    std::string helpHint;
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
