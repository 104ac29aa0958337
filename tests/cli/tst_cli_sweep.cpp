// attnscope-cli sweep, run as a person would run it: the JSON's keys and lengths, its agreement with
// `attention --stats` at the present multiplier, and the exit codes of its errors.
#include <QtTest>

#include <cmath>

#include <nlohmann/json.hpp>

#include "clirunner.h"

namespace {

using clitest::Run;

Run runCli(const QStringList& args)
{
    clitest::RunOptions options;
    options.timeoutMs = 600'000;  // a sweep runs the model at every multiplier: more than other commands
    return clitest::runCli(args, options);
}

nlohmann::ordered_json parse(const QByteArray& bytes)
{
    return nlohmann::ordered_json::parse(bytes.constData(), bytes.constData() + bytes.size());
}

const QString kModel = QStringLiteral("random:layers=2,heads=4,d_model=64,seed=5");

} // namespace

class TestCliSweep : public QObject {
    Q_OBJECT
private slots:
    void keysAndLengths();
    void matchesAttentionStats_data();
    void matchesAttentionStats();
    void errors_data();
    void errors();
};

void TestCliSweep::keysAndLengths()
{
    const Run r = runCli({"sweep", "--model", kModel, "--text", "the cat sat on the mat", "--layer", "1", "--head", "3"});
    QCOMPARE(r.exitCode, 0);
    const nlohmann::ordered_json j = parse(r.out);
    std::vector<std::string> keys;
    for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
    const std::vector<std::string> want = {"multipliers", "entropy", "max_weight", "jacobian_norm", "baseline_entropy", "current"};
    QCOMPARE(keys, want);
    const std::size_t n = j["multipliers"].size();
    QVERIFY(n >= 49);
    for (const char* k : {"entropy", "max_weight", "jacobian_norm", "baseline_entropy"}) QCOMPARE(j[k].size(), n);
    const std::vector<double> m = j["multipliers"].get<std::vector<double>>();
    QVERIFY(std::is_sorted(m.begin(), m.end()));
    QCOMPARE(m.front(), 1.0 / 64);
    QCOMPARE(m.back(), 64.0);
    QCOMPARE(j["current"].get<double>(), 0.25);  // d_head 16, scaled by 1/sqrt(16)
    QVERIFY(std::find(m.begin(), m.end(), 1.0) != m.end());
}

void TestCliSweep::matchesAttentionStats_data()
{
    QTest::addColumn<QStringList>("settings");
    QTest::addColumn<int>("layer");
    QTest::addColumn<int>("head");
    QTest::newRow("defaults, layer 0 head 0") << QStringList{} << 0 << 0;
    QTest::newRow("unscaled, layer 1 head 2") << QStringList{"--scaling", "none"} << 1 << 2;
    QTest::newRow("temperature 0.6, no mask, layer 1 head 1") << QStringList{"--temperature", "0.6", "--mask", "none"} << 1 << 1;
    QTest::newRow("key 0 blocked: row 0 fully masked") << QStringList{"--block-keys", "0"} << 1 << 0;
}

void TestCliSweep::matchesAttentionStats()
{
    QFETCH(QStringList, settings);
    QFETCH(int, layer);
    QFETCH(int, head);
    const QStringList common = QStringList{"--model", kModel, "--text", "one small step for a man"} + settings;
    const Run sweep = runCli(QStringList{"sweep", "--layer", QString::number(layer), "--head", QString::number(head)} + common);
    const Run attention = runCli(QStringList{"attention", "--stats"} + common);
    QCOMPARE(sweep.exitCode, 0);
    QCOMPARE(attention.exitCode, 0);
    const nlohmann::ordered_json s = parse(sweep.out), a = parse(attention.out);

    const std::vector<double> m = s["multipliers"].get<std::vector<double>>();
    const auto at = std::find(m.begin(), m.end(), s["current"].get<double>());
    QVERIFY2(at != m.end(), "the current multiplier is not on the grid");
    const double swept = s["entropy"][std::size_t(at - m.begin())].get<double>();

    // Mean over the rows that see a key: a fully masked row's weights are all 0.
    const auto& entropy = a["stats"]["entropy"][std::size_t(layer)][std::size_t(head)];
    const auto& weights = a["attention"][std::size_t(layer)][std::size_t(head)];
    double sum = 0.0;
    int rows = 0;
    for (std::size_t i = 0; i < entropy.size(); ++i) {
        double total = 0.0;
        for (const auto& w : weights[i]) total += w.get<double>();
        if (total == 0.0) continue;
        sum += entropy[i].get<double>();
        ++rows;
    }
    QVERIFY(rows > 0);
    const double diff = std::abs(sum / rows - swept);
    QVERIFY2(diff < 1e-5, qPrintable(QString("sweep entropy at the current multiplier differs from attention --stats by %1").arg(diff)));
}

void TestCliSweep::errors_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("says");
    const QStringList base{"sweep", "--model", kModel, "--text", "a b c"};
    QTest::newRow("layer past the last") << base + QStringList{"--layer", "2", "--head", "0"} << 1 << "layer 2 does not exist";
    QTest::newRow("negative head") << base + QStringList{"--layer", "0", "--head", "-1"} << 1 << "head -1 does not exist";
    QTest::newRow("head past the last") << base + QStringList{"--layer", "0", "--head", "4"} << 1 << "head 4 does not exist";
    QTest::newRow("no --layer") << base + QStringList{"--head", "0"} << 2 << "needs --layer";
    QTest::newRow("layer not a number") << base + QStringList{"--layer", "one", "--head", "0"} << 2 << "whole number";
    QTest::newRow("unknown option") << base + QStringList{"--layer", "0", "--head", "0", "--stats"} << 2 << "not an option";
    QTest::newRow("bad scaling") << base + QStringList{"--layer", "0", "--head", "0", "--scaling", "half"} << 2 << "scaling";
    QTest::newRow("blocked key past the text") << base + QStringList{"--layer", "0", "--head", "0", "--block-keys", "9"} << 1 << "past the last token";
}

void TestCliSweep::errors()
{
    QFETCH(QStringList, args);
    QFETCH(int, code);
    QFETCH(QString, says);
    const Run r = runCli(args);
    QCOMPARE(r.exitCode, code);
    QVERIFY(r.out.isEmpty());
    QVERIFY2(r.err.startsWith("error: "), r.err.constData());
    QVERIFY2(QString::fromUtf8(r.err).contains(says), r.err.constData());
}

QTEST_GUILESS_MAIN(TestCliSweep)
#include "tst_cli_sweep.moc"
