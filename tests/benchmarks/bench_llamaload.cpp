// Opening a TinyLlama-1.1B-shaped folder (22 layers, 32 query heads over 4 key/value heads, d_model 2048,
// d_ff 5632, 32 000 tokens, untied: 1.1 billion parameters, 2.2 GB of BF16) and running it: load time, one
// forward pass, and the memory it takes (peak resident set, and how much of the resident memory is the
// mapped file, which the kernel can drop and read again, against anonymous memory, which must stay).
//
// The checkpoint is written once to $ATTNSCOPE_BENCH_LLAMA_DIR (default /tmp/attnscope-llama-1.1b) with
// random weights, streamed a tensor at a time so writing it takes no memory worth mentioning; the
// tokenizer is the tests' small SentencePiece-style one (the vocabulary beyond it is padding rows).
#include <QTest>

#include <chrono>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/io/formats/safetensors.h"
#include "core/model/forward.h"
#include "core/model/model.h"
#include "tinytokenizers.h"
#include "core/open/openmodel.h"

using namespace attnscope;
namespace fs = std::filesystem;

namespace {

constexpr int L = 22, H = 32, Hkv = 4, D = 2048, F = 5632, V = 32000, C = 2048;

// VmHWM, VmRSS, RssAnon and RssFile from /proc/self/status, in MB.
struct Memory {
    double peak = 0, resident = 0, anonymous = 0, file = 0;
};

Memory memory()
{
    Memory m;
    std::ifstream in("/proc/self/status");
    for (std::string line; std::getline(in, line);) {
        auto field = [&](const char* key, double& out) {
            if (line.rfind(key, 0) == 0) out = std::stod(line.substr(std::string(key).size())) / 1024.0;
        };
        field("VmHWM:", m.peak);
        field("VmRSS:", m.resident);
        field("RssAnon:", m.anonymous);
        field("RssFile:", m.file);
    }
    return m;
}

void report(const char* when, const Memory& m)
{
    qInfo("%s: peak resident %.0f MB; now resident %.0f MB = %.0f MB anonymous + %.0f MB of mapped file", when, m.peak,
          m.resident, m.anonymous, m.file);
}

// Streams a BF16 safetensors file: the header from the shapes, then each tensor generated in chunks.
void writeCheckpoint(const fs::path& path, const std::vector<std::pair<std::string, std::vector<std::int64_t>>>& tensors)
{
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    header["__metadata__"] = {{"format", "pt"}};
    std::uint64_t offset = 0;
    for (const auto& [name, shape] : tensors) {
        std::uint64_t n = 1;
        for (auto d : shape) n *= std::uint64_t(d);
        header[name] = {{"dtype", "BF16"}, {"shape", shape}, {"data_offsets", {offset, offset + 2 * n}}};
        offset += 2 * n;
    }
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');
    std::ofstream out(path, std::ios::binary);
    const std::uint64_t length = text.size();
    out.write(reinterpret_cast<const char*>(&length), 8);
    out.write(text.data(), std::streamsize(text.size()));
    std::uint64_t state = 1;
    std::vector<std::uint16_t> chunk(1 << 20);
    for (const auto& [name, shape] : tensors) {
        std::uint64_t n = 1;
        for (auto d : shape) n *= std::uint64_t(d);
        const bool gain = shape.size() == 1;
        for (std::uint64_t done = 0; done < n;) {
            const std::size_t k = std::size_t(std::min<std::uint64_t>(chunk.size(), n - done));
            for (std::size_t i = 0; i < k; ++i) {
                state = state * 6364136223846793005ull + 1442695040888963407ull;
                const float u = float(state >> 40) / 16777216.0f * 2.0f - 1.0f;
                chunk[i] = floatToBfloat16(gain ? 1.0f + 0.1f * u : 0.05f * u);
            }
            out.write(reinterpret_cast<const char*>(chunk.data()), std::streamsize(2 * k));
            done += k;
        }
    }
}

} // namespace

class BenchLlamaLoad : public QObject {
    Q_OBJECT
    std::string m_dir;

private slots:
    void initTestCase()
    {
        const char* env = std::getenv("ATTNSCOPE_BENCH_LLAMA_DIR");
        m_dir = env ? env : "/tmp/attnscope-llama-1.1b";
        report("before opening anything", memory());
        if (fs::exists(fs::path(m_dir) / "model.safetensors")) return;
        fs::create_directories(m_dir);
        std::ofstream(fs::path(m_dir) / "config.json")
            << nlohmann::json{{"model_type", "llama"}, {"hidden_size", D}, {"intermediate_size", F}, {"num_hidden_layers", L},
                              {"num_attention_heads", H}, {"num_key_value_heads", Hkv}, {"max_position_embeddings", C},
                              {"rms_norm_eps", 1e-5}, {"rope_theta", 10000.0}, {"vocab_size", V},
                              {"tie_word_embeddings", false}, {"hidden_act", "silu"}, {"torch_dtype", "bfloat16"}}.dump(1);
        std::ofstream(fs::path(m_dir) / "tokenizer.json") << tinytok::tokenizerText("llama2");
        const std::int64_t KV = std::int64_t(Hkv) * (D / H);
        std::vector<std::pair<std::string, std::vector<std::int64_t>>> t = {{"model.embed_tokens.weight", {V, D}}};
        for (int l = 0; l < L; ++l) {
            const std::string p = "model.layers." + std::to_string(l) + ".";
            t.push_back({p + "input_layernorm.weight", {D}});
            t.push_back({p + "self_attn.q_proj.weight", {D, D}});
            t.push_back({p + "self_attn.k_proj.weight", {KV, D}});
            t.push_back({p + "self_attn.v_proj.weight", {KV, D}});
            t.push_back({p + "self_attn.o_proj.weight", {D, D}});
            t.push_back({p + "post_attention_layernorm.weight", {D}});
            t.push_back({p + "mlp.gate_proj.weight", {F, D}});
            t.push_back({p + "mlp.up_proj.weight", {F, D}});
            t.push_back({p + "mlp.down_proj.weight", {D, F}});
        }
        t.push_back({"model.norm.weight", {D}});
        t.push_back({"lm_head.weight", {V, D}});
        writeCheckpoint(fs::path(m_dir) / "model.safetensors", t);
        report("after writing the checkpoint", memory());
    }

    // config.json, the tokenizer, the header, the shape checks and the scan for NaN and infinity (which
    // reads every byte of the 2.2 GB once); the weights stay mapped.
    void openFolder()
    {
        QBENCHMARK {
            Result<ModelPtr> model = loadModel(m_dir);
            QVERIFY2(model, model.error().c_str());
        }
        report("after opening the folder", memory());
    }

    // One forward pass over 32 tokens keeping every head's weights and the next-token logits: each layer is
    // converted to float32 into the workspace as the pass reaches it.
    void forwardOnce()
    {
        Result<ModelPtr> model = loadModel(m_dir);
        QVERIFY2(model, model.error().c_str());
        std::vector<int> ids;
        for (int i = 0; i < 32; ++i) ids.push_back((i * 997 + 1) % V);
        CaptureRequest capture;
        capture.nextTokenLogits = true;
        capture.detail = HeadSelection{0, 0};
        ForwardTrace trace;
        Workspace ws;
        const auto start = std::chrono::steady_clock::now();
        QVERIFY(forward(**model, ids, {}, capture, trace, ws).ok());
        qInfo("first forward, 32 tokens: %.0f ms",
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
        QBENCHMARK {
            QVERIFY(forward(**model, ids, {}, capture, trace, ws).ok());
        }
        report("after the forward passes", memory());
    }
};

QTEST_APPLESS_MAIN(BenchLlamaLoad)
#include "bench_llamaload.moc"
