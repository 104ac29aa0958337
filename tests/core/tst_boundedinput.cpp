// Every file AttnScope reads is refused (or read) within bounded memory and time, however it is crafted.
//
// Each case runs in a child process whose address space is capped (RLIMIT_AS) at what it had after start-up
// plus the file's size plus a fixed allowance, so a regression that tries to allocate gigabytes fails here
// even on a machine that has them. The child reports the loader's sentence and its CPU time; the parent
// reads the child's peak resident memory. Cases: every hostile file of the seed corpora in fuzz/corpus
// (which mirror the rows of tst_safetensors, tst_bpetokenizer, tst_gpt2loader, tst_llamatokenizer,
// tst_llamaloader, tst_bertloader and tst_trainer's vocabulary checks) and the regressions in
// fuzz/regressions, then crafted ones generated here: huge declared shapes and header lengths, giant
// numbers, deep nesting at the size limits, a million-entry vocabulary and long merge chains.
//
// The time bound is on CPU time, not wall time, and it is relative: each case may cost a few plain parses
// of its own bytes, where a parse's cost is measured in the same child just before the case ("CPU
// budgets" below). A slower or busier machine slows the measure and the case together, so the bound holds
// on any machine of the kind, while a reader that went quadratic would miss it by orders of magnitude.
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <nlohmann/json.hpp>

#include <sys/resource.h>

#include "childprocess.h"

#include "fuzzing.h"
#include "core/io/loaders/gpt2loader.h"
#include "core/io/modelfolder.h"
#include "core/io/formats/safetensors.h"
#include "core/text/bpetokenizer.h"

using namespace attnscope;
namespace fs = std::filesystem;

Q_DECLARE_METATYPE(std::string)

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
// What a loader may use beyond the bytes of the files it reads: its tables and the JSON tree of a small
// file. The largest legitimate case below (a vocabulary of a million tokens) needs about 300 MB.
constexpr long kAllowanceBytes = 512L << 20;

const std::string kFuzzDir = ATTNSCOPE_FUZZ_DIR;

// A field of /proc/self/status in kB: VmSize (address space), VmRSS (resident now), VmHWM (peak resident).
long statusKb(const char* field)
{
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind(field, 0) == 0) return std::stol(line.substr(std::strlen(field)));
    return 0;
}

long addressSpaceBytes() { return statusKb("VmSize:") * 1024; }

double cpuSeconds()
{
    timespec t{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

// ---- CPU budgets ----
// The unit: the CPU time nlohmann's validating parser, which every reader here uses, takes per byte of a
// plain JSON document shaped like a safetensors header, measured in the child just before its case. A
// budget is a number of "passes": a case of N bytes may take passes x N x that time. Inputs under 1 MB
// count as 1 MB, so a small file's budget is not lost in the noise of the measure.
constexpr std::size_t kCalibrationBytes = 2u << 20;
constexpr double kMinBudgetBytes = 1 << 20;
// The unit is measured in the same build, so a sanitizer build's slowdown is mostly in it already; the
// readers' tables (allocation, hashing) slow a little more than the parse (the worst case took 6.9 passes
// there against 6.0 in the native build), and twice the budget covers that.
constexpr double kSanitizerFactor = kSanitized ? 2.0 : 1.0;
// The budget of every case that does not name its own: a refusal or a small file read in a few passes.
constexpr double kDefaultPasses = 8.0;

const std::string& calibrationText()
{
    static const std::string text = [] {
        std::string s = "{";
        for (int i = 0; s.size() < kCalibrationBytes; ++i)
            s += "\"layer." + std::to_string(i) + R"(.weight":{"dtype":"F32","shape":[768,3072],"data_offsets":[)" +
                 std::to_string(i * 9437184LL) + "," + std::to_string((i + 1) * 9437184LL) + "]},";
        s.back() = '}';
        return s;
    }();
    return text;
}

// CPU seconds per byte of the calibration document, measured now.
double parseSecondsPerByte()
{
    const std::string& text = calibrationText();
    const double start = cpuSeconds();
    const bool valid = nlohmann::json::accept(text);
    const double seconds = cpuSeconds() - start;
    if (!valid) qFatal("the calibration document is not valid JSON");
    return seconds / double(text.size());
}

struct Outcome {
    bool finished = false;      // false: the child crashed or was killed (a failed allocation aborts)
    std::string how;            // how it died, if it did
    bool accepted = false;
    std::string message;        // the refusal
    double cpuSeconds = 0.0;
    double passes = 0.0;        // cpuSeconds in the budget's unit: plain parses of the input's bytes
    long growthKb = 0;          // the child's peak resident memory above what it started with
};

// Runs `load` in a child whose address space may grow by `fileBytes` + kAllowanceBytes. `load` returns
// "" when the input was accepted, else the refusal.
Outcome runCapped(long fileBytes, const std::function<std::string()>& load)
{
    const std::string text = childtest::inChild([&] {
        // Under AddressSanitizer the cap would not bite: ASan reserves its heap's address space at start-up
        // and maps inside that reservation. The sanitizer build still runs every case (for ASan's and UBSan's
        // checks and the CPU bound); the normal build enforces the cap.
        if (!kSanitized) {
            const rlim_t limit = static_cast<rlim_t>(addressSpaceBytes() + fileBytes + kAllowanceBytes);
            const rlimit cap{limit, limit};
            ::setrlimit(RLIMIT_AS, &cap);
        }
        // The unit first, in this process at this moment: whatever slows the case slows it too.
        const double unitSeconds = parseSecondsPerByte() * std::max(double(fileBytes), kMinBudgetBytes);
        // The peak so far is the parent's; reset it so VmHWM measures the loader alone.
        std::ofstream("/proc/self/clear_refs") << "5";
        const long startKb = statusKb("VmRSS:");
        const double start = cpuSeconds();
        std::string message;
        try {
            message = load();
        } catch (const std::bad_alloc&) {
            message = "\x01std::bad_alloc escaped the loader";
        }
        std::ostringstream report;
        const double seconds = cpuSeconds() - start;
        report << "report\n" << seconds << ' ' << seconds / unitSeconds << ' ' << (statusKb("VmHWM:") - startKb) << '\n'
               << (message.empty() ? "accepted" : "refused") << '\n' << message;
        return report.str();
    });
    Outcome out;
    if (text.rfind("report\n", 0) != 0) {
        out.how = text;  // how the child died
        return out;
    }
    std::istringstream in(text.substr(7));
    std::string verdict;
    in >> out.cpuSeconds >> out.passes >> out.growthKb;
    in.ignore();
    std::getline(in, verdict);
    std::getline(in, out.message, '\0');
    out.finished = true;
    out.accepted = verdict == "accepted";
    return out;
}

std::string readFile(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void writeFile(const fs::path& path, std::string_view bytes)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The loaders, one per kind of input in fuzz/corpus, reading the same multi-part layout as the fuzz targets.
using Loader = std::function<std::string(const fs::path& dir, const std::string& input)>;

std::string loadSafetensors(const fs::path& dir, const std::string& input)
{
    writeFile(dir / "model.safetensors", input);
    Result<SafetensorsFile> f = SafetensorsFile::open((dir / "model.safetensors").string());
    if (!f) return f.error();
    for (const TensorInfo& t : f->tensors()) (void)f->readFloats(t);
    return {};
}

std::string loadConfig(const fs::path& dir, const std::string& input)
{
    writeFile(dir / "config.json", input);
    Result<ModelConfig> c = readGpt2Config((dir / "config.json").string());
    return c ? std::string() : c.error();
}

std::string loadVocabMerges(const fs::path& dir, const std::string& input)
{
    const std::vector<std::string_view> parts = fuzzing::splitParts(input, 3);
    writeFile(dir / "vocab.json", parts[0]);
    writeFile(dir / "merges.txt", parts[1]);
    auto t = BpeTokenizer::fromVocabAndMerges((dir / "vocab.json").string(), (dir / "merges.txt").string());
    if (!t) return t.error();
    Result<TokenizedText> tokens = (*t)->encode(parts[2]);
    return tokens ? std::string() : tokens.error();
}

std::string loadTokenizerJson(const fs::path& dir, const std::string& input)
{
    const std::vector<std::string_view> parts = fuzzing::splitParts(input, 2);
    writeFile(dir / "tokenizer.json", parts[0]);
    auto t = BpeTokenizer::fromTokenizerJson((dir / "tokenizer.json").string());
    if (!t) return t.error();
    Result<TokenizedText> tokens = (*t)->encode(parts[1]);
    return tokens ? std::string() : tokens.error();
}

std::string loadFolder(const fs::path& dir, const std::string& input)
{
    const std::vector<std::string_view> parts = fuzzing::splitParts(input, 4);
    const char* names[] = {"config.json", "model.safetensors", "vocab.json", "merges.txt"};
    for (std::size_t i = 0; i < 4; ++i)
        if (!parts[i].empty()) writeFile(dir / names[i], parts[i]);
    Result<ModelPtr> m = loadModelFolder(dir.string());
    return m ? std::string() : m.error();
}

std::string loadLlamaTokenizer(const fs::path& dir, const std::string& input)
{
    const std::vector<std::string_view> parts = fuzzing::splitParts(input, 3);
    writeFile(dir / "tokenizer.json", parts[0]);
    if (!parts[1].empty()) writeFile(dir / "tokenizer_config.json", parts[1]);
    auto t = BpeTokenizer::fromTokenizerFiles((dir / "tokenizer.json").string(),
                                              parts[1].empty() ? std::string() : (dir / "tokenizer_config.json").string());
    if (!t) return t.error();
    Result<TokenizedText> tokens = (*t)->encode(parts[2]);
    return tokens ? std::string() : tokens.error();
}

std::string loadLlamaFolder(const fs::path& dir, const std::string& input)
{
    const char* names[] = {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json",
                           "model.safetensors.index.json", "model-00001-of-00001.safetensors"};
    const std::vector<std::string_view> parts = fuzzing::splitParts(input, 6);
    for (std::size_t i = 0; i < 6; ++i)
        if (!parts[i].empty()) writeFile(dir / names[i], parts[i]);
    Result<ModelPtr> m = loadModelFolder(dir.string());
    return m ? std::string() : m.error();
}

// A model folder and then a text for its tokenizer (the bert_folder, bart_folder, marian_folder, t5_folder and
// word_folder targets).
std::string loadFolderAndText(const fs::path& dir, const std::string& input, const std::vector<const char*>& names)
{
    const std::vector<std::string_view> parts = fuzzing::splitParts(input, names.size() + 1);
    for (std::size_t i = 0; i < names.size(); ++i)
        if (!parts[i].empty()) writeFile(dir / names[i], parts[i]);
    Result<ModelPtr> m = loadModelFolder(dir.string());
    if (!m) return m.error();
    Result<TokenizedText> tokens = (*m)->tokenizer->encode(parts.back());
    return tokens ? std::string() : tokens.error();
}

std::string loadBertFolder(const fs::path& dir, const std::string& input)
{
    return loadFolderAndText(dir, input, {"config.json", "model.safetensors", "vocab.txt", "tokenizer.json",
                                          "tokenizer_config.json"});
}

std::string loadBartFolder(const fs::path& dir, const std::string& input)
{
    return loadFolderAndText(dir, input, {"config.json", "model.safetensors", "vocab.json", "merges.txt", "tokenizer.json"});
}

std::string loadMarianFolder(const fs::path& dir, const std::string& input)
{
    return loadFolderAndText(dir, input, {"config.json", "model.safetensors", "vocab.json", "source.spm", "target.spm"});
}

std::string loadT5Folder(const fs::path& dir, const std::string& input)
{
    return loadFolderAndText(dir, input, {"config.json", "model.safetensors", "spiece.model", "tokenizer.json"});
}

std::string loadWordFolder(const fs::path& dir, const std::string& input)
{
    return loadFolderAndText(dir, input, {"config.json", "model.safetensors", "vocab.txt"});
}

const std::map<std::string, Loader>& loaders()
{
    static const std::map<std::string, Loader> table = {{"safetensors", loadSafetensors},
                                                        {"config", loadConfig},
                                                        {"gpt2_vocab_merges", loadVocabMerges},
                                                        {"tokenizer_json", loadTokenizerJson},
                                                        {"gpt2_folder", loadFolder},
                                                        {"llama_tokenizer", loadLlamaTokenizer},
                                                        {"llama_folder", loadLlamaFolder},
                                                        {"bert_folder", loadBertFolder},
                                                        {"bart_folder", loadBartFolder},
                                                        {"marian_folder", loadMarianFolder},
                                                        {"t5_folder", loadT5Folder},
                                                        {"word_folder", loadWordFolder}};
    return table;
}

// ---- crafted inputs ----

std::string safetensorsBytes(std::string_view header, std::size_t dataBytes = 0, std::uint64_t declared = UINT64_MAX)
{
    const std::uint64_t length = declared == UINT64_MAX ? header.size() : declared;
    std::string bytes(8, '\0');
    for (int i = 0; i < 8; ++i) bytes[static_cast<std::size_t>(i)] = static_cast<char>(length >> (8 * i));
    bytes.append(header);
    bytes.append(dataBytes, '\0');
    return bytes;
}

// GPT-2's byte alphabet: the symbol that spells byte b in vocab.json.
std::string byteSymbol(int b)
{
    auto printable = [](int c) { return (c >= '!' && c <= '~') || (c >= 0xA1 && c <= 0xAC) || (c >= 0xAE && c <= 0xFF); };
    int cp = b;
    if (!printable(b)) {
        cp = 256;
        for (int c = 0; c < b; ++c)
            if (!printable(c)) ++cp;
    }
    std::string s;
    if (cp < 0x80) s += static_cast<char>(cp);
    else {
        s += static_cast<char>(0xC0 | (cp >> 6));
        s += static_cast<char>(0x80 | (cp & 0x3F));
    }
    return s;
}

std::string jsonString(const std::string& s)
{
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

// vocab.json with the 256 byte symbols and then `extra` tokens named "t0", "t1", ...
std::string bigVocab(int extra)
{
    std::string v = "{";
    for (int b = 0; b < 256; ++b) v += jsonString(byteSymbol(b)) + ":" + std::to_string(b) + ",";
    for (int i = 0; i < extra; ++i) v += "\"t" + std::to_string(i) + "\":" + std::to_string(256 + i) + ",";
    v.back() = '}';
    return v;
}

// Merges that build "aaa...a" one letter at a time: `n` merges, each using the previous result.
std::pair<std::string, std::string> chainTokenizer(int n)
{
    std::string vocab = bigVocab(0);
    vocab.pop_back();
    std::string merges = "#version: 0.2\n", current = "a";
    for (int i = 0; i < n; ++i) {
        merges += current + " a\n";
        current += 'a';
        vocab += "," + jsonString(current) + ":" + std::to_string(256 + i);
    }
    return {vocab + "}", merges};
}

std::string sep() { return std::string(fuzzing::kPartSeparator); }

// A byte-level tokenizer.json pipeline over the 256 byte symbols: one Split with `pattern`, then ByteLevel.
std::string pipelineTokenizer(const std::string& pattern)
{
    return R"({"model":{"type":"BPE","vocab":)" + bigVocab(0) + R"(,"merges":[]},"pre_tokenizer":{"type":"Sequence",)"
           R"("pretokenizers":[{"type":"Split","pattern":{"Regex":)" + jsonString(pattern) +
           R"(},"behavior":"Isolated","invert":false},{"type":"ByteLevel","add_prefix_space":false,"use_regex":false}]}})";
}

} // namespace

class TestBoundedInput : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void seedCorpusAndRegressions_data();
    void seedCorpusAndRegressions();
    void crafted_data();
    void crafted();
    void capCatchesAHugeAllocation();
};

// The calibration document is built once, before any child is forked, so no case pays for building it.
void TestBoundedInput::initTestCase()
{
    const double perMb = parseSecondsPerByte() * 1e6;
    qInfo("the budgets' unit here: %.2f ms of CPU per MB parsed", perMb * 1e3);
    QVERIFY(perMb > 0);
}

void TestBoundedInput::seedCorpusAndRegressions_data()
{
    QTest::addColumn<std::string>("kind");
    QTest::addColumn<std::string>("path");
    int rows = 0;
    for (const auto& [kind, loader] : loaders())
        for (const char* folder : {"corpus", "regressions"}) {
            std::error_code ec;
            const fs::path dir = fs::path(kFuzzDir) / folder / kind;
            if (!fs::is_directory(dir, ec)) continue;
            for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
                const std::string name = kind + "/" + folder + "/" + e.path().filename().string();
                QTest::newRow(name.c_str()) << kind << e.path().string();
                ++rows;
            }
        }
    QVERIFY2(rows > 50, "the seed corpora were not found");
}

void TestBoundedInput::seedCorpusAndRegressions()
{
    QFETCH(std::string, kind);
    QFETCH(std::string, path);
    const std::string input = readFile(path);
    QTemporaryDir dir;
    const Loader& load = loaders().at(kind);
    const Outcome out = runCapped(long(input.size()), [&] { return load(dir.path().toStdString(), input); });
    QVERIFY2(out.finished, out.how.c_str());
    QVERIFY2(out.message.empty() || out.message[0] != '\x01', out.message.c_str());
    qInfo("%.1f kB in: %s in %.4f s of CPU, %.2f passes", double(input.size()) / 1e3,
          out.accepted ? "accepted" : "refused", out.cpuSeconds, out.passes);
    QVERIFY2(out.passes < kDefaultPasses * kSanitizerFactor,
             qPrintable(QString("%1 s of CPU, %2 plain parses of its bytes").arg(out.cpuSeconds).arg(out.passes)));
}

struct Crafted {
    const char* name;
    const char* kind;
    std::function<std::string()> make;  // built in the test, one at a time: some are 90 MB
    bool accepted;
    const char* problem;                // part of the refusal
    // CPU budget in plain parses of the input's bytes ("CPU budgets" above); larger only for inputs that
    // build large tables, each with the figure measured on a quiet machine and a margin of about five.
    double passes = kDefaultPasses;
};

const std::vector<Crafted>& craftedCases()
{
    static const std::string ok = R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
    static const std::vector<Crafted> cases = {
        {"safetensors: header length just under 100 MB, file tiny", "safetensors",
         [] { return safetensorsBytes(ok, 8, 99'999'999); }, false, "truncated"},
        {"safetensors: header length 2^63", "safetensors", [] { return safetensorsBytes(ok, 8, 1ULL << 63); }, false, "100 MB"},
        {"safetensors: shape of 10^12 x 10^12 floats", "safetensors",
         [] { return safetensorsBytes(R"({"x":{"dtype":"F32","shape":[1000000000000,1000000000000],"data_offsets":[0,8]}})", 8); },
         false, "does not match"},
        {"safetensors: shape with 100,000 dimensions of 1", "safetensors",
         [] {
             std::string dims = "1";
             for (int i = 1; i < 100'000; ++i) dims += ",1";
             return safetensorsBytes(R"({"x":{"dtype":"F32","shape":[)" + dims + R"(],"data_offsets":[0,4]}})", 4);
         },
         false, "dimensions"},
        {"safetensors: offsets of 10^30", "safetensors",
         [] { return safetensorsBytes(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,1000000000000000000000000000000]}})", 8); },
         false, "data_offsets"},
        {"safetensors: 90 MB header of nested brackets", "safetensors",
         [] { return safetensorsBytes(R"({"__metadata__":)" + std::string(90'000'000, '[')); }, false, "deeper than 64"},
        {"safetensors: 90 MB header of nested brackets, no object", "safetensors",
         [] { return safetensorsBytes(std::string(90'000'000, '[')); }, false, "not a JSON object"},
        {"safetensors: 90 MB header that is one flat array", "safetensors",
         [] {
             std::string s = "[0";
             s.reserve(90'000'000);
             while (s.size() < 89'999'990) s += ",0";
             return safetensorsBytes(s + "]");
         },
         false, "not a JSON object"},
        {"safetensors: 90 MB header of one object with 9 million keys", "safetensors",
         [] {
             std::string s = "{";
             s.reserve(90'000'000);
             for (int i = 0; s.size() < 89'999'000; ++i) s += "\"" + std::to_string(i) + "\":0,";
             s.back() = '}';
             return safetensorsBytes(s);
         },
         false, "not described by a JSON object"},
        {"safetensors: 200,000 empty tensors", "safetensors",
         [] {
             std::string s = "{";
             for (int i = 0; i < 200'000; ++i) s += "\"t" + std::to_string(i) + R"(":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},)";
             s.back() = '}';
             return safetensorsBytes(s);
         },
         // 3.7 passes on a quiet machine: each tensor is kept, with its name in a hash table.
         true, "", 20.0},
        {"config.json: giant numbers", "config",
         [] { return std::string(R"({"n_layer":1e400,"n_head":99999999999999999999999999,"n_embd":-1e308,"vocab_size":1})"); },
         false, "config.json"},
        {"config.json: a number of 500,000 digits", "config", [] { return "{\"n_layer\":" + std::string(500'000, '7') + "}"; },
         false, "config.json"},
        {"config.json: over the 1 MB limit", "config", [] { return "{\"pad\":\"" + std::string(2'000'000, 'x') + "\"}"; },
         false, "larger than 1 MB"},
        {"config.json: 1 MB of nested objects", "config",
         [] {
             std::string s;
             for (int i = 0; i < 100'000; ++i) s += "{\"a\":";
             return s;
         },
         false, "deeper than 64"},
        {"vocab.json: a million tokens", "gpt2_vocab_merges",
         // 8.8 passes on a quiet machine (0.86 s), 16 while a build used both cores: a JSON tree of a million
         // entries and then the tables, whose hashing suffers more from a shared cache than the parse does.
         [] { return bigVocab(1'000'000) + sep() + "#version: 0.2\n" + sep() + "t1 t2"; }, true, "", 60.0},
        {"vocab.json: 60 MB of nested brackets", "gpt2_vocab_merges",
         [] { return "{\"a\":" + std::string(60'000'000, '[') + sep() + sep(); }, false, "deeper than 64"},
        {"vocab.json: a 60 MB flat list", "gpt2_vocab_merges",
         [] {
             std::string s = "[0";
             s.reserve(60'000'000);
             while (s.size() < 59'999'990) s += ",0";
             return s + "]" + sep() + sep();
         },
         false, "not a JSON object"},
        {"tokenizer.json: a 60 MB flat list of strings", "tokenizer_json",
         [] {
             std::string s = "[\"a\"";
             s.reserve(60'000'000);
             while (s.size() < 59'999'990) s += ",\"a\"";
             return s + "]" + sep() + "x";
         },
         false, "not a JSON object"},
        {"safetensors: a 90 MB shape list", "safetensors",
         [] {
             std::string s = R"({"x":{"dtype":"F32","data_offsets":[0,0],"shape":[0)";
             s.reserve(90'000'000);
             while (s.size() < 89'999'990) s += ",1";
             return safetensorsBytes(s + "]}}");
         },
         false, "dimensions"},
        {"vocab.json: over the 64 MB limit", "gpt2_vocab_merges",
         [] { return "{\"a\":\"" + std::string(70'000'000, 'x') + "\"}" + sep() + sep(); }, false, "larger than 64 MB"},
        {"merges.txt: a chain of 4,000 merges over 4,000 letters", "gpt2_vocab_merges",
         [] {
             const auto [vocab, merges] = chainTokenizer(4'000);
             return vocab + sep() + merges + sep() + std::string(4'000, 'a');
         },
         // 2.2 passes on a quiet machine.
         true, "", 16.0},
        {"merges.txt: the same chain over 1 MB of one letter", "gpt2_vocab_merges",
         [] {
             const auto [vocab, merges] = chainTokenizer(4'000);
             return vocab + sep() + merges + sep() + std::string(1'000'000, 'a');
         },
         // 3.1 passes on a quiet machine.
         true, "", 16.0},
        {"tokenizer.json: a million merges of unknown symbols", "tokenizer_json",
         [] {
             std::string s = R"({"model":{"type":"BPE","vocab":)" + bigVocab(0) + R"(,"merges":[)";
             for (int i = 0; i < 1'000'000; ++i) s += "\"q z\",";
             s.back() = ']';
             return s + "}}" + sep() + "x";
         },
         // 6.0 passes on a quiet machine.
         false, "not in the vocabulary", 30.0},
        {"tokenizer.json pipeline: a split pattern that backtracks without end, over 100 kB", "llama_tokenizer",
         [] { return pipelineTokenizer("(a|aa)+$") + sep() + sep() + std::string(100'000, 'a') + "b"; }, false, "gave up"},
        {"tokenizer.json pipeline: 34 MB of nested Sequences", "llama_tokenizer",
         [] {
             std::string s = R"({"model":{"type":"BPE","vocab":{},"merges":[]},"normalizer":)";
             for (int i = 0; i < 1'000'000; ++i) s += R"({"type":"Sequence","normalizers":[)";
             return s + sep() + sep() + "x";
         },
         false, "deeper than 64"},
        {"model.safetensors.index.json: half a million tensors in one shard", "llama_folder",
         [] {
             const std::string config = R"({"model_type":"llama","hidden_size":4,"intermediate_size":4,"num_hidden_layers":1,)"
                                        R"("num_attention_heads":1,"vocab_size":256})";
             std::string index = R"({"weight_map":{)";
             for (int i = 0; i < 500'000; ++i) index += "\"t" + std::to_string(i) + R"(":"model-00001-of-00001.safetensors",)";
             index.back() = '}';
             const std::string shard = safetensorsBytes(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 8);
             return config + sep() + sep() + pipelineTokenizer("\\s+") + sep() + sep() + index + "}" + sep() + shard;
         },
         // 4.1 passes on a quiet machine.
         false, "is missing", 20.0},
    };
    return cases;
}

void TestBoundedInput::crafted_data()
{
    QTest::addColumn<int>("index");
    for (std::size_t i = 0; i < craftedCases().size(); ++i) QTest::newRow(craftedCases()[i].name) << int(i);
}

void TestBoundedInput::crafted()
{
    QFETCH(int, index);
    const Crafted& c = craftedCases()[static_cast<std::size_t>(index)];
    const std::string input = c.make();
    QTemporaryDir dir;
    const Loader& load = loaders().at(c.kind);
    const Outcome out = runCapped(long(input.size()), [&] { return load(dir.path().toStdString(), input); });
    qInfo("%.1f MB in: %s in %.3f s of CPU (%.2f passes of %.1f allowed), memory grew by %ld MB",
          double(input.size()) / 1e6, out.accepted ? "accepted" : "refused", out.cpuSeconds, out.passes,
          c.passes * kSanitizerFactor, out.growthKb / 1024);
    QVERIFY2(out.finished, out.how.c_str());
    QVERIFY2(out.accepted == c.accepted, out.message.c_str());
    if (!c.accepted) QVERIFY2(out.message.find(c.problem) != std::string::npos, out.message.c_str());
    QVERIFY2(out.passes < c.passes * kSanitizerFactor,
             qPrintable(QString("%1 s of CPU, %2 plain parses of its bytes").arg(out.cpuSeconds).arg(out.passes)));
}

// The cap is real: a child that asks for 4 GB more than its allowance gets std::bad_alloc, not the memory.
void TestBoundedInput::capCatchesAHugeAllocation()
{
    if (kSanitized) QSKIP("ASan reserves its heap up front, so RLIMIT_AS does not apply; the normal build checks the cap.");
    const Outcome out = runCapped(0, [] {
        std::vector<char> huge(std::size_t(4) << 30, 1);
        return std::string(huge.empty() ? "" : "the allocation succeeded");
    });
    QVERIFY2(out.finished, out.how.c_str());
    QVERIFY2(out.message.find("bad_alloc") != std::string::npos, out.message.c_str());
}

QTEST_APPLESS_MAIN(TestBoundedInput)
#include "tst_boundedinput.moc"
