// attnscope-cli's command line: CLI11 with our own checks on top (parseCommandLine), then every reader
// of option values that needs no file: the attention settings, --layer/--head against a 2-layer, 4-head
// model, the whole-number options, and the random-model spec. Input: the arguments after the program
// name, separated by NUL bytes. Every refusal must be a Failure with a sentence and exit code 1 or 2;
// any other exception escaping would reach the user as a raw library message and aborts the target.
#include "command.h"
#include "common.h"
#include "fuzzing.h"
#include "core/model/randommodel.h"

namespace {

void expectFailure(const attnscope::cli::Failure& f)
{
    FUZZ_EXPECT(f.code == attnscope::cli::kExitInput || f.code == attnscope::cli::kExitUsage, "exit code 1 or 2");
    FUZZ_EXPECT(!f.message.empty() && f.message.back() == '.', "a refusal is one sentence");
}

template <class F>
void expectCleanly(F f)
{
    try {
        f();
    } catch (const attnscope::cli::Failure& failure) {
        expectFailure(failure);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace attnscope::cli;
    std::vector<std::string> words = {"attnscope-cli"};
    const std::string_view input = fuzzing::asText(data, size);
    for (std::size_t begin = 0; words.size() < 33;) {
        const std::size_t end = input.find('\0', begin);
        words.emplace_back(input.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin));
        if (end == std::string_view::npos) break;
        begin = end + 1;
    }
    std::vector<char*> argv;
    for (std::string& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);

    Invocation invocation;
    std::string hint;
    try {
        invocation = parseCommandLine(static_cast<int>(words.size()), argv.data(), hint);
    } catch (const Failure& f) {
        expectFailure(f);
        FUZZ_EXPECT(!hint.empty(), "a usage error comes with a hint");
        return 0;
    }
    if (!invocation.command) {
        FUZZ_EXPECT(!invocation.help.empty(), "help has text");
        return 0;
    }
    const Args& args = invocation.args;
    expectCleanly([&] { readSettings(args); });
    attnscope::ModelConfig config;
    config.layers = 2;
    config.heads = 4;
    expectCleanly([&] { readHead(args, config, false); });
    for (const char* key : {"--top-k", "--tokens", "--repeat", "--threads", "--width", "--height"})
        expectCleanly([&] { readCount(args, key, 1, 10000); });
    for (const char* key : {"--query", "--key"}) expectCleanly([&] { readInt(args, key, 0, 0, 99, key); });
    const std::string spec = args.get("--model");
    if (spec.rfind("random", 0) == 0) {
        attnscope::Result<attnscope::RandomModelSpec> parsed = attnscope::parseRandomSpec(spec);
        FUZZ_EXPECT(parsed || !parsed.error().empty(), "a refused spec carries a sentence");
    }
    return 0;
}
