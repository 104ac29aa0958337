// Loading GPT-NeoX folders (Pythia's layout): tiny checkpoints written here (tinyneox.h) checked against the
// plain-loop reference in neoxreference.h for every head's attention, the residual stream after every block
// and the next-token logits, over parallel and sequential residuals, rotary_pct 0.25, 0.5 and 1.0, F32, F16
// and BF16, old and new config names, one file and shards; the fused query_key_value split exactly; the
// tokenizer; and one row per kind of hostile folder.
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/io/loaders/gptneoxloader.h"
#include "core/io/modelfolder.h"
#include "core/model/forward.h"
#include "core/model/storedweights.h"
#include "core/open/openmodel.h"
#include "fixturefiles.h"
#include "neoxreference.h"
#include "numericcheck.h"
#include "tinyneox.h"
#include "tracecompare.h"

using namespace attnscope;
namespace fs = std::filesystem;

Q_DECLARE_METATYPE(std::string)
Q_DECLARE_METATYPE(tinyneox::Spec)

namespace {

using tinyneox::Spec;

struct Setting {
    const char* name;
    AttentionSettings settings;
    neoxref::Options options;
};

std::vector<Setting> settingsToCheck()
{
    std::vector<Setting> out;
    out.push_back({"causal", {}, {}});
    AttentionSettings hot;
    hot.mask = MaskKind::None;
    hot.temperature = 0.5;
    out.push_back({"no mask, temperature 0.5", hot, {false, true, 0.5, true}});
    AttentionSettings noPositions;
    noPositions.positional = PositionalOverride::None;
    out.push_back({"positions off", noPositions, {true, true, 1.0, false}});
    return out;
}

} // namespace

class TestGptNeoxLoader : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    fixture::Folders<Spec> m_folders{m_tmp.path().toStdString(), &tinyneox::writeFolder};

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
        models.push_back({"parallel, rotary_pct 0.25, F32, old names", s});
        s = {};
        s.parallelResidual = false;
        models.push_back({"sequential, rotary_pct 0.25", s});
        s = {};
        s.rotaryPct = 0.5;
        s.newNames = true;
        s.rotaryBase = 1000.0;
        models.push_back({"parallel, partial_rotary_factor 0.5, rope_theta 1000 (new names)", s});
        s = {};
        s.rotaryPct = 1.0;
        s.rotaryBase = 500.0;  // the old name for the base, where more than one pair shows it
        s.parallelResidual = false;
        models.push_back({"sequential, rotary_pct 1.0, rotary_emb_base 500", s});
        s = {};
        s.dtype = DType::F16;
        models.push_back({"parallel, F16", s});
        s = {};
        s.dtype = DType::BF16;
        s.shards = 3;
        s.parallelResidual = false;
        s.rotaryPct = 0.5;
        models.push_back({"sequential, BF16, 3 shards, rotary_pct 0.5", s});
        s = {};
        s.tied = true;
        s.attentionBias = false;
        s.newNames = true;
        s.rotaryPct = 1.0;
        models.push_back({"tied, attention_bias false, partial_rotary_factor 1.0", s});
        s = {};
        s.hiddenAct = "gelu_new";
        s.oldBuffers = true;
        s.layers = 3;
        models.push_back({"gelu_new, old buffers, 3 layers", s});
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
        capture.layerResiduals = true;
        Result<ForwardTrace> trace = forward(**model, ids, s.settings, capture);
        QVERIFY2(trace, trace.error().c_str());
        const neoxref::Result ref = neoxref::Model(dir).run(ids, s.options);

        const numericcheck::Worst worst = tracecompare::worstDifference(*trace, ref.attention);
        numericcheck::Worst worstLogit;
        worstLogit.add(trace->nextLogits, ref.nextLogits);
        numericcheck::Worst worstStream;
        for (std::size_t l = 0; l < ref.streams.size(); ++l) {
            worstStream.label("stream %d", int(l));
            worstStream.add(trace->residuals[l], ref.streams[l]);
        }
        qDebug("worst attention difference %.2e, worst logit difference %.2e, worst residual difference %.2e", worst.value(),
               worstLogit.value(), worstStream.value());
        QVERIFY2(worst.within(1e-4), worst.message("attention").c_str());
        QVERIFY2(worstLogit.within(1e-4), worstLogit.message("next-token logits").c_str());
        QVERIFY2(worstStream.within(1e-4), worstStream.message("residual stream").c_str());
    }

    // The control for the rows above: with the same weights, the residual and the rotary width each change
    // the logits by far more than the 1e-4 the comparisons allow, so a loader that ignored either would fail.
    void variantsDifferByMoreThanTheTolerance_data()
    {
        QTest::addColumn<Spec>("baseline");
        QTest::addColumn<Spec>("variant");
        Spec s;
        s.parallelResidual = false;
        QTest::newRow("sequential residual") << Spec{} << s;
        s = {};
        s.rotaryPct = 0.5;
        QTest::newRow("rotary_pct 0.5") << Spec{} << s;
        s = {};
        s.rotaryPct = 1.0;
        QTest::newRow("rotary_pct 1.0") << Spec{} << s;
        // At rotary_pct 0.25 an 8-wide head turns one pair, whose frequency is base^0 = 1 whatever the base:
        // the base shows only from two pairs on.
        Spec whole;
        whole.rotaryPct = 1.0;
        s = whole;
        s.rotaryBase = 100.0;
        QTest::newRow("rotary_emb_base 100, whole head") << whole << s;
    }
    void variantsDifferByMoreThanTheTolerance()
    {
        QFETCH(Spec, baseline);
        QFETCH(Spec, variant);
        const std::string base = folder(std::string("control-base-") + QTest::currentDataTag(), baseline);
        const std::string other = folder(std::string("control-") + QTest::currentDataTag(), variant);
        Result<ModelPtr> a = loadModel(base), b = loadModel(other);
        QVERIFY2(a, a.error().c_str());
        QVERIFY2(b, b.error().c_str());
        CaptureRequest capture;
        capture.nextTokenLogits = true;
        const std::vector<int> ids = fixture::spreadIds(12, (*a)->config.vocabSize);
        Result<ForwardTrace> ta = forward(**a, ids, {}, capture), tb = forward(**b, ids, {}, capture);
        QVERIFY(ta && tb);
        numericcheck::Worst apart;
        apart.add(ta->nextLogits, tb->nextLogits);
        qDebug("%s moves the logits by up to %.2e", QTest::currentDataTag(), apart.value());
        QVERIFY2(apart.exceeds(1e-2), apart.message("the two variants").c_str());
    }

    // The focused head's step-by-step pipeline under the parallel residual: the feed-forward read the
    // layer's input, so ln2 is the norm of residual-in, and residual-out is residual-mid plus its output.
    void stepsFollowTheParallelResidual()
    {
        Result<ModelPtr> m = loadModel(folder("steps", Spec{}));
        QVERIFY2(m, m.error().c_str());
        const std::vector<int> ids = fixture::spreadIds(9, (*m)->config.vocabSize);
        CaptureRequest capture;
        capture.detail = HeadSelection{1, 2};
        Result<ForwardTrace> t = forward(**m, ids, {}, capture);
        QVERIFY2(t, t.error().c_str());
        const HeadDetail& d = t->detail;
        LayerWeights lw;
        (*m)->weights.stored->loadLayer(1, lw);
        const neoxref::Result ref = neoxref::Model(folder("steps", Spec{})).run(ids, {});
        numericcheck::Worst in, out, ln2;
        in.add(d.residualIn, ref.streams[1]);
        out.add(d.residualOut, ref.streams[2]);
        // LayerNorm of residual-in with post_attention_layernorm's gain and bias, in double.
        Eigen::MatrixXd want(d.residualIn.rows(), d.residualIn.cols());
        for (Eigen::Index r = 0; r < want.rows(); ++r) {
            const Eigen::RowVectorXd x = d.residualIn.row(r).cast<double>();
            const double mean = x.mean(), var = (x.array() - mean).square().mean();
            want.row(r) = ((x.array() - mean) / std::sqrt(var + 1e-5) * lw.ln2Gain.cast<double>().array() + lw.ln2Bias.cast<double>().array()).matrix();
        }
        ln2.add(d.ln2, want);
        numericcheck::Worst sum;
        sum.add(d.residualOut, d.residualMid + d.ffOutput);
        QVERIFY2(in.within(1e-4), in.message("residual in").c_str());
        QVERIFY2(out.within(1e-4), out.message("residual out").c_str());
        QVERIFY2(ln2.within(1e-4), ln2.message("ln2 of residual in").c_str());
        QVERIFY2(sum.within(1e-5), sum.message("residual out = mid + feed-forward").c_str());
    }

    // One file and its shards are one model.
    void shardsEqualOneFile()
    {
        Spec s;
        const std::string one = folder("one-file", s);
        s.shards = 4;
        const std::string four = folder("four-shards", s);
        Result<ModelPtr> a = loadModel(one), b = loadModel(four);
        QVERIFY2(a, a.error().c_str());
        QVERIFY2(b, b.error().c_str());
        const numericcheck::Worst w = tracecompare::modelsDiffer(**a, **b, fixture::spreadIds(10, (*a)->config.vocabSize));
        QVERIFY2(w.within(1e-7), w.message("one file against four shards").c_str());
    }

    void readsTheConfig()
    {
        Spec s;
        s.rotaryPct = 0.5;
        Result<ModelPtr> m = loadModel(folder("config", s));
        QVERIFY2(m, m.error().c_str());
        const ModelConfig& c = (*m)->config;
        QCOMPARE(c.architecture, std::string("gpt_neox"));
        QCOMPARE(c.name, std::string("config"));
        QCOMPARE(c.layers, 2);
        QCOMPARE(c.heads, 4);
        QCOMPARE(c.dHead, 8);
        QCOMPARE(c.rotaryDims, 4);
        QCOMPARE(c.rotaryWidth(), 4);
        QCOMPARE((*m)->ropeFrequencies.size(), Eigen::Index(2));
        QVERIFY(c.parallelResidual);
        QVERIFY(c.positional == PositionalKind::Rotary);
        QVERIFY(c.normKind == NormKind::LayerNorm);
        QVERIFY(c.activation == Activation::GeluErf);
        QVERIFY(!c.tiedEmbeddings);
        QCOMPARE(c.endTokenIds, std::vector<int>{0});
        QCOMPARE((*m)->tokenizer->kind(), std::string("byte-level-bpe"));
        QVERIFY((*m)->warnings.empty());
        QVERIFY(isSupportedModelType("gpt_neox"));
        QCOMPARE(architectureOf("gpt_neox"), std::string("gpt_neox"));
    }

    // Pythia's tokenizer form: no prefix space, <|endoftext|> cut out whole, a run of spaces as its added
    // token, and the ids decode back to the text without the special token.
    void tokenizerReadsPythiasForm()
    {
        Result<ModelPtr> m = loadModel(folder("tokenizer", Spec{}));
        QVERIFY2(m, m.error().c_str());
        const int base = tinyneox::tokenizerVocabSize() - 4;  // the four added tokens follow the vocabulary
        const std::string text = "the quick brown fox<|endoftext|>   hello world";
        Result<TokenizedText> t = (*m)->tokenizer->encode(text);
        QVERIFY2(t, t.error().c_str());
        QVERIFY(std::find(t->ids.begin(), t->ids.end(), base) != t->ids.end());      // <|endoftext|>
        QVERIFY(std::find(t->ids.begin(), t->ids.end(), base + 3) != t->ids.end());  // "   "
        QCOMPARE(t->tokens.front().substr(0, 1), std::string("t"));  // no prefix space was added
        for (int id : t->ids) QVERIFY(id >= 0 && id < (*m)->config.vocabSize);
        // Decoding leaves special tokens out, as skip_special_tokens does; everything else comes back.
        QCOMPARE((*m)->tokenizer->decodeWithSpans(t->ids).text, std::string("the quick brown fox   hello world"));
        Result<ForwardTrace> trace = forward(**m, t->ids, {}, {});
        QVERIFY2(trace, trace.error().c_str());
    }

    // The fused query_key_value converts exactly into W_Q, W_K, W_V and their biases: head h's rows
    // h*3*Dh.. are its queries, then its keys, then its values.
    void fusedQkvSplitsPerHead()
    {
        Spec s;
        s.dtype = DType::BF16;
        Result<ModelPtr> m = loadModel(folder("bf16-qkv", s));
        QVERIFY2(m, m.error().c_str());
        LayerWeights lw;
        (*m)->weights.stored->loadLayer(1, lw);
        const int D = s.dModel, Dh = D / s.heads;
        QCOMPARE(lw.w3.size(), Eigen::Index(0));
        int checked = 0;
        for (const NamedTensor& x : tinyneox::tensors(s)) {
            const auto bf = [](float v) { return bfloat16ToFloat(floatToBfloat16(v)); };
            if (x.name == "gpt_neox.layers.1.attention.query_key_value.weight") {
                for (int h = 0; h < s.heads; ++h)
                    for (int part = 0; part < 3; ++part) {
                        const Matrix& w = part == 0 ? lw.wq : part == 1 ? lw.wk : lw.wv;  // (D in, D out)
                        for (int e = 0; e < Dh; ++e)
                            for (int i = 0; i < D; ++i)
                                QCOMPARE(w(i, h * Dh + e), bf(x.values[std::size_t((h * 3 * Dh + part * Dh + e) * D + i)]));
                    }
                ++checked;
            }
            if (x.name == "gpt_neox.layers.1.attention.query_key_value.bias") {
                for (int h = 0; h < s.heads; ++h)
                    for (int e = 0; e < Dh; ++e) {
                        QCOMPARE(lw.bq[h * Dh + e], bf(x.values[std::size_t(h * 3 * Dh + e)]));
                        QCOMPARE(lw.bk[h * Dh + e], bf(x.values[std::size_t(h * 3 * Dh + Dh + e)]));
                        QCOMPARE(lw.bv[h * Dh + e], bf(x.values[std::size_t(h * 3 * Dh + 2 * Dh + e)]));
                    }
                ++checked;
            }
        }
        QCOMPARE(checked, 2);
    }

    void nonFiniteWeightsLoadWithAWarning()
    {
        Spec s;
        s.dtype = DType::F16;
        const std::string dir = copyOf("nan", s);
        std::vector<NamedTensor> t = tinyneox::tensors(s);
        for (NamedTensor& x : t)
            if (x.name == "gpt_neox.layers.0.attention.query_key_value.weight") x.values[7] = std::nanf("");
        fixture::writeWeights(dir, t, s.dtype, 1);
        Result<ModelPtr> m = loadModel(dir);
        QVERIFY2(m, m.error().c_str());
        QCOMPARE((*m)->warnings.size(), std::size_t(1));
        QVERIFY2((*m)->warnings[0].find("query_key_value.weight") != std::string::npos && (*m)->warnings[0].find("NaN") != std::string::npos,
                 (*m)->warnings[0].c_str());
    }

    // Every hostile folder gets one sentence naming the file and the problem; none may crash.
    void badFolders_data()
    {
        QTest::addColumn<std::string>("change");
        QTest::addColumn<std::string>("problem");
        QTest::newRow("no hidden_size") << std::string("config:hidden_size=-") << std::string("\"hidden_size\"");
        QTest::newRow("no intermediate_size") << std::string("config:intermediate_size=-") << std::string("\"intermediate_size\"");
        QTest::newRow("heads do not divide hidden_size") << std::string("config:num_attention_heads=5") << std::string("not divisible");
        QTest::newRow("rotary_pct 0") << std::string("config:rotary_pct=0") << std::string("more than 0");
        QTest::newRow("rotary_pct above 1") << std::string("config:rotary_pct=1.5") << std::string("at most 1");
        QTest::newRow("rotary_pct a string") << std::string("config:rotary_pct=\"quarter\"") << std::string("rotary_pct");
        QTest::newRow("rotary_pct giving an odd width") << std::string("config:rotary_pct=0.375") << std::string("even number");
        QTest::newRow("rotary_pct giving no pair") << std::string("config:rotary_pct=0.1") << std::string("even number");
        QTest::newRow("partial_rotary_factor NaN-like") << std::string("config:partial_rotary_factor=null") << std::string("");
        QTest::newRow("rotary_emb_base below 1") << std::string("config:rotary_emb_base=0.5") << std::string("rope_theta");
        QTest::newRow("rope scaling yarn") << std::string("config:rope_scaling={\"rope_type\": \"yarn\", \"factor\": 4}") << std::string("yarn");
        QTest::newRow("rope_parameters a list") << std::string("config:rope_parameters=[1]") << std::string("not an object");
        QTest::newRow("use_parallel_residual a string") << std::string("config:use_parallel_residual=\"yes\"") << std::string("use_parallel_residual");
        QTest::newRow("activation swiglu") << std::string("config:hidden_act=\"swiglu\"") << std::string("swiglu");
        QTest::newRow("layer_norm_eps zero") << std::string("config:layer_norm_eps=0") << std::string("between 0 and 1");
        QTest::newRow("layer_norm_eps past float's range") << std::string("config:layer_norm_eps=1e300") << std::string("layer_norm_eps");
        QTest::newRow("vocabulary smaller than the tokenizer") << std::string("config:vocab_size=100") << std::string("vocab_size");
        QTest::newRow("absurd layer count") << std::string("config:num_hidden_layers=100000") << std::string("layers");
        QTest::newRow("absurd sizes together") << std::string("config:hidden_size=16384") << std::string("");
        QTest::newRow("absurd context") << std::string("config:max_position_embeddings=1e12") << std::string("max_position_embeddings");
        QTest::newRow("embed_out missing while untied") << std::string("drop:embed_out.weight") << std::string("'embed_out.weight' is missing");
        QTest::newRow("query_key_value missing") << std::string("drop:gpt_neox.layers.1.attention.query_key_value.weight")
                                                 << std::string("query_key_value.weight' is missing");
        QTest::newRow("query_key_value bias missing") << std::string("drop:gpt_neox.layers.0.attention.query_key_value.bias")
                                                      << std::string("query_key_value.bias' is missing");
        QTest::newRow("final norm bias missing") << std::string("drop:gpt_neox.final_layer_norm.bias") << std::string("final_layer_norm.bias");
        QTest::newRow("query_key_value with the wrong shape") << std::string("shape:gpt_neox.layers.0.attention.query_key_value.weight")
                                                              << std::string("has shape");
        QTest::newRow("dense_h_to_4h with the wrong shape") << std::string("shape:gpt_neox.layers.1.mlp.dense_h_to_4h.weight")
                                                            << std::string("has shape");
        QTest::newRow("no tokenizer.json") << std::string("rm tokenizer.json") << std::string("no tokenizer.json");
        QTest::newRow("tokenizer.json not JSON") << std::string("write:tokenizer.json=nope") << std::string("not valid JSON");
        QTest::newRow("no weights at all") << std::string("rm model.safetensors") << std::string("neither model.safetensors");
        QTest::newRow("only a PyTorch pickle") << std::string("pickle") << std::string("pickle");
        QTest::newRow("truncated safetensors") << std::string("truncate") << std::string("model.safetensors");
        const std::string deep = std::string(100000, '[') + std::string(100000, ']');
        QTest::newRow("config.json nested 100000 deep") << "write:config.json={\"model_type\": \"gpt_neox\", \"x\": " + deep + "}"
                                                         << std::string("deeper than");
    }
    void badFolders()
    {
        QFETCH(std::string, change);
        QFETCH(std::string, problem);
        Spec spec;
        const std::string dir = copyOf(QTest::currentDataTag(), spec);
        const fs::path d(dir);
        if (change.starts_with("drop:") || change.starts_with("shape:")) {
            std::vector<NamedTensor> t = tinyneox::tensors(spec);
            const std::string name = change.substr(change.find(':') + 1);
            bool found = false;
            for (auto it = t.begin(); it != t.end(); ++it)
                if (it->name == name) {
                    if (change.starts_with("drop:")) t.erase(it);
                    else it->shape = {it->shape[1], it->shape[0]};
                    found = true;
                    break;
                }
            QVERIFY(found);
            fixture::writeWeights(d, t, spec.dtype, 1);
        } else if (change.starts_with("write:")) {
            const std::size_t eq = change.find('=');
            fixture::writeText(d / change.substr(6, eq - 6), change.substr(eq + 1));
        } else {
            QVERIFY(fixture::applyFolderChange(d, change, tinyneox::config(spec)));
        }
        Result<ModelPtr> r = loadModel(dir);
        if (change == "config:partial_rotary_factor=null") {
            // null is as good as absent: rotary_pct still says 0.25.
            QVERIFY2(r, r.error().c_str());
            return;
        }
        QVERIFY(!r);
        QVERIFY2(r.error().find(problem) != std::string::npos, r.error().c_str());
        QVERIFY2(r.error().find(dir) != std::string::npos || r.error().find("'") != std::string::npos, r.error().c_str());
    }
};

QTEST_APPLESS_MAIN(TestGptNeoxLoader)
#include "tst_gptneoxloader.moc"
