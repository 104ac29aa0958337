// Loading Llama-family folders: tiny checkpoints written here (tinyllama.h) checked against the plain-loop
// reference in llamareference.h for every head's attention and the next-token probabilities, with and
// without grouped-query attention, tied and untied, with Qwen2's biases, rope scaling, shards and half
// precision; and one row per kind of hostile folder.
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/io/loaders/llamaloader.h"
#include "core/io/modelfolder.h"
#include "fixturefiles.h"
#include "llamareference.h"
#include "numericcheck.h"
#include "tracecompare.h"
#include "core/model/forward.h"
#include "core/model/storedweights.h"
#include "core/research/logitattribution.h"
#include "core/research/nexttokenloss.h"
#include "tinyllama.h"
#include "core/open/openmodel.h"

using namespace attnscope;
namespace fs = std::filesystem;

Q_DECLARE_METATYPE(std::string)
Q_DECLARE_METATYPE(tinyllama::Spec)

namespace {

using tinyllama::Spec;

struct Setting {
    const char* name;
    AttentionSettings settings;
    llamaref::Options options;
};

std::vector<Setting> settingsToCheck()
{
    std::vector<Setting> out;
    out.push_back({"causal", {}, {}});
    AttentionSettings hot;
    hot.mask = MaskKind::None;
    hot.temperature = 0.5;
    out.push_back({"no mask, temperature 0.5", hot, {false, true, 0.5, true}});
    AttentionSettings unscaled;
    unscaled.scaling = Scaling::None;
    out.push_back({"no 1/sqrt(dk)", unscaled, {true, false, 1.0, true}});
    AttentionSettings noPositions;
    noPositions.positional = PositionalOverride::None;
    out.push_back({"positions off", noPositions, {true, true, 1.0, false}});
    return out;
}

std::vector<double> softmax(const Eigen::RowVectorXf& logits)
{
    const double top = logits.maxCoeff();
    std::vector<double> p(std::size_t(logits.size()));
    double sum = 0;
    for (Eigen::Index i = 0; i < logits.size(); ++i) sum += (p[std::size_t(i)] = std::exp(double(logits[i]) - top));
    for (double& x : p) x /= sum;
    return p;
}

} // namespace

class TestLlamaLoader : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    fixture::Folders<Spec> m_folders{m_tmp.path().toStdString(), &tinyllama::writeFolder};

    std::string folder(const std::string& name, const Spec& spec) { return m_folders.folder(name, spec); }
    // A fresh copy of a good folder to break.
    std::string copyOf(const std::string& name, const Spec& spec = {}) { return m_folders.copyOf(name, spec); }

private slots:
    void initTestCase() { QVERIFY(m_tmp.isValid()); }

    void matchesReference_data()
    {
        QTest::addColumn<std::string>("name");
        QTest::addColumn<Spec>("spec");
        QTest::addColumn<int>("setting");
        std::vector<std::pair<std::string, Spec>> models;
        Spec s;
        models.push_back({"llama, GQA 4:2, untied, F32", s});
        s = {};
        s.kvHeads = 4;
        s.tied = true;
        models.push_back({"llama, no sharing 4:4, tied", s});
        s = {};
        s.kvHeads = 1;
        s.attentionBias = true;
        s.tokenizer = "llama3";
        models.push_back({"llama, multi-query 4:1, attention_bias", s});
        s = {};
        s.modelType = "qwen2";
        s.tied = true;
        s.tokenizer = "qwen2";
        s.ropeTheta = 1000000.0;
        models.push_back({"qwen2, q/k/v biases, GQA, tied, theta 1e6", s});
        s = {};
        s.ropeScaling = {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0},
                         {"original_max_position_embeddings", 64}};
        models.push_back({"llama, rope_scaling llama3", s});
        s = {};
        s.ropeScaling = {{"type", "linear"}, {"factor", 4.0}};
        models.push_back({"llama, rope_scaling linear", s});
        s = {};
        s.modelType = "mistral";
        s.shards = 3;
        s.tokenizer = "mistral";
        models.push_back({"mistral, 3 shards", s});
        s = {};
        s.dtype = DType::BF16;
        s.extraVocab = 13;
        models.push_back({"llama, BF16, padded vocabulary", s});
        s = {};
        s.dtype = DType::F16;
        s.layers = 3;
        models.push_back({"llama, F16, 3 layers", s});
        // head_dim set apart from hidden_size / heads (8): the attention is 4 × 12 = 48 or 4 × 4 = 16 wide.
        s = {};
        s.headDim = 12;
        models.push_back({"llama, head_dim 12, GQA 4:2", s});
        s = {};
        s.modelType = "qwen2";
        s.tokenizer = "qwen2";
        s.headDim = 4;
        s.kvHeads = 1;
        models.push_back({"qwen2, head_dim 4, multi-query", s});
        const std::vector<Setting> settings = settingsToCheck();
        for (const auto& [name, spec] : models)
            for (std::size_t k = 0; k < settings.size(); ++k)
                QTest::newRow((name + " / " + settings[k].name).c_str()) << name << spec << int(k);
    }
    void matchesReference()
    {
        QFETCH(std::string, name);
        QFETCH(Spec, spec);
        QFETCH(int, setting);
        const Setting s = settingsToCheck()[std::size_t(setting)];
        const std::string dir = folder(name, spec);
        Result<ModelPtr> model = loadModel(dir);
        QVERIFY2(model, model.error().c_str());
        QVERIFY((*model)->weights.stored != nullptr);
        const std::vector<int> ids = fixture::spreadIds(12, (*model)->config.vocabSize);

        CaptureRequest capture;
        capture.nextTokenLogits = true;
        capture.valueNorms = true;
        Result<ForwardTrace> trace = forward(**model, ids, s.settings, capture);
        QVERIFY2(trace, trace.error().c_str());
        const llamaref::Result ref = llamaref::Model(dir).run(ids, s.options);

        const numericcheck::Worst worst = tracecompare::worstDifference(*trace, ref.attention);
        const numericcheck::Worst worstP = numericcheck::difference(softmax(trace->nextLogits), ref.nextProbabilities);
        // Value norms (value-weighted attention) relative to their size: grouped heads read a shared value.
        QVERIFY(trace->hasValueNorms);
        numericcheck::Worst worstNorm;
        for (int l = 0; l < trace->layers; ++l)
            for (int h = 0; h < trace->heads; ++h) {
                worstNorm.label("layer %d head %d key", l, h);
                worstNorm.addRelative(trace->valueNorm(l, h), ref.valueNorms[std::size_t(l)][std::size_t(h)]);
            }
        qDebug("worst attention difference %.2e, worst next-token probability difference %.2e, worst value norm %.2e", worst.value(),
               worstP.value(), worstNorm.value());
        QVERIFY2(worst.within(1e-4), worst.message("attention").c_str());
        QVERIFY2(worstP.within(1e-4), worstP.message("next-token probabilities").c_str());
        QVERIFY2(worstNorm.within(1e-4), worstNorm.message("value norms").c_str());
    }

    void readsTheConfig()
    {
        Spec s;
        s.ropeScaling = {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0},
                         {"original_max_position_embeddings", 64}};
        Result<ModelPtr> m = loadModel(folder("config", s));
        QVERIFY2(m, m.error().c_str());
        const ModelConfig& c = (*m)->config;
        QCOMPARE(c.architecture, std::string("llama"));
        QCOMPARE(c.name, std::string("config"));
        QCOMPARE(c.layers, 2);
        QCOMPARE(c.heads, 4);
        QCOMPARE(c.keyValueHeads(), 2);
        QCOMPARE(c.kvHeadOf(3), 1);
        QCOMPARE(c.dHead, 8);
        QVERIFY(c.positional == PositionalKind::Rotary);
        QVERIFY(c.normKind == NormKind::RmsNorm);
        QVERIFY(c.activation == Activation::SwiGlu);
        QVERIFY(c.rope.scaling == RopeConfig::Scaling::Llama3);
        QCOMPARE(c.rope.originalContext, 64);
        QVERIFY(!c.tiedEmbeddings);
        QCOMPARE((*m)->tokenizer->kind(), std::string("sentencepiece-bpe"));
        QVERIFY((*m)->warnings.empty());
    }

    // The tokenizer and the model together: BOS first, ids inside the vocabulary, a forward that runs.
    void textRunsEndToEnd()
    {
        Result<ModelPtr> m = loadModel(folder("end-to-end", Spec{}));
        QVERIFY2(m, m.error().c_str());
        Result<TokenizedText> t = (*m)->tokenizer->encode("the llama hums\n");
        QVERIFY(t);
        QCOMPARE(t->ids.front(), 1);
        QCOMPARE(t->tokens.front(), std::string("<s>"));
        Result<ForwardTrace> trace = forward(**m, t->ids, {}, {});
        QVERIFY2(trace, trace.error().c_str());
    }

    void slidingWindowCapsTheContext()
    {
        Spec s;
        s.modelType = "mistral";
        const std::string dir = copyOf("window", s);
        nlohmann::json c = tinyllama::config(s);
        c["sliding_window"] = 16;
        tinyllama::writeJson(fs::path(dir) / "config.json", c);
        Result<ModelPtr> m = loadModel(dir);
        QVERIFY2(m, m.error().c_str());
        QCOMPARE((*m)->config.contextLength, 16);
        QCOMPARE((*m)->warnings.size(), std::size_t(1));
        QVERIFY2((*m)->warnings[0].find("sliding window") != std::string::npos, (*m)->warnings[0].c_str());
        QVERIFY(!forward(**m, fixture::spreadIds(17, 50), {}, {}));
    }

    void nonFiniteWeightsLoadWithAWarning()
    {
        Spec s;
        s.dtype = DType::BF16;
        const std::string dir = copyOf("nan", s);
        std::vector<NamedTensor> t = tinyllama::tensors(s);
        for (NamedTensor& x : t)
            if (x.name == "model.layers.1.mlp.up_proj.weight") x.values[5] = std::nanf("");
        tinyllama::writeWeights(dir, t, s.dtype, 1);
        Result<ModelPtr> m = loadModel(dir);
        QVERIFY2(m, m.error().c_str());
        QCOMPARE((*m)->warnings.size(), std::size_t(1));
        QVERIFY2((*m)->warnings[0].find("model.layers.1.mlp.up_proj.weight") != std::string::npos &&
                     (*m)->warnings[0].find("NaN") != std::string::npos && (*m)->warnings[0].find("index 5") != std::string::npos,
                 (*m)->warnings[0].c_str());
    }

    // A Hugging Face cache snapshot links its files into ../../blobs: a shard there is allowed.
    void cacheSnapshotLinksAreAllowed()
    {
        Spec s;
        s.shards = 2;
        const fs::path repo = m_tmp.filePath("cache/models--tiny").toStdString();
        const fs::path snapshot = repo / "snapshots" / "0123abcd";
        fs::create_directories(repo / "blobs");
        tinyllama::writeFolder((repo / "snapshots").string(), "0123abcd", s);
        for (const char* shard : {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}) {
            const fs::path blob = repo / "blobs" / (std::string("sha-") + shard);
            fs::rename(snapshot / shard, blob);
            fs::create_symlink(fs::path("../../blobs") / blob.filename(), snapshot / shard);
        }
        Result<ModelPtr> m = loadModel(snapshot.string());
        QVERIFY2(m, m.error().c_str());
    }

    // Every hostile folder gets one sentence naming the file and the problem; none may crash.
    void badFolders_data()
    {
        QTest::addColumn<std::string>("change");
        QTest::addColumn<std::string>("problem");
        QTest::newRow("no hidden_size") << std::string("config-:hidden_size") << std::string("\"hidden_size\"");
        QTest::newRow("kv heads do not divide heads") << std::string("config:num_key_value_heads=3") << std::string("key/value heads");
        QTest::newRow("head_dim odd") << std::string("config:head_dim=7") << std::string("even d_head");
        QTest::newRow("head_dim 0") << std::string("config:head_dim=0") << std::string("d_head is 0");
        QTest::newRow("head_dim past the projections") << std::string("config:head_dim=16") << std::string("q_proj.weight");
        QTest::newRow("heads a string") << std::string("config:num_attention_heads=\"four\"") << std::string("not a whole number");
        QTest::newRow("rope scaling yarn") << std::string("config:rope_scaling={\"rope_type\": \"yarn\", \"factor\": 4}") << std::string("yarn");
        QTest::newRow("llama3 scaling with low >= high") << std::string("config:rope_scaling={\"rope_type\": \"llama3\", \"factor\": 8, \"low_freq_factor\": 4, \"high_freq_factor\": 1, \"original_max_position_embeddings\": 64}")
                                                     << std::string("low_freq_factor");
        QTest::newRow("rope_theta not a number") << std::string("config:rope_theta=\"big\"") << std::string("rope_theta");
        QTest::newRow("gelu activation") << std::string("config:hidden_act=\"gelu\"") << std::string("gelu");
        QTest::newRow("mlp_bias") << std::string("config:mlp_bias=true") << std::string("mlp_bias");
        QTest::newRow("vocabulary smaller than the tokenizer") << std::string("config:vocab_size=100") << std::string("vocab_size");
        QTest::newRow("absurd layer count") << std::string("config:num_hidden_layers=100000") << std::string("layers");
        QTest::newRow("lm_head missing while untied") << std::string("drop:lm_head.weight") << std::string("'lm_head.weight' is missing");
        QTest::newRow("k_proj with the wrong shape") << std::string("shape:model.layers.0.self_attn.k_proj.weight") << std::string("has shape");
        QTest::newRow("qwen2 without its biases") << std::string("config:model_type=\"qwen2\"") << std::string("q_proj.bias");
        QTest::newRow("no tokenizer.json") << std::string("remove:tokenizer.json") << std::string("no tokenizer.json");
        QTest::newRow("tokenizer.json not JSON") << std::string("write:tokenizer.json=nope") << std::string("not valid JSON");
        QTest::newRow("no weights at all") << std::string("remove:model.safetensors") << std::string("neither model.safetensors");
        QTest::newRow("only a PyTorch pickle") << std::string("pickle") << std::string("pickle");
        QTest::newRow("truncated safetensors") << std::string("truncate:model.safetensors") << std::string("model.safetensors");
        QTest::newRow("index not JSON") << std::string("index:nope") << std::string("not valid JSON");
        QTest::newRow("index without weight_map") << std::string("index:{\"metadata\": {}}") << std::string("weight_map");
        QTest::newRow("index shard not a string") << std::string("index:{\"weight_map\": {\"model.norm.weight\": 3}}") << std::string("not a file name");
        QTest::newRow("index names a missing shard") << std::string("index-missing") << std::string("not in the model folder");
        QTest::newRow("index names ../") << std::string("index-parent") << std::string("not a file name inside the model folder");
        QTest::newRow("index names an absolute path") << std::string("index-absolute") << std::string("not a file name inside the model folder");
        QTest::newRow("index names a symlink out of the folder") << std::string("index-symlink") << std::string("leads outside the model folder");
        QTest::newRow("index puts a tensor in the wrong shard") << std::string("index-wrong-shard") << std::string("does not hold it");
        // Every JSON file of the folder is read through the one JSON reader, whose nesting limit refuses these
        // before the parser allocates a container per bracket.
        const std::string deep = std::string(100000, '[') + std::string(100000, ']');
        QTest::newRow("index nested 100000 deep") << "index:{\"weight_map\": " + deep + "}" << std::string("deeper than");
        QTest::newRow("tokenizer.json nested 100000 deep") << "write:tokenizer.json={\"a\": " + deep + "}" << std::string("deeper than");
        QTest::newRow("tokenizer_config.json nested 100000 deep") << "write:tokenizer_config.json={\"a\": " + deep + "}"
                                                                  << std::string("deeper than");
        // A file that opens a list is refused by that first byte, before the nesting is counted.
        QTest::newRow("tokenizer.json a deep list") << "write:tokenizer.json=" + deep << std::string("not a JSON object");
        QTest::newRow("index a list") << std::string("index:[1,") << std::string("weight_map");
        QTest::newRow("config.json nested 100000 deep") << "write:config.json={\"model_type\": \"llama\", \"x\": " + deep + "}"
                                                         << std::string("deeper than");
        QTest::newRow("rms_norm_eps past float's range") << std::string("config:rms_norm_eps=1e300") << std::string("rms_norm_eps");
        QTest::newRow("rms_norm_eps zero") << std::string("config:rms_norm_eps=0") << std::string("between 0 and 1");
    }
    void badFolders()
    {
        QFETCH(std::string, change);
        QFETCH(std::string, problem);
        Spec spec;
        const bool sharded = change.starts_with("index");
        if (sharded) spec.shards = 2;
        const std::string dir = copyOf(QTest::currentDataTag(), spec);
        const fs::path d(dir);
        const std::string shard1 = "model-00001-of-00002.safetensors";
        auto index = [&] {
            std::ifstream in(d / "model.safetensors.index.json");
            return nlohmann::json::parse(in);
        };
        auto mapEveryTensorTo = [&](const std::string& file) {
            nlohmann::json j = index();
            for (auto& [name, shard] : j["weight_map"].items()) shard = file;
            tinyllama::writeJson(d / "model.safetensors.index.json", j);
        };
        // An outside file that is a valid checkpoint, so only the path rule can refuse it.
        const fs::path outside = fs::path(m_tmp.path().toStdString()) / ("outside-" + std::string(QTest::currentDataTag()) + ".safetensors");
        if (change.starts_with("config-:")) {
            nlohmann::json c = tinyllama::config(spec);
            c.erase(change.substr(8));
            tinyllama::writeJson(d / "config.json", c);
        } else if (change.starts_with("config:")) {
            nlohmann::json c = tinyllama::config(spec);
            const std::size_t eq = change.find('=');
            c[change.substr(7, eq - 7)] = nlohmann::json::parse(change.substr(eq + 1));
            tinyllama::writeJson(d / "config.json", c);
        } else if (change.starts_with("drop:") || change.starts_with("shape:")) {
            std::vector<NamedTensor> t = tinyllama::tensors(spec);
            const std::string name = change.substr(change.find(':') + 1);
            for (auto it = t.begin(); it != t.end(); ++it)
                if (it->name == name) {
                    if (change.starts_with("drop:")) t.erase(it);
                    else it->shape = {it->shape[1], it->shape[0]};
                    break;
                }
            tinyllama::writeWeights(d, t, spec.dtype, 1);
        } else if (change.starts_with("remove:")) {
            fs::remove(d / change.substr(7));
        } else if (change.starts_with("write:")) {
            const std::size_t eq = change.find('=');
            tinyllama::writeText(d / change.substr(6, eq - 6), change.substr(eq + 1));
        } else if (change == "pickle") {
            fs::remove(d / "model.safetensors");
            tinyllama::writeText(d / "pytorch_model.bin", "PK");
        } else if (change.starts_with("truncate:")) {
            fs::resize_file(d / change.substr(9), fs::file_size(d / change.substr(9)) - 100);
        } else if (change.starts_with("index:")) {
            tinyllama::writeText(d / "model.safetensors.index.json", change.substr(6));
        } else if (change == "index-missing") {
            fs::remove(d / shard1);
        } else if (change == "index-parent") {
            fs::copy_file(d / shard1, d.parent_path() / "stolen.safetensors", fs::copy_options::overwrite_existing);
            mapEveryTensorTo("../stolen.safetensors");
        } else if (change == "index-absolute") {
            fs::copy_file(d / shard1, outside, fs::copy_options::overwrite_existing);
            mapEveryTensorTo(outside.string());
        } else if (change == "index-symlink") {
            fs::copy_file(d / shard1, outside, fs::copy_options::overwrite_existing);
            fs::create_symlink(outside, d / "link.safetensors");
            mapEveryTensorTo("link.safetensors");
        } else if (change == "index-wrong-shard") {
            nlohmann::json j = index();
            j["weight_map"]["model.norm.weight"] = j["weight_map"]["model.norm.weight"] == shard1 ? "model-00002-of-00002.safetensors" : shard1;
            tinyllama::writeJson(d / "model.safetensors.index.json", j);
        }
        Result<ModelPtr> r = loadModel(dir);
        QVERIFY(!r);
        QVERIFY2(r.error().find(problem) != std::string::npos, r.error().c_str());
        QVERIFY2(r.error().find(dir) != std::string::npos || r.error().find("'") != std::string::npos, r.error().c_str());
    }

    // The research instruments' next-token loss reads a Llama model's RMSNorm and stored, untied unembedding:
    // the mean of -ln p(ids[t+1] | ids[0..t]) equals the reference's, prefix by prefix.
    void nextTokenLossMatchesReference_data()
    {
        QTest::addColumn<bool>("tied");
        QTest::newRow("untied lm_head") << false;
        QTest::newRow("tied embedding") << true;
    }
    void nextTokenLossMatchesReference()
    {
        QFETCH(bool, tied);
        Spec s;
        s.tied = tied;
        s.dtype = DType::BF16;
        const std::string dir = folder(tied ? "loss-tied" : "loss-untied", s);
        Result<ModelPtr> m = loadModel(dir);
        QVERIFY2(m, m.error().c_str());
        const std::vector<int> ids = fixture::spreadIds(9, (*m)->config.vocabSize);
        Result<double> loss = sentenceLoss(**m, ids, {});
        QVERIFY2(loss, loss.error().c_str());
        const llamaref::Model ref(dir);
        double expected = 0;
        for (std::size_t t = 0; t + 1 < ids.size(); ++t) {
            const std::vector<int> prefix(ids.begin(), ids.begin() + std::ptrdiff_t(t + 1));
            expected -= std::log(ref.run(prefix, {}).nextProbabilities[std::size_t(ids[t + 1])]);
        }
        expected /= double(ids.size() - 1);
        QVERIFY2(std::abs(*loss - expected) < 1e-4, qPrintable(QString("loss %1, reference %2").arg(*loss).arg(expected)));
        // Direct logit attribution centres parts as layer norm does; for RMSNorm it says so instead.
        Result<LogitAttribution> a = directLogitAttribution(**m, ids, {}, 3);
        QVERIFY(!a);
        QVERIFY2(a.error().find("GPT-2-layout") != std::string::npos, a.error().c_str());
    }

    // Stored weights convert exactly: F32 byte for byte, BF16 to the float with the same top 16 bits.
    void storedLayerMatchesTheFile()
    {
        Spec s;
        s.dtype = DType::BF16;
        Result<ModelPtr> m = loadModel(folder("bf16-layer", s));
        QVERIFY2(m, m.error().c_str());
        LayerWeights lw;
        (*m)->weights.stored->loadLayer(1, lw);
        const std::vector<NamedTensor> t = tinyllama::tensors(s);
        for (const NamedTensor& x : t) {
            if (x.name != "model.layers.1.self_attn.k_proj.weight") continue;
            // nn.Linear [out, in] = (KV, D); the core holds it as (in, out) = (D, KV).
            QCOMPARE(lw.wk.rows(), Eigen::Index(32));
            QCOMPARE(lw.wk.cols(), Eigen::Index(16));
            for (int o = 0; o < 16; ++o)
                for (int i = 0; i < 32; ++i)
                    QCOMPARE(lw.wk(i, o), bfloat16ToFloat(floatToBfloat16(x.values[std::size_t(o * 32 + i)])));
        }
    }
};

QTEST_APPLESS_MAIN(TestLlamaLoader)
#include "tst_llamaloader.moc"
