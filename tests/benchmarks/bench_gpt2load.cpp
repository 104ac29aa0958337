// How long a gpt2-small-sized folder (12 layers, d_model 768, 50257 tokens, context 1024; about 500 MB of
// F32) takes to open. The checkpoint is written once to $ATTNSCOPE_BENCH_DIR (default
// /tmp/attnscope-gpt2-small) with random weights and kept for `attnscope-cli bench --model` runs.
#include <QTest>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/text/bpetokenizer.h"
#include "core/io/loaders/gpt2loader.h"
#include "core/io/formats/safetensors.h"

using namespace attnscope;
namespace fs = std::filesystem;

class BenchGpt2Load : public QObject {
    Q_OBJECT
    std::string m_dir;

private slots:
    void initTestCase()
    {
        const char* env = std::getenv("ATTNSCOPE_BENCH_DIR");
        m_dir = env ? env : "/tmp/attnscope-gpt2-small";
        if (fs::exists(fs::path(m_dir) / "model.safetensors")) return;
        constexpr int L = 12, D = 768, F = 3072, V = 50257, C = 1024;
        fs::create_directories(m_dir);
        std::ofstream(fs::path(m_dir) / "config.json")
            << nlohmann::json{{"n_layer", L}, {"n_head", 12}, {"n_embd", D}, {"n_positions", C}, {"vocab_size", V},
                              {"n_inner", nullptr}, {"activation_function", "gelu_new"}}.dump();
        std::uint64_t state = 1;
        std::vector<NamedTensor> t;
        auto add = [&](const std::string& name, std::vector<std::int64_t> shape, float scale, float offset = 0.0f) {
            std::int64_t n = 1;
            for (auto d : shape) n *= d;
            std::vector<float> v(static_cast<std::size_t>(n));
            for (float& x : v) {
                state = state * 6364136223846793005ull + 1442695040888963407ull;
                x = offset + scale * (static_cast<float>(state >> 40) / 16777216.0f * 2.0f - 1.0f);
            }
            t.push_back({name, std::move(shape), std::move(v)});
        };
        add("wte.weight", {V, D}, 0.1f);
        add("wpe.weight", {C, D}, 0.02f);
        for (int l = 0; l < L; ++l) {
            const std::string h = "h." + std::to_string(l) + ".";
            add(h + "ln_1.weight", {D}, 0.1f, 1.0f);
            add(h + "ln_1.bias", {D}, 0.02f);
            add(h + "attn.c_attn.weight", {D, 3 * D}, 0.05f);
            add(h + "attn.c_attn.bias", {3 * D}, 0.02f);
            add(h + "attn.c_proj.weight", {D, D}, 0.05f);
            add(h + "attn.c_proj.bias", {D}, 0.02f);
            add(h + "ln_2.weight", {D}, 0.1f, 1.0f);
            add(h + "ln_2.bias", {D}, 0.02f);
            add(h + "mlp.c_fc.weight", {D, F}, 0.05f);
            add(h + "mlp.c_fc.bias", {F}, 0.02f);
            add(h + "mlp.c_proj.weight", {F, D}, 0.05f);
            add(h + "mlp.c_proj.bias", {D}, 0.02f);
        }
        add("ln_f.weight", {D}, 0.1f, 1.0f);
        add("ln_f.bias", {D}, 0.02f);
        QVERIFY(writeSafetensors((fs::path(m_dir) / "model.safetensors").string(), t).ok());
        const std::string tok = ATTNSCOPE_GPT2_TOKENIZER_DIR;
        fs::copy_file(tok + "/vocab.json", fs::path(m_dir) / "vocab.json", fs::copy_options::overwrite_existing);
        fs::copy_file(tok + "/merges.txt", fs::path(m_dir) / "merges.txt", fs::copy_options::overwrite_existing);
    }

    // Mapping and validating the header only: the part that must not grow with the weights.
    void openSafetensorsHeader()
    {
        const std::string path = (fs::path(m_dir) / "model.safetensors").string();
        QBENCHMARK {
            Result<SafetensorsFile> f = SafetensorsFile::open(path);
            QVERIFY(f);
        }
    }

    // The tokenizer (vocab.json + 50 000 merges) alone.
    void loadTokenizer()
    {
        QBENCHMARK {
            auto r = BpeTokenizer::fromVocabAndMerges(m_dir + "/vocab.json", m_dir + "/merges.txt");
            QVERIFY(r);
        }
    }

    // The whole folder: config, tokenizer, header, and converting every tensor into Eigen matrices.
    void loadWholeFolder()
    {
        QBENCHMARK {
            Result<ModelPtr> model = loadGpt2Folder(m_dir);
            QVERIFY2(model, model.error().c_str());
        }
    }
};

QTEST_APPLESS_MAIN(BenchGpt2Load)
#include "bench_gpt2load.moc"
