// attnscope-cli trace: the focused head's pipeline as JSON, run as a separate process like a script would.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include <cmath>

#include "clirunner.h"
#include "numericcheck.h"

namespace {

using clitest::Run;
using clitest::runCli;

// The keys of the top-level object in the order they appear in the text (QJsonObject sorts them).
QStringList keysInOrder(const QByteArray& json)
{
    QStringList keys;
    int depth = 0;
    bool inString = false;
    int start = -1;
    for (int i = 0; i < json.size(); ++i) {
        const char c = json[i];
        if (inString) {
            if (c == '\\') ++i;
            else if (c == '"') {
                inString = false;
                if (depth == 1 && i + 1 < json.size() && json[i + 1] == ':')
                    keys << QString::fromUtf8(json.mid(start, i - start));
            }
        } else if (c == '"') {
            inString = true;
            start = i + 1;
        } else if (c == '{' || c == '[') ++depth;
        else if (c == '}' || c == ']') --depth;
    }
    return keys;
}

} // namespace

class TestCliTrace : public QObject {
    Q_OBJECT
private slots:
    void keysAndShapes_data();
    void keysAndShapes();
    void badHeadOrLayer_data();
    void badHeadOrLayer();
};

void TestCliTrace::keysAndShapes_data()
{
    QTest::addColumn<QStringList>("settings");
    QTest::addColumn<int>("layer");
    QTest::addColumn<int>("head");
    QTest::addColumn<bool>("causal");
    QTest::newRow("causal, layer 1 head 2") << QStringList{} << 1 << 2 << true;
    QTest::newRow("no mask, layer 0 head 0") << QStringList{"--mask", "none"} << 0 << 0 << false;
    QTest::newRow("causal at temperature 2, no positions") << QStringList{"--temperature", "2", "--positional", "none"} << 0 << 3
                                                           << true;
}

void TestCliTrace::keysAndShapes()
{
    QFETCH(QStringList, settings);
    QFETCH(int, layer);
    QFETCH(int, head);
    QFETCH(bool, causal);
    const QString text = QStringLiteral("the cat sat on the mat");
    const int T = 6, D = 64, Dh = 16;
    // The seeded random model, whose shapes these are (the built-in default has its own).
    const Run r = runCli(QStringList{"trace", "--model", "random", "--text", text, "--layer", QString::number(layer), "--head",
                                     QString::number(head)} +
                         settings);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QCOMPARE(keysInOrder(r.out), (QStringList{"x", "q", "k", "v", "scores", "scaled", "masked", "weights", "head_output",
                                              "concat", "attn_output"}));
    const QJsonObject o = QJsonDocument::fromJson(r.out).object();
    const QList<QPair<QString, QPair<int, int>>> shapes = {
        {"x", {T, D}},           {"q", {T, Dh}},      {"k", {T, Dh}},       {"v", {T, Dh}},
        {"scores", {T, T}},      {"scaled", {T, T}},  {"masked", {T, T}},   {"weights", {T, T}},
        {"head_output", {T, Dh}}, {"concat", {T, D}}, {"attn_output", {T, D}}};
    for (const auto& [key, shape] : shapes) {
        const QJsonArray rows = o[key].toArray();
        QVERIFY2(rows.size() == shape.first, qPrintable(key + " has " + QString::number(rows.size()) + " rows"));
        for (const QJsonValue& row : rows)
            QVERIFY2(row.toArray().size() == shape.second, qPrintable(key + " has a row of the wrong length"));
    }

    // Nulls in "masked" exactly where the causal mask is; nowhere else in any matrix.
    const QJsonArray masked = o["masked"].toArray(), weights = o["weights"].toArray();
    for (int i = 0; i < T; ++i)
        for (int j = 0; j < T; ++j) {
            const bool isNull = masked[i].toArray()[j].isNull();
            QVERIFY2(isNull == (causal && j > i), qPrintable(QString("masked(%1, %2)").arg(i).arg(j)));
            QVERIFY(!weights[i].toArray()[j].isNull());
        }

    // The weights are the `attention` command's weights for that head.
    const Run a = runCli(QStringList{"attention", "--model", "random", "--text", text} + settings);
    QVERIFY2(a.exitCode == 0, a.err.constData());
    const QJsonArray expected = QJsonDocument::fromJson(a.out).object()["attention"].toArray()[layer].toArray()[head].toArray();
    // A missing number, or a null (JSON has no NaN), is read as NaN and fails.
    numericcheck::Worst worst;
    for (int i = 0; i < T; ++i)
        for (int j = 0; j < T; ++j) worst.add(weights[i].toArray()[j].toDouble(NAN), expected[i].toArray()[j].toDouble(NAN), i, j);
    QVERIFY2(worst.within(1e-7), worst.message("trace against attention weights").c_str());
}

void TestCliTrace::badHeadOrLayer_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("exitCode");
    QTest::newRow("layer past the last") << QStringList{"--layer", "2", "--head", "0"} << 1;
    QTest::newRow("head past the last") << QStringList{"--layer", "0", "--head", "4"} << 1;
    QTest::newRow("layer not a number") << QStringList{"--layer", "one", "--head", "0"} << 2;
    QTest::newRow("negative head") << QStringList{"--layer", "0", "--head", "-1"} << 1;
    QTest::newRow("head missing") << QStringList{"--layer", "0"} << 2;
    QTest::newRow("unknown option") << QStringList{"--layer", "0", "--head", "0", "--stats"} << 2;
}

void TestCliTrace::badHeadOrLayer()
{
    QFETCH(QStringList, args);
    QFETCH(int, exitCode);
    const Run r = runCli(QStringList{"trace", "--model", "random", "--text", "the cat"} + args);
    QCOMPARE(r.exitCode, exitCode);
    QVERIFY2(r.err.startsWith("error: "), r.err.constData());
    QVERIFY(r.out.isEmpty());
}

QTEST_GUILESS_MAIN(TestCliTrace)
#include "tst_cli_trace.moc"
