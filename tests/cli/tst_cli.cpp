// attnscope-cli as a script would use it: the JSON it prints and every way it refuses bad input.
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include "clirunner.h"
#include "core/model/forward.h"
#include "core/dataexport/jsonexport.h"
#include "core/analysis/stats.h"
#include "core/open/openmodel.h"
#include "numericcheck.h"

using namespace attnscope;
using clitest::Run;
using clitest::runCli;

class TestCli : public QObject {
    Q_OBJECT
private slots:
    void attentionOutputIsExactlyAsSpecified();
    void attentionNumbersAreTheCoreNumbers();
    void statsAreEntropyAndMaxWeight();
    void valueNormsAreWeightsTimesTheCoresNorms();
    void settingsChangeTheOutput();
    void tokenizeAndInfo();
    void textFileAndStdin();
    void trainKeepsCheckpoints();
    void errors_data();
    void errors();
};

void TestCli::attentionOutputIsExactlyAsSpecified()
{
    const Run r = runCli({"attention", "--model", "random:layers=2,heads=4,d_model=64,seed=1", "--text", "The cat sat."});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.err.isEmpty());
    // Key order is part of the format: compare the raw text's order, not just the parsed object.
    const QList<QByteArray> order = {"\"model\"", "\"tokens\"", "\"token_ids\"", "\"settings\"", "\"attention\""};
    qsizetype last = -1;
    for (const QByteArray& key : order) {
        const qsizetype at = r.out.indexOf(key);
        QVERIFY2(at > last, key.constData());
        last = at;
    }
    const QJsonObject o = QJsonDocument::fromJson(r.out).object();
    const QJsonObject model = o["model"].toObject();
    QCOMPARE(model.keys().size(), 6);
    QCOMPARE(model["name"].toString(), QString("random:layers=2,heads=4,d_model=64,seed=1"));
    QCOMPARE(model["architecture"].toString(), QString("gpt2"));
    QCOMPARE(model["layers"].toInt(), 2);
    QCOMPARE(model["heads"].toInt(), 4);
    QCOMPARE(model["d_model"].toInt(), 64);
    QCOMPARE(model["d_head"].toInt(), 16);
    QCOMPARE(o["tokens"].toArray(), QJsonArray({"the", "cat", "sat", "."}));
    QCOMPARE(o["token_ids"].toArray().size(), 4);
    const QJsonObject s = o["settings"].toObject();
    QCOMPARE(s["mask"].toString(), QString("causal"));
    QCOMPARE(s["scaling"].toString(), QString("sqrt-dk"));
    QCOMPARE(s["temperature"].toDouble(), 1.0);
    QCOMPARE(s["positional"].toString(), QString("default"));
    const QJsonArray a = o["attention"].toArray();
    QCOMPARE(a.size(), 2);
    QCOMPARE(a[0].toArray().size(), 4);
    QCOMPARE(a[0].toArray()[0].toArray().size(), 4);
    QCOMPARE(a[0].toArray()[0].toArray()[3].toArray().size(), 4);
    QVERIFY(!o.contains("stats"));
}

void TestCli::attentionNumbersAreTheCoreNumbers()
{
    const Run r = runCli({"attention", "--text", "numbers are the product", "--mask", "none", "--temperature", "0.7"});
    QCOMPARE(r.exitCode, 0);
    const QJsonObject o = QJsonDocument::fromJson(r.out).object();
    ModelPtr model = *loadModel(defaultModelSpec());
    AttentionSettings s;
    s.mask = MaskKind::None;
    s.temperature = 0.7;
    Result<ForwardTrace> t = forward(*model, model->tokenizer->encode("numbers are the product")->ids, s);
    // A number missing from the output, or printed as null (JSON has no NaN), is read as NaN and fails.
    numericcheck::Worst worst;
    for (int l = 0; l < 2; ++l)
        for (int h = 0; h < 4; ++h) {
            worst.label("layer %d head %d", l, h);
            for (int i = 0; i < 4; ++i)
                for (int j = 0; j < 4; ++j) worst.add(o["attention"][l][h][i][j].toDouble(NAN), t->weights(l, h)(i, j), i, j);
        }
    QVERIFY2(worst.within(1e-7), worst.message("printed weights against the core's").c_str());
}

void TestCli::statsAreEntropyAndMaxWeight()
{
    const Run r = runCli({"attention", "--text", "a b c d", "--stats"});
    QCOMPARE(r.exitCode, 0);
    const QJsonObject o = QJsonDocument::fromJson(r.out).object();
    QVERIFY(r.out.indexOf("\"stats\"") > r.out.indexOf("\"attention\""));
    const QJsonObject st = o["stats"].toObject();
    // Recompute from the printed weights by hand: -sum p ln p and max p.
    for (int l = 0; l < 2; ++l)
        for (int h = 0; h < 4; ++h)
            for (int q = 0; q < 4; ++q) {
                double entropy = 0, maxW = 0;
                for (int k = 0; k < 4; ++k) {
                    const double p = o["attention"][l][h][q][k].toDouble();
                    if (p > 0) entropy -= p * std::log(p);
                    maxW = std::max(maxW, p);
                }
                QVERIFY(std::abs(st["entropy"][l][h][q].toDouble() - entropy) < 1e-5);
                QVERIFY(std::abs(st["max_weight"][l][h][q].toDouble() - maxW) < 1e-7);
            }
    // Query 0 under the causal mask sees only itself: entropy 0, max weight 1.
    QVERIFY(st["entropy"][0][0][0].toDouble(NAN) == 0.0);  // a null (a NaN printed) is not 0
    QCOMPARE(st["max_weight"][1][3][0].toDouble(), 1.0);
}

// --value-norms prints α_ij · ‖v_j W_O^h‖: the core's norms times the printed weights, so within a column the
// ratio to the weight is one number (the key's norm) wherever the weight is not 0.
void TestCli::valueNormsAreWeightsTimesTheCoresNorms()
{
    const char* text = "values have lengths too";
    const Run r = runCli({"attention", "--text", text, "--value-norms"});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.indexOf("\"value_weighted\"") > r.out.indexOf("\"attention\""));
    const QJsonObject o = QJsonDocument::fromJson(r.out).object();
    ModelPtr model = *loadModel(defaultModelSpec());
    CaptureRequest capture;
    capture.valueNorms = true;
    Result<ForwardTrace> t = forward(*model, model->tokenizer->encode(text)->ids, AttentionSettings{}, capture);
    QVERIFY(t.hasValue());
    const int T = t->tokens;
    QCOMPARE(o["value_weighted"].toArray().size(), qsizetype(t->layers));
    numericcheck::Worst worst;
    int compared = 0;
    for (int l = 0; l < t->layers; ++l)
        for (int h = 0; h < t->heads; ++h)
            for (int i = 0; i < T; ++i)
                for (int j = 0; j < T; ++j) {
                    const double weight = o["attention"][l][h][i][j].toDouble(NAN);
                    const double shown = o["value_weighted"][l][h][i][j].toDouble(NAN);
                    if (weight == 0.0) {
                        QCOMPARE(shown, 0.0);  // masked: nothing flows, whatever the value's length
                        continue;
                    }
                    const double norm = t->valueNorm(l, h)[j];
                    worst.label("layer %d head %d, shown / weight", l, h);
                    worst.addRelative(shown / weight, norm, 1.0, i, j);
                    ++compared;
                }
    QVERIFY(compared > 0);
    QVERIFY2(worst.within(1e-5), worst.message("printed value-weighted attention against weight × norm").c_str());
    // Without the flag the key is absent.
    QVERIFY(!runCli({"attention", "--text", text}).out.contains("value_weighted"));
}

void TestCli::settingsChangeTheOutput()
{
    const Run causal = runCli({"attention", "--text", "one two three"});
    const Run open = runCli({"attention", "--text", "one two three", "--mask", "none", "--scaling", "none",
                             "--positional", "none", "--block-keys", "1"});
    QCOMPARE(open.exitCode, 0);
    const QJsonObject c = QJsonDocument::fromJson(causal.out).object(), o = QJsonDocument::fromJson(open.out).object();
    QVERIFY(c["attention"][0][0][0][2].toDouble(NAN) == 0.0);  // causal: future key is zero (a null is not)
    QVERIFY(o["attention"][0][0][0][2].toDouble() > 0.0);  // unmasked: it is not
    QVERIFY(o["attention"][0][0][2][1].toDouble(NAN) == 0.0);  // blocked key 1: zero in every row (a null is not)
    QCOMPARE(o["settings"]["mask"].toString(), QString("none"));
    QCOMPARE(o["settings"]["scaling"].toString(), QString("none"));
    QCOMPARE(o["settings"]["positional"].toString(), QString("none"));
}

void TestCli::tokenizeAndInfo()
{
    const Run t = runCli({"tokenize", "--text", "Hello, World", "--model", "random"});
    QCOMPARE(t.exitCode, 0);
    QCOMPARE(t.out.trimmed().left(11), QByteArray("{\"tokens\":["));
    const QJsonObject o = QJsonDocument::fromJson(t.out).object();
    QCOMPARE(o["tokens"].toArray(), QJsonArray({"hello", ",", "world"}));
    QCOMPARE(o.keys().size(), 2);
    // The default is the built-in model: its own vocabulary, <bos> first, <unk> for a word it never saw.
    const Run b = runCli({"tokenize", "--text", "The cat sat, zyzzyva."});
    QCOMPARE(b.exitCode, 0);
    QCOMPARE(QJsonDocument::fromJson(b.out).object()["tokens"].toArray(), QJsonArray({"<bos>", "the", "cat", "sat", ",", "<unk>", "."}));
    const Run bi = runCli({"info"});
    QCOMPARE(QJsonDocument::fromJson(bi.out).object()["name"].toString(), QString("builtin"));
    const Run i = runCli({"info", "--model", "random:layers=3,heads=2,d_model=32,seed=4"});
    QCOMPARE(i.exitCode, 0);
    const QJsonObject info = QJsonDocument::fromJson(i.out).object();
    QCOMPARE(info["layers"].toInt(), 3);
    QCOMPARE(info["d_head"].toInt(), 16);
    QCOMPARE(info["positional"].toString(), QString("sinusoidal"));
}

void TestCli::textFileAndStdin()
{
    QTemporaryDir dir;
    const QString path = dir.filePath("text.txt");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("from a file");
    f.close();
    const Run file = runCli({"tokenize", "--text-file", path});
    QCOMPARE(file.exitCode, 0);
    QCOMPARE(QJsonDocument::fromJson(file.out).object()["tokens"].toArray(), QJsonArray({"<bos>", "from", "a", "file"}));
    clitest::RunOptions piped;
    piped.stdinData = "from standard input";
    const Run in = runCli({"tokenize", "--text-file", "-"}, piped);
    QCOMPARE(in.exitCode, 0);
    QCOMPARE(QJsonDocument::fromJson(in.out).object()["tokens"].toArray().size(), 4);
    piped.stdinData = "caf\xe9 latin-1, not UTF-8";
    const Run bad = runCli({"attention", "--text-file", "-"}, piped);
    QCOMPARE(bad.exitCode, 1);
    QVERIFY2(bad.err.startsWith("error: the text is not valid UTF-8 (byte 3 is 0xe9)."), bad.err.constData());
}

// `train --checkpoints DIR` keeps the model before the first step and at every save as DIR/stepN, a series the
// Checkpoints view reads in step order; the last is the model --out holds.
void TestCli::trainKeepsCheckpoints()
{
    QTemporaryDir dir;
    const QString corpus = dir.filePath("corpus.txt"), out = dir.filePath("model"), kept = dir.filePath("kept");
    QCOMPARE(runCli({"corpus", "--out", corpus, "--documents", "200", "--seed", "3"}).exitCode, 0);
    const Run r = runCli({"train", "--corpus", corpus, "--out", out, "--checkpoints", kept, "--layers", "1", "--heads", "2", "--d-model", "16",
                          "--context", "16", "--sequence-length", "16", "--batch", "2", "--steps", "5", "--save-every", "2",
                          "--warmup", "1", "--log-every", "5", "--threads", "1"});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QCOMPARE(QDir(kept).entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name), QStringList({"step0", "step2", "step4", "step5"}));
    auto bytes = [](const QString& path) {
        QFile f(path);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    };
    QCOMPARE(bytes(kept + "/step5/model.safetensors"), bytes(out + "/model.safetensors"));
    QVERIFY(bytes(kept + "/step0/model.safetensors") != bytes(kept + "/step2/model.safetensors"));
    for (const char* step : {"step0", "step2", "step4", "step5"}) {
        Result<ModelPtr> m = loadModel((kept + "/" + step).toStdString());
        QVERIFY2(m, m ? "" : m.error().c_str());
        QCOMPARE((*m)->config.heads, 2);
    }
}

void TestCli::errors_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("no command") << QStringList{} << 2 << "no command";
    QTest::newRow("unknown command") << QStringList{"explode"} << 2 << "explode";
    QTest::newRow("unknown option") << QStringList{"attention", "--text", "a", "--colour", "red"} << 2 << "--colour";
    QTest::newRow("option without value") << QStringList{"attention", "--text"} << 2 << "--text";
    QTest::newRow("option given twice") << QStringList{"attention", "--text", "a", "--text", "b"} << 2 << "twice";
    QTest::newRow("no text") << QStringList{"attention"} << 2 << "--text";
    QTest::newRow("text and text file") << QStringList{"tokenize", "--text", "a", "--text-file", "-"} << 2 << "not both";
    QTest::newRow("bad mask") << QStringList{"attention", "--text", "a", "--mask", "diagonal"} << 2 << "diagonal";
    QTest::newRow("bad pattern: a block of 0") << QStringList{"perplexity", "--text", "a b", "--mask", "block:0"} << 2 << "block in the mask 'block:0'";
    QTest::newRow("bad pattern: global without a window") << QStringList{"perplexity", "--text", "a b", "--mask", "global:0"} << 2 << "needs its window";
    QTest::newRow("bad scaling") << QStringList{"attention", "--text", "a", "--scaling", "cube"} << 2 << "cube";
    QTest::newRow("bad positional") << QStringList{"attention", "--text", "a", "--positional", "rotary"} << 2 << "rotary";
    QTest::newRow("temperature zero") << QStringList{"attention", "--text", "a", "--temperature", "0"} << 2 << "temperature";
    QTest::newRow("temperature not a number") << QStringList{"attention", "--text", "a", "--temperature", "warm"} << 2 << "warm";
    QTest::newRow("temperature NaN") << QStringList{"attention", "--text", "a", "--temperature", "nan"} << 2 << "nan";
    QTest::newRow("temperature too large") << QStringList{"attention", "--text", "a", "--temperature", "1e7"} << 2 << "1e7";
    QTest::newRow("blocked keys malformed") << QStringList{"attention", "--text", "a", "--block-keys", "1,x"} << 2 << "'x'";
    QTest::newRow("blocked key negative") << QStringList{"attention", "--text", "a", "--block-keys", "-1"} << 2 << "-1";
    QTest::newRow("blocked key past the text") << QStringList{"attention", "--text", "a b", "--block-keys", "5"} << 1 << "blocked key 5";
    QTest::newRow("bad model spec") << QStringList{"info", "--model", "random:heads=3"} << 1 << "divisible";
    QTest::newRow("unknown model") << QStringList{"info", "--model", "random:colour=1"} << 1 << "colour";
    QTest::newRow("missing text file") << QStringList{"tokenize", "--text-file", "/nonexistent/t.txt"} << 1 << "/nonexistent/t.txt";
    QTest::newRow("text longer than context") << QStringList{"attention", "--model", "random:context=3", "--text", "a b c d"} << 1 << "context";
}

void TestCli::errors()
{
    QFETCH(QStringList, args);
    QFETCH(int, code);
    QFETCH(QString, mentions);
    const Run r = runCli(args);
    QCOMPARE(r.exitCode, code);
    QVERIFY(r.out.isEmpty());
    QVERIFY2(r.err.startsWith("error: "), r.err.constData());
    const QByteArray firstLine = r.err.left(r.err.indexOf('\n'));
    QVERIFY2(firstLine.contains(mentions.toUtf8()), firstLine.constData());
}

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
