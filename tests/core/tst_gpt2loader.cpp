// Loading GPT-2-layout folders: small checkpoints written here with known weights, checked for shapes,
// the Q/K/V slicing, a hand-computed attention row, exactness against the plain-loop reference in
// tests/core/gpt2reference.h, F16/BF16 agreement, next-token top-k, and one row per kind of bad folder.
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/model/forward.h"
#include "core/io/loaders/gpt2loader.h"
#include "gpt2reference.h"
#include "core/model/nexttokens.h"
#include "core/io/formats/safetensors.h"
#include "core/text/filetext.h"
#include "tinygpt2.h"
#include "numericcheck.h"
#include "tracecompare.h"
#include "core/open/openmodel.h"

using namespace attnscope;
namespace fs = std::filesystem;

Q_DECLARE_METATYPE(std::string)
Q_DECLARE_METATYPE(attnscope::DType)

namespace {

using namespace tinygpt2;

using tracecompare::worstDifference;

const std::vector<int> kIds = {464, 3290, 3332, 319, 262, 2603, 13, 198, 40, 1101, 257, 3797};  // 12 tokens

} // namespace

class TestGpt2Loader : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    std::string m_f32, m_f16, m_bf16;

private slots:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        const std::vector<NamedTensor> t = tinyTensors(7);
        m_f32 = writeFolder(m_tmp, "tiny-f32", t, DType::F32);
        m_f16 = writeFolder(m_tmp, "tiny-f16", t, DType::F16);
        m_bf16 = writeFolder(m_tmp, "tiny-bf16", t, DType::BF16);
    }

    // Quoting a deeply nested value in an error message would recurse once per level, and building it
    // costs a container per bracket: a hostile config.json or tokenizer.json is refused by its nesting
    // (parseJson's limit of 64 levels) before the parser allocates, with a sentence naming the file.
    void deeplyNestedJsonIsRefusedWithASentence()
    {
        const std::string dir = writeFolder(m_tmp, "deep", tinyTensors(3));
        const std::string deep = std::string(200000, '[') + std::string(200000, ']');
        writeText(fs::path(dir) / "config.json", "{\"n_layer\": " + deep + ", \"n_head\": 2}");
        Result<ModelPtr> r = loadModel(dir);
        QVERIFY(!r);
        QVERIFY2(r.error().find("config.json' nests JSON deeper than 64 levels") != std::string::npos, r.error().c_str());
        // Within the limit, a container where a number belongs is named by its type, never dumped.
        writeText(fs::path(dir) / "config.json", "{\"n_layer\": " + std::string(60, '[') + std::string(60, ']') + "}");
        r = loadModel(dir);
        QVERIFY(!r);
        QVERIFY2(r.error().find("n_layer") != std::string::npos && r.error().find("array") != std::string::npos,
                 r.error().c_str());

        const std::string dir2 = writeFolder(m_tmp, "deep-tokenizer", tinyTensors(3));
        fs::remove(fs::path(dir2) / "vocab.json");
        fs::remove(fs::path(dir2) / "merges.txt");
        writeText(fs::path(dir2) / "tokenizer.json", "{\"model\": {\"type\": " + deep + "}}");
        r = loadModel(dir2);
        QVERIFY(!r);
        QVERIFY2(r.error().find("tokenizer.json") != std::string::npos, r.error().c_str());
    }

    void loadsConfigAndShapes()
    {
        Result<ModelPtr> r = loadModel(m_f32);  // any spec that is not random/builtin is a folder
        QVERIFY2(r, r.error().c_str());
        const Model& m = **r;
        QCOMPARE(m.config.name, std::string("tiny-f32"));
        QCOMPARE(m.config.architecture, std::string("gpt2"));
        QCOMPARE(m.config.layers, kL);
        QCOMPARE(m.config.heads, kH);
        QCOMPARE(m.config.dModel, kD);
        QCOMPARE(m.config.dHead, kD / kH);
        QCOMPARE(m.config.dFF, 4 * kD);
        QCOMPARE(m.config.contextLength, kC);
        QCOMPARE(m.config.vocabSize, kV);
        QVERIFY(m.config.positional == PositionalKind::Learned);
        QVERIFY(m.config.causal);
        QVERIFY(m.config.activation == Activation::GeluTanh);
        QCOMPARE(m.checkShapes().error(), std::string());
        QVERIFY(m.warnings.empty());
        QCOMPARE(m.tokenizer->kind(), std::string("gpt2-bpe"));
        QCOMPARE(m.sinusoidal.rows(), Eigen::Index(kC));
    }

    void slicesQkvAndKeepsOrientation()
    {
        // c_attn[i][c] = 1000 i + c, so W_Q, W_K, W_V each show which column they came from.
        std::vector<NamedTensor> t = tinyTensors(3);
        NamedTensor& cattn = tensor(t, "h.1.attn.c_attn.weight");
        for (int i = 0; i < kD; ++i)
            for (int c = 0; c < 3 * kD; ++c) cattn.values[static_cast<std::size_t>(i * 3 * kD + c)] = float(1000 * i + c);
        NamedTensor& bias = tensor(t, "h.1.attn.c_attn.bias");
        for (int c = 0; c < 3 * kD; ++c) bias.values[static_cast<std::size_t>(c)] = float(c);
        NamedTensor& fc = tensor(t, "h.0.mlp.c_fc.weight");  // (D, F) not square: a transpose would show
        for (int i = 0; i < kD; ++i)
            for (int c = 0; c < kF; ++c) fc.values[static_cast<std::size_t>(i * kF + c)] = float(100 * i + c);
        Result<ModelPtr> r = loadGpt2Folder(writeFolder(m_tmp, "qkv", t));
        QVERIFY2(r, r.error().c_str());
        const LayerWeights& l = (*r)->weights.layers[1];
        for (int i = 0; i < kD; ++i)
            for (int j = 0; j < kD; ++j) {
                QCOMPARE(l.wq(i, j), float(1000 * i + j));
                QCOMPARE(l.wk(i, j), float(1000 * i + kD + j));
                QCOMPARE(l.wv(i, j), float(1000 * i + 2 * kD + j));
            }
        for (int j = 0; j < kD; ++j) {
            QCOMPARE(l.bq(j), float(j));
            QCOMPARE(l.bk(j), float(kD + j));
            QCOMPARE(l.bv(j), float(2 * kD + j));
        }
        QCOMPARE((*r)->weights.layers[0].w1(3, 17), 317.0f);
    }

    void handComputedAttention()
    {
        // Tokens 0 and 1 embed as (10, -10, 0, ...) and (-10, 10, 0, ...); with ln_1 gain 1 and bias 0 their
        // layer norms are u = +-(2, -2, 0, ...) (mean 0, variance 200/8 = 25), so |u|^2 = 8. Head 0 reads
        // dims 0-3; with W_Q = s I and W_K = I there and no biases, q1.k0 = -8s and q1.k1 = 8s, scaled by
        // 1/sqrt(Dh = 4) to -+4s. Choosing 8s = ln 3 makes row 1 softmax to exactly [1/4, 3/4].
        std::vector<NamedTensor> t = tinyTensors(5);
        auto& wte = tensor(t, "wte.weight").values;
        for (int d = 0; d < kD; ++d) {
            wte[static_cast<std::size_t>(d)] = d == 0 ? 10.0f : d == 1 ? -10.0f : 0.0f;
            wte[static_cast<std::size_t>(kD + d)] = d == 0 ? -10.0f : d == 1 ? 10.0f : 0.0f;
        }
        for (float& x : tensor(t, "wpe.weight").values) x = 0.0f;
        for (float& x : tensor(t, "h.0.ln_1.weight").values) x = 1.0f;
        for (float& x : tensor(t, "h.0.ln_1.bias").values) x = 0.0f;
        for (float& x : tensor(t, "h.0.attn.c_attn.bias").values) x = 0.0f;
        auto& w = tensor(t, "h.0.attn.c_attn.weight").values;
        for (float& x : w) x = 0.0f;
        const double s = std::log(3.0) / 8.0;
        for (int i = 0; i < 4; ++i) {
            w[static_cast<std::size_t>(i * 3 * kD + i)] = float(s);         // W_Q columns 0..3
            w[static_cast<std::size_t>(i * 3 * kD + kD + i)] = 1.0f;        // W_K columns 8..11
        }
        Result<ModelPtr> r = loadGpt2Folder(writeFolder(m_tmp, "hand", t));
        QVERIFY2(r, r.error().c_str());
        Result<ForwardTrace> trace = forward(**r, {0, 1}, AttentionSettings{});
        QVERIFY2(trace, trace.error().c_str());
        const Matrix& a = trace->weights(0, 0);
        QCOMPARE(a(0, 0), 1.0f);
        QVERIFY(a(0, 1) == 0.0);
        const numericcheck::Worst diff = numericcheck::difference(a.row(1), Eigen::RowVector2d(0.25, 0.75));
        QVERIFY2(diff.within(1e-5), diff.message("row 1 against [0.25, 0.75]").c_str());
    }

    void matchesReference_data()
    {
        QTest::addColumn<bool>("causal");
        QTest::addColumn<bool>("sqrtScaling");
        QTest::addColumn<double>("temperature");
        QTest::addColumn<bool>("learned");
        for (bool causal : {true, false})
            for (bool sqrtScaling : {true, false})
                for (double temperature : {0.5, 1.0, 3.0})
                    for (bool learned : {true, false}) {
                        const QString name = QString("%1, %2, T=%3, %4 positions")
                                                 .arg(causal ? "causal" : "no mask", sqrtScaling ? "sqrt-dk" : "unscaled")
                                                 .arg(temperature)
                                                 .arg(learned ? "learned" : "no");
                        QTest::newRow(qPrintable(name)) << causal << sqrtScaling << temperature << learned;
                    }
    }
    void matchesReference()
    {
        QFETCH(bool, causal);
        QFETCH(bool, sqrtScaling);
        QFETCH(double, temperature);
        QFETCH(bool, learned);
        Result<ModelPtr> model = loadGpt2Folder(m_f32);
        QVERIFY2(model, model.error().c_str());
        AttentionSettings s;
        s.mask = causal ? MaskKind::Causal : MaskKind::None;
        s.scaling = sqrtScaling ? Scaling::SqrtDk : Scaling::None;
        s.temperature = temperature;
        s.positional = learned ? PositionalOverride::Learned : PositionalOverride::None;
        Result<ForwardTrace> trace = forward(**model, kIds, s);
        QVERIFY2(trace, trace.error().c_str());
        const gpt2ref::Checkpoint ck(m_f32 + "/model.safetensors");
        const auto ref = gpt2ref::attention(ck, kL, kH, kD, 1e-5, kIds, {causal, sqrtScaling, temperature, learned});
        const numericcheck::Worst worst = worstDifference(*trace, ref);
        QVERIFY2(worst.within(1e-4), worst.message("attention").c_str());
    }

    void halfPrecisionCheckpointsAgree_data()
    {
        QTest::addColumn<DType>("dtype");
        QTest::newRow("F16") << DType::F16;
        QTest::newRow("BF16") << DType::BF16;
    }
    void halfPrecisionCheckpointsAgree()
    {
        // The same stored weights computed in float32 here and in double by the reference.
        QFETCH(DType, dtype);
        const std::string folder = dtype == DType::F16 ? m_f16 : m_bf16;
        Result<ModelPtr> model = loadGpt2Folder(folder);
        QVERIFY2(model, model.error().c_str());
        Result<ForwardTrace> trace = forward(**model, kIds, AttentionSettings{});
        QVERIFY2(trace, trace.error().c_str());
        const gpt2ref::Checkpoint ck(folder + "/model.safetensors");
        const numericcheck::Worst worst = worstDifference(*trace, gpt2ref::attention(ck, kL, kH, kD, 1e-5, kIds, {}));
        QVERIFY2(worst.within(1e-3), worst.message("attention").c_str());
    }

    void nextTokensAreSortedProbabilities()
    {
        Result<ModelPtr> model = loadGpt2Folder(m_f32);
        QVERIFY(model);
        CaptureRequest capture;
        capture.nextTokenLogits = true;
        Result<ForwardTrace> trace = forward(**model, kIds, AttentionSettings{}, capture);
        QVERIFY(trace);
        const std::vector<NextToken> top = topK(*trace, *(*model)->tokenizer, 5);
        QCOMPARE(top.size(), std::size_t(5));
        // The top id is the arg-max of the logits, probabilities fall, and the full softmax sums to 1.
        Eigen::Index best = 0;
        trace->nextLogits.maxCoeff(&best);
        QCOMPARE(top[0].id, int(best));
        for (std::size_t i = 1; i < top.size(); ++i) QVERIFY(top[i].p <= top[i - 1].p);
        const std::vector<NextToken> all = topK(*trace, *(*model)->tokenizer, kV);
        double sum = 0;
        for (const NextToken& n : all) sum += n.p;
        QVERIFY2(std::abs(sum - 1.0) < 1e-4, qPrintable(QString("probabilities sum to %1").arg(sum)));
        QCOMPARE(top[0].token, (*model)->tokenizer->displayToken(top[0].id));
    }

    void nonFiniteWeightsLoadWithAWarning()
    {
        std::vector<NamedTensor> t = tinyTensors(9);
        tensor(t, "h.1.mlp.c_fc.bias").values[5] = std::nanf("");
        tensor(t, "wpe.weight").values[17] = INFINITY;
        Result<ModelPtr> r = loadGpt2Folder(writeFolder(m_tmp, "nan", t));
        QVERIFY2(r, r.error().c_str());
        const std::vector<std::string>& w = (*r)->warnings;
        QCOMPARE(w.size(), std::size_t(2));
        QVERIFY2(w[0].find("wpe.weight") != std::string::npos && w[0].find("index 17") != std::string::npos, w[0].c_str());
        QVERIFY2(w[1].find("h.1.mlp.c_fc.bias") != std::string::npos && w[1].find("NaN") != std::string::npos &&
                     w[1].find("index 5") != std::string::npos, w[1].c_str());
    }

    void acceptsNamesWithoutPrefixAndTokenizerJson()
    {
        std::vector<NamedTensor> t = tinyTensors(7);
        for (NamedTensor& x : t) x.name = x.name.substr(std::string("transformer.").size());
        t.push_back({"lm_head.weight", {kV, kD}, std::vector<float>(std::size_t(kV) * kD, 0.0f)});
        const fs::path dir = writeFolder(m_tmp, "bare", t);
        // Replace vocab.json + merges.txt with a tokenizer.json holding the same tables.
        std::ifstream vin(dir / "vocab.json");
        const nlohmann::json vocab = nlohmann::json::parse(vin);
        nlohmann::json merges = nlohmann::json::array();
        std::ifstream min(dir / "merges.txt");
        std::string line;
        std::getline(min, line);
        while (std::getline(min, line))
            if (!line.empty()) merges.push_back(line);
        writeText(dir / "tokenizer.json", nlohmann::json{{"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}}}}.dump());
        fs::remove(dir / "vocab.json");
        fs::remove(dir / "merges.txt");
        Result<ModelPtr> bare = loadGpt2Folder(dir.string());
        QVERIFY2(bare, bare.error().c_str());
        Result<ModelPtr> prefixed = loadGpt2Folder(m_f32);
        QVERIFY(prefixed);
        QVERIFY((*bare)->weights.layers[1].wv == (*prefixed)->weights.layers[1].wv);
        QCOMPARE((*bare)->tokenizer->encode("Hello world")->ids, (std::vector<int>{15496, 995}));
    }

    void refusesLongInput()
    {
        Result<ModelPtr> model = loadGpt2Folder(m_f32);
        QVERIFY(model);
        Result<ForwardTrace> trace = forward(**model, std::vector<int>(kC + 1, 0), AttentionSettings{});
        QVERIFY(!trace);
        QVERIFY2(trace.error().find("17 tokens") != std::string::npos && trace.error().find("16 tokens") != std::string::npos,
                 trace.error().c_str());
    }

    // Every JSON file AttnScope reads is an object, so the first byte past white space (and a byte order
    // mark) decides a list or a scalar: refused as "not a JSON object" even where the rest would not even
    // parse, which shows that nothing after that byte was read.
    void jsonObjectDecidedByItsFirstByte_data()
    {
        QTest::addColumn<std::string>("text");
        QTest::addColumn<std::string>("problem");  // "" for accepted
        QTest::newRow("an object") << std::string(R"({"a":1})") << std::string();
        QTest::newRow("an object after white space and a BOM") << std::string("\xEF\xBB\xBF \r\n\t{\"a\":1}") << std::string();
        QTest::newRow("a list") << std::string("[1]") << std::string("not a JSON object");
        QTest::newRow("a list that is not valid JSON") << std::string("[1,") << std::string("not a JSON object");
        QTest::newRow("a string") << std::string(" \"x") << std::string("not a JSON object");
        QTest::newRow("a negative number") << std::string("-1x") << std::string("not a JSON object");
        QTest::newRow("a literal") << std::string("null,") << std::string("not a JSON object");
        QTest::newRow("a word that is not a literal") << std::string("nope") << std::string("not valid JSON");
        QTest::newRow("a minus sign alone") << std::string("-x") << std::string("not valid JSON");
        QTest::newRow("an object that is not valid JSON") << std::string(R"({"a":)") << std::string("not valid JSON");
        QTest::newRow("no JSON at all") << std::string("<html>") << std::string("not valid JSON");
        QTest::newRow("white space only") << std::string(" \n") << std::string("not valid JSON");
        QTest::newRow("empty") << std::string() << std::string("not valid JSON");
    }
    void jsonObjectDecidedByItsFirstByte()
    {
        QFETCH(std::string, text);
        QFETCH(std::string, problem);
        const Result<nlohmann::json> j = parseJsonObject(text, "'t.json'");
        if (problem.empty()) {
            QVERIFY2(j, j.error().c_str());
            QCOMPARE(j->at("a").get<int>(), 1);
            return;
        }
        QVERIFY(!j);
        QVERIFY2(j.error().find(problem) != std::string::npos, j.error().c_str());
        QVERIFY2(j.error().find("'t.json'") != std::string::npos, j.error().c_str());
        // The config reader takes the same path and the same sentence.
        const Result<ModelConfig> c = parseGpt2Config(text, "/m/config.json");
        QVERIFY(!c);
        QVERIFY2(c.error().find(problem) != std::string::npos, c.error().c_str());
    }

    // eos_token_id, which generation stops at: one id or a list, each inside the vocabulary.
    void endTokens_data()
    {
        QTest::addColumn<std::string>("value");
        QTest::addColumn<std::vector<int>>("ids");  // empty with a problem below
        QTest::addColumn<std::string>("problem");
        QTest::newRow("absent") << std::string() << std::vector<int>{} << std::string();
        QTest::newRow("null") << std::string("null") << std::vector<int>{} << std::string();
        QTest::newRow("one id") << std::string("50") << std::vector<int>{50} << std::string();
        QTest::newRow("a list") << std::string("[3, 7, 9]") << std::vector<int>{3, 7, 9} << std::string();
        QTest::newRow("past the vocabulary") << std::string("100") << std::vector<int>{} << std::string("below the vocabulary size 100");
        QTest::newRow("negative") << std::string("[1, -2]") << std::vector<int>{} << std::string("eos_token_id");
        QTest::newRow("a string") << std::string("\"</s>\"") << std::vector<int>{} << std::string("eos_token_id");
    }
    void endTokens()
    {
        QFETCH(std::string, value);
        QFETCH(std::vector<int>, ids);
        QFETCH(std::string, problem);
        std::string text = R"({"n_layer":1,"n_head":2,"n_embd":8,"vocab_size":100,"n_positions":16)";
        if (!value.empty()) text += R"(,"eos_token_id":)" + value;
        text += "}";
        const Result<ModelConfig> c = parseGpt2Config(text, "/m/config.json");
        if (!problem.empty()) {
            QVERIFY(!c);
            QVERIFY2(c.error().find(problem) != std::string::npos, c.error().c_str());
            return;
        }
        QVERIFY2(c, c ? "" : c.error().c_str());
        QCOMPARE(c->endTokenIds, ids);
    }

    // One row per kind of bad folder: the sentence names the file or tensor and the problem.
    void badFolders_data()
    {
        QTest::addColumn<QString>("change");
        QTest::addColumn<std::string>("expected1");
        QTest::addColumn<std::string>("expected2");
        QTest::newRow("folder missing") << "no-folder" << std::string("does not exist") << std::string("missing-folder");
        QTest::newRow("config.json missing") << "rm config.json" << std::string("no config.json") << std::string("case");
        QTest::newRow("model.safetensors missing") << "rm model.safetensors" << std::string("neither model.safetensors nor model.safetensors.index.json") << std::string("case");
        QTest::newRow("pytorch pickle instead of safetensors") << "pickle" << std::string("pytorch_model.bin")
                                                               << std::string("save_pretrained(folder, safe_serialization=True)");
        QTest::newRow("tokenizer missing") << "rm tokenizer" << std::string("no tokenizer") << std::string("tokenizer.json");
        QTest::newRow("vocab.json malformed") << "bad vocab" << std::string("vocab.json") << std::string("not valid JSON");
        QTest::newRow("config.json not JSON") << "config:{" << std::string("config.json") << std::string("not valid JSON");
        QTest::newRow("config.json a list") << "config:[1]" << std::string("config.json") << std::string("not a JSON object");
        QTest::newRow("n_layer zero") << "config:n_layer=0" << std::string("config.json") << std::string("number of layers is 0");
        QTest::newRow("n_head negative") << "config:n_head=-4" << std::string("config.json") << std::string("number of heads is -4");
        QTest::newRow("n_embd absurd") << "config:n_embd=100000000" << std::string("config.json") << std::string("d_model is 100000000");
        QTest::newRow("vocab_size past 2^31") << "config:vocab_size=99999999999" << std::string("config.json") << std::string("absurd");
        QTest::newRow("n_layer a string") << "config:n_layer=\"12\"" << std::string("config.json") << std::string("not a whole number");
        QTest::newRow("n_head missing") << "config:n_head=-" << std::string("config.json") << std::string("no \"n_head\"");
        QTest::newRow("d_model not divisible by heads") << "config:n_head=3" << std::string("config.json") << std::string("not divisible");
        QTest::newRow("unknown activation") << "config:activation_function=\"mish\"" << std::string("config.json") << std::string("mish");
        QTest::newRow("tensor missing") << "drop h.1.mlp.c_fc.bias" << std::string("'h.1.mlp.c_fc.bias' is missing") << std::string("model.safetensors");
        QTest::newRow("tensor of the wrong shape for config") << "config:n_positions=32" << std::string("wpe.weight") << std::string("has shape [16, 8] but config.json implies [32, 8]");
        QTest::newRow("truncated safetensors") << "truncate" << std::string("model.safetensors") << std::string("outside");
        QTest::newRow("safetensors header not JSON") << "garble header" << std::string("model.safetensors") << std::string("not valid JSON");
    }
    void badFolders()
    {
        QFETCH(QString, change);
        QFETCH(std::string, expected1);
        QFETCH(std::string, expected2);
        const fs::path dir = writeFolder(m_tmp, "bad", tinyTensors(1));
        std::string folder = dir.string();
        const std::string c = change.toStdString();
        if (c == "no-folder") folder = (dir.parent_path() / "missing-folder").string();
        else if (c.starts_with("rm tokenizer")) { fs::remove(dir / "vocab.json"); fs::remove(dir / "merges.txt"); }
        else if (c.starts_with("rm ")) fs::remove(dir / c.substr(3));
        else if (c == "pickle") { fs::rename(dir / "model.safetensors", dir / "pytorch_model.bin"); }
        else if (c == "bad vocab") writeText(dir / "vocab.json", "{\"a\": ");
        else if (c == "config:{" || c == "config:[1]") writeText(dir / "config.json", c.substr(7));
        else if (c.starts_with("config:")) {
            nlohmann::json config = tinyConfig();
            const std::string assignment = c.substr(7);
            const std::string key = assignment.substr(0, assignment.find('='));
            const std::string value = assignment.substr(assignment.find('=') + 1);
            if (value == "-") config.erase(key);
            else config[key] = nlohmann::json::parse(value);
            writeText(dir / "config.json", config.dump());
        } else if (c.starts_with("drop ")) {
            std::vector<NamedTensor> t = tinyTensors(1);
            std::erase_if(t, [&](const NamedTensor& x) { return x.name == "transformer." + c.substr(5); });
            writeFolder(m_tmp, "bad", t);
        } else if (c == "truncate") {
            fs::resize_file(dir / "model.safetensors", fs::file_size(dir / "model.safetensors") / 2);
        } else if (c == "garble header") {
            std::fstream f(dir / "model.safetensors", std::ios::in | std::ios::out | std::ios::binary);
            f.seekp(8);
            f.write("}}", 2);
        }
        Result<ModelPtr> r = loadModel(folder);
        fs::remove_all(dir);
        QVERIFY(!r);
        QVERIFY2(r.error().find(expected1) != std::string::npos, r.error().c_str());
        if (expected2 != "case") QVERIFY2(r.error().find(expected2) != std::string::npos, r.error().c_str());
    }

    // The same tensors as three shards with model.safetensors.index.json (as large checkpoints and
    // `download` come): the same numbers as from one file.
    void shardsGiveTheSameNumbersAsOneFile()
    {
        std::vector<NamedTensor> t = tinygpt2::tinyTensors(21);
        const std::string folder = tinygpt2::writeFolder(m_tmp, "one-file", t);
        const std::string problem = tracecompare::shardsAgainstOneFile(folder, t);
        QVERIFY2(problem.empty(), problem.c_str());
    }
};

QTEST_APPLESS_MAIN(TestGpt2Loader)
#include "tst_gpt2loader.moc"
