// The research commands (heads, importance, rollout) and --ablate as a script sees them: the exact JSON
// shapes, numbers equal to the core's, and the exit codes of their mistakes.
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QImage>
#include <QTemporaryDir>

#include "clirunner.h"
#include "numericcheck.h"
#include "core/model/forward.h"
#include "core/research/ablation.h"
#include "core/research/circuits.h"
#include "core/research/corpusstats.h"
#include "core/research/headroles.h"
#include "core/research/logitlens.h"
#include "core/research/nexttokenloss.h"
#include "core/research/patching.h"
#include "core/research/rollout.h"
#include "core/open/openmodel.h"

using namespace attnscope;
using clitest::parse;
using clitest::Run;
using clitest::runCli;

namespace {

const char* kSpec = "random:layers=2,heads=4,d_model=64,seed=3";
const char* kText = "the cat sat on the mat and the cat sat again";

ModelPtr model() { return *loadModel(kSpec); }
std::vector<int> ids(const Model& m) { return m.tokenizer->encode(kText)->ids; }


} // namespace

class TestCliResearch : public QObject {
    Q_OBJECT
private slots:
    void headsShapeAndNumbers();
    void headsWithoutTextUseTheProbe();
    void importanceShapeAndNumbers();
    void rolloutShapeAndNumbers();
    void circuitsShapeAndNumbers();
    void attentionWithAblation();
    void perplexityUnderWindowsAndSinks();
    void logitLensShapeAndNumbers();
    void patchShapeAndNumbers();
    void corpusStatsOfTheShippedCorpus();
    void errors_data();
    void errors();
    void renderResearchViews_data();
    void renderResearchViews();
};

void TestCliResearch::headsShapeAndNumbers()
{
    const Run r = runCli({"heads", "--model", kSpec, "--text", kText, "--seed", "5"});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.err.isEmpty());
    QVERIFY(r.out.startsWith("{\"heads\":[{\"layer\":0,\"head\":0,\"kv_head\":0,\"previous_token\":"));
    QVERIFY(!parse(r).contains("kv_groups"));  // the built-in model shares no keys and values
    // Key order is part of the format.
    const QList<QByteArray> order = {"\"layer\"", "\"head\"", "\"kv_head\"", "\"previous_token\"", "\"first_token\"", "\"self\"",
                                     "\"duplicate_token\"", "\"induction\""};
    qsizetype last = -1;
    for (const QByteArray& key : order) {
        const qsizetype at = r.out.indexOf(key);
        QVERIFY2(at > last, key.constData());
        last = at;
    }
    const QJsonArray heads = parse(r)["heads"].toArray();
    QCOMPARE(heads.size(), 8);
    ModelPtr m = model();
    const HeadRoleScores core = *computeHeadRoles(*m, ids(*m), AttentionSettings{}, 5);
    numericcheck::Worst worst;
    for (const QJsonValue& v : heads) {
        const QJsonObject h = v.toObject();
        QCOMPARE(h.keys().size(), 8);  // layer, head, kv_head and the five roles
        const RoleScores& s = core.at(h["layer"].toInt(), h["head"].toInt());
        for (int role = 0; role < kHeadRoleCount; ++role) {
            // A score with nothing to measure is not a finite number in the core and null in the output: that
            // pair is compared as such. Any other null, or a missing key, is read as NaN and fails.
            const char* key = roleKey(HeadRole(role));
            const double want = roleScore(s, HeadRole(role));
            const QJsonValue printed = h[QLatin1String(key)];
            worst.label("head %d.%d %s", h["layer"].toInt(), h["head"].toInt(), key);
            if (std::isfinite(want)) worst.add(printed.toDouble(NAN), want);
            else if (!printed.isNull()) worst.fail("a score the core could not measure is printed as a number");
        }
    }
    QVERIFY2(worst.within(1e-12), worst.message("printed scores against the core's").c_str());
    // The seed moves the probe's scores only.
    const QJsonArray other = parse(runCli({"heads", "--model", kSpec, "--text", kText, "--seed", "6"}))["heads"].toArray();
    QCOMPARE(other[3].toObject()["previous_token"].toDouble(), heads[3].toObject()["previous_token"].toDouble());
    QVERIFY(other[3].toObject()["induction"].toDouble() != heads[3].toObject()["induction"].toDouble());
}

void TestCliResearch::headsWithoutTextUseTheProbe()
{
    const QJsonArray heads = parse(runCli({"heads", "--model", kSpec}))["heads"].toArray();
    QCOMPARE(heads.size(), 8);
    ModelPtr m = model();
    const HeadRoleScores core = *computeHeadRoles(*m, {}, AttentionSettings{}, 1);
    QVERIFY(std::abs(heads[5].toObject()["previous_token"].toDouble() - core.at(1, 1).previousToken) < 1e-12);
}

void TestCliResearch::importanceShapeAndNumbers()
{
    const Run r = runCli({"importance", "--model", kSpec, "--text", kText, "--ablate", "0.2"});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.startsWith("{\"loss\":"));
    QVERIFY(r.out.indexOf("\"importance\"") > 0);
    const QJsonObject o = parse(r);
    QCOMPARE(o.keys().size(), 2);
    ModelPtr m = model();
    AttentionSettings s;
    s.ablated = {{0, 2}};
    const HeadImportance core = *headImportance(*m, ids(*m), s);
    QVERIFY(std::abs(o["loss"].toDouble() - core.loss) < 1e-12);
    const QJsonArray grid = o["importance"].toArray();
    QCOMPARE(grid.size(), 2);
    numericcheck::Worst worst;
    worst.label("layer, head");
    for (int l = 0; l < 2; ++l) {
        QCOMPARE(grid[l].toArray().size(), 4);
        for (int h = 0; h < 4; ++h) worst.add(grid[l][h].toDouble(NAN), core.at(l, h), l, h);
    }
    QVERIFY2(worst.within(1e-12), worst.message("printed importance against the core's").c_str());
    QCOMPARE(grid[0][2].toDouble(NAN), 0.0);  // already ablated (a null is not 0)
}

void TestCliResearch::rolloutShapeAndNumbers()
{
    const Run r = runCli({"rollout", "--model", kSpec, "--text", kText, "--mask", "none"});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.startsWith("{\"tokens\":["));
    const QJsonObject o = parse(r);
    QCOMPARE(o.keys().size(), 2);
    ModelPtr m = model();
    AttentionSettings s;
    s.mask = MaskKind::None;
    const std::vector<Matrix> core = attentionRollout(*forward(*m, ids(*m), s));
    const QJsonArray layers = o["rollout"].toArray();
    const int T = int(ids(*m).size());
    QCOMPARE(o["tokens"].toArray().size(), T);
    QCOMPARE(layers.size(), 2);
    numericcheck::Worst worst;
    for (int l = 0; l < 2; ++l) {
        worst.label("layer %d", l);
        for (int i = 0; i < T; ++i)
            for (int j = 0; j < T; ++j) worst.add(layers[l][i][j].toDouble(NAN), core[l](i, j), i, j);
    }
    QVERIFY2(worst.within(1e-7), worst.message("printed rollout against the core's").c_str());
    // Ablation reaches the rollout: knocking out a layer-0 head changes layer 1's attention and so R_1.
    const QJsonObject ablated = parse(runCli({"rollout", "--model", kSpec, "--text", kText, "--mask", "none", "--ablate", "0.0,0.1"}));
    QVERIFY(ablated["rollout"][1] != layers[1]);
    QCOMPARE(ablated["rollout"][0], layers[0]);
}

// circuits prints the core's numbers, every head and every composition pair, or one head's and the pairs into it.
void TestCliResearch::circuitsShapeAndNumbers()
{
    const Run r = runCli({"circuits", "--model", kSpec});
    QCOMPARE(r.exitCode, 0);
    const QJsonObject o = parse(r);
    QCOMPARE(o.keys(), (QStringList{"composition", "heads", "model", "notes"}));
    const Circuits core = *readCircuits(*model());
    const QJsonArray heads = o["heads"].toArray(), composition = o["composition"].toArray();
    QCOMPARE(heads.size(), 8);
    QCOMPARE(composition.size(), 4 * 4);
    numericcheck::Worst worst;
    for (int i = 0; i < heads.size(); ++i) {
        const QJsonObject h = heads[i].toObject();
        QCOMPARE(h.keys(), (QStringList{"head", "kv_head", "layer", "ov_copying_score", "ov_singular_values", "qk_singular_values"}));
        QCOMPARE(h["layer"].toInt(), core.heads[std::size_t(i)].layer);
        QCOMPARE(h["head"].toInt(), core.heads[std::size_t(i)].head);
        QCOMPARE(h["qk_singular_values"].toArray().size(), 16);
        worst.label("head row %d", i);
        for (int k = 0; k < 16; ++k) {
            worst.add(h["qk_singular_values"][k].toDouble(NAN), core.heads[std::size_t(i)].qkSingularValues[std::size_t(k)]);
            worst.add(h["ov_singular_values"][k].toDouble(NAN), core.heads[std::size_t(i)].ovSingularValues[std::size_t(k)]);
        }
        worst.add(h["ov_copying_score"].toDouble(NAN), *core.heads[std::size_t(i)].ovCopyingScore);
    }
    for (int i = 0; i < composition.size(); ++i) {
        const QJsonObject c = composition[i].toObject();
        const CircuitComposition& want = core.composition[std::size_t(i)];
        QCOMPARE(c["from"].toArray(), (QJsonArray{want.from.layer, want.from.head}));
        QCOMPARE(c["to"].toArray(), (QJsonArray{want.to.layer, want.to.head}));
        worst.label("composition row %d", i);
        worst.add(c["q"].toDouble(NAN), want.q);
        worst.add(c["k"].toDouble(NAN), want.k);
        worst.add(c["v"].toDouble(NAN), want.v);
    }
    QVERIFY2(worst.within(1e-12), worst.message("printed circuits against the core's").c_str());
    const QJsonObject one = parse(runCli({"circuits", "--model", kSpec, "--layer", "1", "--head", "2"}));
    QCOMPARE(one["heads"].toArray().size(), 1);
    QCOMPARE(one["composition"].toArray().size(), 4);
    for (const QJsonValue& c : one["composition"].toArray()) QCOMPARE(c["to"].toArray(), (QJsonArray{1, 2}));
    // --positions adds the head's positional picture, the core's, the causal future null.
    const QJsonObject pictured = parse(runCli({"circuits", "--model", kSpec, "--layer", "1", "--head", "2", "--positions", "6"}));
    const Matrix positional = *positionalQkCircuit(*model(), 1, 2, 6);
    const QJsonArray rows = pictured["positional_qk"].toArray();
    QCOMPARE(rows.size(), 6);
    worst = {};
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) {
            if (j > i) QVERIFY(rows[i][j].isNull());
            else worst.add(rows[i][j].toDouble(NAN), positional(i, j), i, j);
        }
    QVERIFY2(worst.within(1e-7), worst.message("printed positional picture").c_str());
    QVERIFY(!one.contains("positional_qk"));
    // An encoder–decoder names each head's stack.
    const QJsonObject translator = parse(runCli({"circuits", "--model", "builtin-translator", "--layer", "0", "--head", "0"}));
    QStringList stacks;
    for (const QJsonValue& h : translator["heads"].toArray()) stacks << h["stack"].toString();
    QCOMPARE(stacks, (QStringList{"encoder", "decoder", "cross"}));
    QVERIFY(translator["heads"][0]["ov_copying_score"].isNull());
    QVERIFY(!translator["notes"].toArray().isEmpty());
}

void TestCliResearch::attentionWithAblation()
{
    const Run r = runCli({"attention", "--model", kSpec, "--text", kText, "--ablate", "1.3,0.1", "--ablate-mode", "mean"});
    QCOMPARE(r.exitCode, 0);
    const QJsonObject o = parse(r);
    QCOMPARE(o["settings"]["ablate"].toString(), QString("0.1,1.3"));
    QCOMPARE(o["settings"]["ablate_mode"].toString(), QString("mean"));
    ModelPtr m = model();
    AttentionSettings s;
    s.ablated = {{0, 1}, {1, 3}};
    s.ablationMode = AblationMode::Mean;
    const ForwardTrace t = *forward(*m, ids(*m), s);
    numericcheck::Worst worst;
    for (int h = 0; h < 4; ++h) {
        worst.label("layer 1 head %d", h);
        for (int i = 0; i < t.tokens; ++i)
            for (int j = 0; j < t.tokens; ++j) worst.add(o["attention"][1][h][i][j].toDouble(NAN), t.weights(1, h)(i, j), i, j);
    }
    QVERIFY2(worst.within(1e-7), worst.message("ablated attention against the core's").c_str());
    // No ablation, no new keys: the settings object stays as it always was.
    QVERIFY(!parse(runCli({"attention", "--text", "a b"}))["settings"].toObject().contains("ablate"));
}

// perplexity prints the core's loss under each mask; a window that drops the first tokens changes it.
void TestCliResearch::perplexityUnderWindowsAndSinks()
{
    ModelPtr m = model();
    double causalNll = 0.0;
    for (const char* mask : {"causal", "window:3", "sinks:2,window:3", "block:3", "random:2,5", "dilated:2,2", "global:1;window:2"}) {
        const Run r = runCli({"perplexity", "--model", kSpec, "--text", kText, "--mask", mask});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.startsWith("{\"tokens\":"));
        QVERIFY(r.out.indexOf("\"nll\"") < r.out.indexOf("\"perplexity\""));
        const QJsonObject o = parse(r);
        QCOMPARE(o.keys().size(), 4);
        const int T = int(ids(*m).size());
        QCOMPARE(o["tokens"].toInt(), T);
        // The keys a query kept, counted here query by query from each mask's definition.
        double kept = 0.0;
        for (int i = 0; i < T; ++i) {
            const std::string name = mask;
            kept += name == "causal"                 ? i + 1
                    : name == "window:3"             ? std::min(i + 1, 3)
                    : name == "sinks:2,window:3"     ? std::min(i + 1, 5)
                    : name == "block:3"              ? i % 3 + 1
                    : name == "random:2,5"           ? 1 + std::min(i, 2)
                    : name == "dilated:2,2"          ? (i >= 2 ? 2 : 1)
                                                     : (i == 1 ? 2 : i == 0 ? 1 : i == 2 ? 2 : 3);  // global 1 + window 2
        }
        QVERIFY2(std::abs(o["keys_per_query"].toDouble(NAN) - kept / T) < 1e-12, mask);
        AttentionSettings s;
        applyMask(s, *parseMaskSetting(mask));
        const double expected = *sentenceLoss(*m, ids(*m), s);
        QVERIFY2(std::abs(o["nll"].toDouble() - expected) < 1e-9, mask);
        QVERIFY2(std::abs(o["perplexity"].toDouble() - std::exp(expected)) < 1e-9 * std::exp(expected), mask);
        if (std::string(mask) == "causal") causalNll = expected;
        else QVERIFY2(std::abs(expected - causalNll) > 1e-6, mask);
    }
}

// logit-lens prints the core's lens: every layer's top tokens and the next token's probability, null at the
// last position, in the documented key order.
void TestCliResearch::logitLensShapeAndNumbers()
{
    const Run r = runCli({"logit-lens", "--model", kSpec, "--text", kText, "--top-k", "3", "--mask", "sinks:1,window:4"});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.startsWith("{\"tokens\":"));
    QVERIFY(r.out.indexOf("\"layers\"") < r.out.indexOf("\"top\""));
    QVERIFY(r.out.indexOf("\"top\"") < r.out.indexOf("\"next_token_p\""));
    const QJsonObject o = parse(r);
    QCOMPARE(o.keys().size(), 4);
    ModelPtr m = model();
    AttentionSettings s;
    applyMask(s, *parseMaskSetting("sinks:1,window:4"));
    const LogitLens lens = *logitLens(*m, ids(*m), s, 3);
    const int T = int(ids(*m).size());
    QCOMPARE(o["tokens"].toArray().size(), T);
    QCOMPARE(o["layers"].toInt(), m->config.layers + 1);
    const QJsonArray top = o["top"].toArray(), next = o["next_token_p"].toArray();
    QCOMPARE(top.size(), m->config.layers + 1);
    QCOMPARE(next.size(), m->config.layers + 1);
    for (int layer = 0; layer < lens.rows; ++layer) {
        QCOMPARE(top[layer].toArray().size(), T);
        for (int t = 0; t < T; ++t) {
            const QJsonArray cell = top[layer].toArray()[t].toArray();
            QCOMPARE(cell.size(), 3);
            for (int i = 0; i < 3; ++i) {
                const QJsonObject entry = cell[i].toObject();
                QCOMPARE(entry.keys(), (QStringList{"id", "p", "token"}));
                QCOMPARE(entry["id"].toInt(), lens.at(layer, t)[std::size_t(i)].id);
                QCOMPARE(entry["token"].toString().toStdString(), lens.at(layer, t)[std::size_t(i)].token);
                QVERIFY(std::abs(entry["p"].toDouble() - lens.at(layer, t)[std::size_t(i)].p) < 1e-12);
            }
            const QJsonValue p = next[layer].toArray()[t];
            if (t == T - 1) QVERIFY(p.isNull());
            else QVERIFY(std::abs(p.toDouble() - lens.target(layer, t)) < 1e-12);
        }
    }
}

// patch prints the core's patching in the documented key order; tokens are read as tokenize shows them or #id.
void TestCliResearch::patchShapeAndNumbers()
{
    const char* clean = "when mary and john went out john gave it to";
    const char* corrupted = "when mary and john went out anna gave it to";
    ModelPtr m = model();
    const int answer = *tokenIdOf(*m->tokenizer, "mary", "a"), wrong = 7;
    const Run r = runCli({"patch", "--model", kSpec, "--clean", clean, "--corrupted", corrupted, "--answer", "mary", "--wrong", "#7"});
    QCOMPARE(r.exitCode, 0);
    const QList<QByteArray> order = {"\"tokens_clean\"", "\"tokens_corrupted\"", "\"clean_diff\"", "\"corrupted_diff\"",
                                     "\"resid\"", "\"heads\"", "\"answer\"", "\"wrong\""};
    for (int i = 1; i < order.size(); ++i) QVERIFY(r.out.indexOf(order[i - 1]) < r.out.indexOf(order[i]));
    const QJsonObject o = parse(r);
    const ActivationPatching p = *activationPatching(*m, m->tokenizer->encode(clean)->ids, m->tokenizer->encode(corrupted)->ids,
                                                     AttentionSettings{}, answer, wrong);
    QCOMPARE(o["tokens_clean"].toArray().size(), p.tokens);
    QVERIFY(!o.contains("kv_groups"));  // no key/value groups in the built-in model
    QCOMPARE(o["answer"].toObject()["id"].toInt(), answer);
    QCOMPARE(o["wrong"].toObject()["id"].toInt(), wrong);
    QVERIFY(std::abs(o["clean_diff"].toDouble() - p.cleanDiff) < 1e-12);
    QVERIFY(std::abs(o["corrupted_diff"].toDouble() - p.corruptedDiff) < 1e-12);
    const QJsonArray resid = o["resid"].toArray(), heads = o["heads"].toArray();
    QCOMPARE(resid.size(), p.layers + 1);
    QCOMPARE(heads.size(), p.layers);
    for (int l = 0; l <= p.layers; ++l) {
        QCOMPARE(resid[l].toArray().size(), p.tokens);
        for (int t = 0; t < p.tokens; ++t) QVERIFY(std::abs(resid[l].toArray()[t].toDouble() - p.residual(l, t)) < 1e-12);
    }
    for (int l = 0; l < p.layers; ++l) {
        QCOMPARE(heads[l].toArray().size(), p.heads);
        for (int h = 0; h < p.heads; ++h) QVERIFY(std::abs(heads[l].toArray()[h].toDouble() - p.head(l, h)) < 1e-12);
    }
}

// The shipped corpus through the command: the keys in order, one entry per head, and the core's numbers.
void TestCliResearch::corpusStatsOfTheShippedCorpus()
{
    const QString path = QStringLiteral(ATTNSCOPE_MIXED_CORPUS);
    const Run r = runCli({"corpus-stats", "--text-file", path, "--max-documents", "25"});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.err.isEmpty(), r.err.constData());
    QVERIFY(r.out.indexOf("\"documents\"") < r.out.indexOf("\"tokens\"") && r.out.indexOf("\"tokens\"") < r.out.indexOf("\"heads\""));
    const QJsonObject o = QJsonDocument::fromJson(r.out).object();
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray corpus = file.readAll();
    const ModelPtr model = *loadModel(defaultModelSpec());
    const CorpusStats core = *corpusStats(*model, std::string_view(corpus.constData(), std::size_t(corpus.size())), AttentionSettings{}, 25);
    QCOMPARE(o["documents"].toInt(), 25);
    QCOMPARE(o["tokens"].toInteger(), core.tokens);
    const QJsonArray heads = o["heads"].toArray();
    QCOMPARE(heads.size(), qsizetype(core.perHead.size()));
    for (const HeadCorpusStats& h : core.perHead) {
        const QJsonObject j = heads[h.layer * core.heads + h.head].toObject();
        QCOMPARE(j.keys(), (QStringList{"entropy", "first_token", "head", "layer", "previous_token", "punctuation", "special"}));
        QCOMPARE(j["layer"].toInt(), h.layer);
        QCOMPARE(j["head"].toInt(), h.head);
        QVERIFY(std::abs(j["entropy"].toDouble() - h.entropy) < 1e-12 && std::abs(j["first_token"].toDouble() - h.firstToken) < 1e-12);
        QVERIFY(std::abs(j["punctuation"].toDouble() - h.punctuation) < 1e-12 && std::abs(j["special"].toDouble() - h.special) < 1e-12);
        QVERIFY(std::abs(j["previous_token"].toDouble() - h.previousToken) < 1e-12);
    }
    // A limit shorter than the documents cuts them, and says so on standard error.
    const Run cut = runCli({"corpus-stats", "--text-file", path, "--max-documents", "2", "--max-tokens", "4"});
    QCOMPARE(cut.exitCode, 0);
    QVERIFY2(cut.err.contains("warning: 2 documents were longer than 4 tokens"), cut.err.constData());
    QCOMPARE(QJsonDocument::fromJson(cut.out).object()["tokens"].toInt(), 8);
}

void TestCliResearch::errors_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("says");
    QTest::newRow("ablated head past the model") << QStringList{"attention", "--model", "random", "--text", "a b", "--ablate", "2.0"} << 1 << "no head 2.0";
    QTest::newRow("ablated heads malformed") << QStringList{"attention", "--text", "a b", "--ablate", "1-2"} << 2 << "L.H";
    QTest::newRow("ablation mode unknown") << QStringList{"rollout", "--text", "a b", "--ablate-mode", "half"} << 2 << "'half'";
    QTest::newRow("importance of one token") << QStringList{"importance", "--model", "random", "--text", "one"} << 1 << "two tokens";
    QTest::newRow("importance without text") << QStringList{"importance"} << 2 << "--text";
    QTest::newRow("rollout without text") << QStringList{"rollout"} << 2 << "--text";
    QTest::newRow("perplexity of one token") << QStringList{"perplexity", "--model", "random", "--text", "one"} << 1 << "at least two tokens";
    QTest::newRow("perplexity without text") << QStringList{"perplexity"} << 2 << "--text";
    QTest::newRow("corpus of empty lines") << QStringList{"corpus-stats", "--text", "\n \n"} << 1 << "no documents";
    QTest::newRow("corpus without text") << QStringList{"corpus-stats"} << 2 << "--text";
    QTest::newRow("no documents asked for") << QStringList{"corpus-stats", "--text", "a", "--max-documents", "0"} << 2 << "--max-documents";
    QTest::newRow("window of zero") << QStringList{"perplexity", "--text", "a b", "--mask", "window:0"} << 2 << "window";
    QTest::newRow("sinks without a window") << QStringList{"attention", "--text", "a b", "--mask", "sinks:4"} << 2 << "need a window";
    QTest::newRow("logit lens top-k zero") << QStringList{"logit-lens", "--text", "a b", "--top-k", "0"} << 2 << "--top-k";
    QTest::newRow("logit lens top-k past 50") << QStringList{"logit-lens", "--text", "a b", "--top-k", "51"} << 2 << "--top-k";
    QTest::newRow("logit lens without text") << QStringList{"logit-lens"} << 2 << "--text";
    QTest::newRow("patch of different lengths") << QStringList{"patch", "--clean", "a b c", "--corrupted", "a b", "--answer", "#1", "--wrong", "#2"} << 1 << "same length";
    QTest::newRow("patch answer of two tokens") << QStringList{"patch", "--model", "random", "--clean", "a b", "--corrupted", "a c", "--answer", "two words", "--wrong", "#2"} << 1 << "not one token";
    QTest::newRow("patch without an answer") << QStringList{"patch", "--clean", "a b", "--corrupted", "a c", "--wrong", "#2"} << 2 << "--answer";
    QTest::newRow("heads seed not a number") << QStringList{"heads", "--seed", "x"} << 2 << "--seed";
    QTest::newRow("heads unknown option") << QStringList{"heads", "--layer", "0"} << 2 << "--layer";
    QTest::newRow("circuits of a layer past the model") << QStringList{"circuits", "--model", "random", "--layer", "2"} << 1 << "(0 to 1)";
    QTest::newRow("positions of every head") << QStringList{"circuits", "--model", "random", "--positions", "8"} << 2 << "--layer and --head";
    QTest::newRow("positions of one") << QStringList{"circuits", "--model", "random", "--layer", "0", "--head", "0", "--positions", "1"} << 1 << "positions";
    QTest::newRow("circuits of a head not a number") << QStringList{"circuits", "--model", "random", "--head", "x"} << 2 << "--head";
    QTest::newRow("ablation on trace past the model") << QStringList{"trace", "--text", "a", "--layer", "0", "--head", "0", "--ablate", "0.9"} << 1 << "no head 0.9";
}

void TestCliResearch::errors()
{
    QFETCH(QStringList, args);
    QFETCH(int, code);
    QFETCH(QString, says);
    const Run r = runCli(args);
    QCOMPARE(r.exitCode, code);
    QVERIFY(r.out.isEmpty());
    QVERIFY2(r.err.startsWith("error: "), r.err.constData());
    const QByteArray firstLine = r.err.left(r.err.indexOf('\n'));
    QVERIFY2(firstLine.contains(says.toUtf8()), firstLine.constData());
}

void TestCliResearch::renderResearchViews_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    const QStringList base = {"render", "--model", kSpec, "--text", kText, "--width", "600", "--height", "400"};
    for (const char* view : {"heads-roles", "ablation", "importance", "rollout", "attribution", "qk-map", "logit-lens"})
        QTest::newRow(view) << base + QStringList{"--view", view, "--ablate", "0.1"} << 0;
    QTest::newRow("rollout row chosen by --query") << base + QStringList{"--view", "rollout", "--query", "2"} << 0;
    QTest::newRow("query past the text is input") << base + QStringList{"--view", "qk-map", "--query", "99"} << 1;
    QTest::newRow("importance of one token is input")
        << QStringList{"render", "--model", kSpec, "--text", "one", "--view", "importance", "--width", "600", "--height", "400"} << 1;
}

void TestCliResearch::renderResearchViews()
{
    QFETCH(QStringList, args);
    QFETCH(int, code);
    QTemporaryDir dir;
    const QString path = dir.filePath("v.png");
    clitest::RunOptions headless;
    headless.environment = QProcessEnvironment::systemEnvironment();
    headless.environment.remove(QStringLiteral("QT_QPA_PLATFORM"));
    headless.environment.remove(QStringLiteral("DISPLAY"));
    const Run r = runCli(args + QStringList{"--out", path}, headless);
    QVERIFY2(r.exitCode == code, r.err.constData());
    if (code != 0) {
        QVERIFY2(r.err.startsWith("error: "), r.err.constData());
        QVERIFY(!QFile::exists(path));
        return;
    }
    QVERIFY2(r.err.isEmpty(), r.err.constData());
    QCOMPARE(QImage(path).size(), QSize(600, 400));
}

QTEST_GUILESS_MAIN(TestCliResearch)
#include "tst_cli_research.moc"
