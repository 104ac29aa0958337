// attnscope-cli tiled as a script sees it: the documented keys in their order, m and l after every tile
// against a direct maximum and sum over the scores the core's pass captured, null where a row has seen no
// key, the output against the pass's head output, and the exit codes of its mistakes.
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <cmath>
#include <limits>

#include "clirunner.h"
#include "numericcheck.h"
#include "core/model/forward.h"
#include "core/open/openmodel.h"

using namespace attnscope;
using clitest::parse;
using clitest::Run;
using clitest::runCli;

namespace {

const char* kSpec = "random:layers=2,heads=4,d_model=64,seed=3";
const char* kText = "the cat sat on the mat and the cat sat again";


} // namespace

class TestCliTiled : public QObject {
    Q_OBJECT
private slots:
    void printsEveryTile_data()
    {
        QTest::addColumn<QString>("mask");
        QTest::addColumn<QString>("blocked");
        QTest::addColumn<int>("block");
        QTest::newRow("causal, blocks of 3") << "causal" << "" << 3;
        QTest::newRow("causal, key 0 blocked (row 0 sees no key), blocks of 4") << "causal" << "0" << 4;
        QTest::newRow("no mask, blocks of 5") << "none" << "" << 5;
        QTest::newRow("blocks of 2 under block:4") << "block:4" << "" << 2;
        QTest::newRow("one block larger than the text") << "causal" << "" << 64;
    }
    void printsEveryTile()
    {
        QFETCH(QString, mask);
        QFETCH(QString, blocked);
        QFETCH(int, block);
        QStringList args{"tiled", "--model", kSpec, "--text", kText, "--layer", "1", "--head", "2", "--block", QString::number(block), "--mask", mask};
        if (!blocked.isEmpty()) args << "--block-keys" << blocked;
        const Run r = runCli(args);
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.startsWith("{\"block\":"));
        QVERIFY(r.out.indexOf("\"steps\"") < r.out.indexOf("\"output\"") && r.out.indexOf("\"output\"") < r.out.indexOf("\"max_abs_difference\""));
        const QJsonObject o = parse(r);
        QCOMPARE(o.keys().size(), 4);
        QCOMPARE(o["block"].toInt(), block);

        // The core's own pass of the same head, whose captured scores the direct computation reads.
        ModelPtr m = *loadModel(kSpec);
        const std::vector<int> ids = m->tokenizer->encode(kText)->ids;
        AttentionSettings s;
        applyMask(s, *parseMaskSetting(mask.toStdString()));
        if (!blocked.isEmpty()) s.blockedKeys = *parseBlockedKeys(blocked.toStdString());
        CaptureRequest capture;
        capture.detail = HeadSelection{1, 2};
        const ForwardTrace t = *forward(*m, ids, s, capture);
        const Matrix& masked = t.detail.masked;  // (T, T)
        const int T = int(ids.size()), blocks = (T + block - 1) / block;
        const bool causal = s.mask == MaskKind::Causal;

        const QJsonArray steps = o["steps"].toArray();
        QCOMPARE(steps.size(), blocks * blocks);
        numericcheck::Worst ml;
        int nulls = 0;
        for (int i = 0; i < steps.size(); ++i) {
            const QJsonObject step = steps[i].toObject();
            QCOMPARE(step.keys(), (QStringList{"key_block", "l", "m", "query_block", "skipped"}));
            const int qb = step["query_block"].toInt(-1), kb = step["key_block"].toInt(-1);
            QCOMPARE(qb, i / blocks);
            QCOMPARE(kb, i % blocks);
            const int first = qb * block, rows = std::min(block, T - first);
            QCOMPARE(step["skipped"].toBool(), causal && kb * block > first + rows - 1);
            const QJsonArray mRow = step["m"].toArray(), lRow = step["l"].toArray();
            QCOMPARE(mRow.size(), rows);
            QCOMPARE(lRow.size(), rows);
            for (int r = 0; r < rows; ++r) {
                double best = -std::numeric_limits<double>::infinity(), sum = 0.0;
                for (int j = 0; j < std::min(T, (kb + 1) * block); ++j) best = std::max(best, double(masked(first + r, j)));
                for (int j = 0; j < std::min(T, (kb + 1) * block) && std::isfinite(best); ++j) sum += std::exp(double(masked(first + r, j)) - best);
                if (!std::isfinite(best)) {
                    QVERIFY2(mRow[r].isNull() && lRow[r].toDouble(NAN) == 0.0, qPrintable(QString("step %1 row %2").arg(i).arg(first + r)));
                    ++nulls;
                    continue;
                }
                ml.label("step %d, row %d", i, first + r);
                ml.add(mRow[r].toDouble(NAN), best);
                ml.add(lRow[r].toDouble(NAN) / sum, 1.0);
            }
        }
        QVERIFY2(ml.within(1e-5), ml.message("m and l against the direct computation").c_str());
        // Null where a row has seen no key yet: row 0 with key 0 blocked, or a row of a later block of block:4
        // before its own block's keys; never under the plain causal mask or none, where key 0 is always seen.
        if (!blocked.isEmpty() || mask.startsWith("block")) QVERIFY(nulls > 0);
        else QCOMPARE(nulls, 0);
        numericcheck::Worst out;
        const QJsonArray output = o["output"].toArray();
        QCOMPARE(output.size(), T);
        for (int i = 0; i < T; ++i)
            for (int e = 0; e < m->config.dHead; ++e) out.add(output[i].toArray()[e].toDouble(NAN), double(t.detail.headOutput(i, e)), i, e);
        QVERIFY2(out.within(1e-5), out.message("tiled output against the pass's").c_str());
        const double difference = o["max_abs_difference"].toDouble(NAN);
        QVERIFY2(difference >= 0.0 && difference < 1e-5, qPrintable(QString::number(difference)));
    }

    void refusesItsMistakes_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("says");
        const QStringList base{"tiled", "--model", kSpec, "--text", kText, "--layer", "0", "--head", "1"};
        QTest::newRow("no block") << base << 2 << "needs --block";
        QTest::newRow("block of 0") << (base + QStringList{"--block", "0"}) << 2 << "from 1 to 64, not '0'";
        QTest::newRow("block of 65") << (base + QStringList{"--block", "65"}) << 2 << "from 1 to 64, not '65'";
        QTest::newRow("no head") << QStringList{"tiled", "--model", kSpec, "--text", kText, "--block", "4"} << 2 << "--layer";
        QTest::newRow("a layer the model lacks") << QStringList{"tiled", "--model", kSpec, "--text", kText, "--layer", "5", "--head", "0", "--block", "4"}
                                                << 1 << "layer 5 does not exist";
        QTest::newRow("a malformed pattern") << (base + QStringList{"--block", "4", "--mask", "random:2"}) << 2 << "'random:R,SEED'";
    }
    void refusesItsMistakes()
    {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, says);
        const Run r = runCli(args);
        QCOMPARE(r.exitCode, exitCode);
        QVERIFY(r.out.isEmpty());
        const QString first = QString::fromUtf8(r.err).section(u'\n', 0, 0);  // usage errors add a line pointing at --help
        QVERIFY2(first.startsWith(QStringLiteral("error: ")) && first.contains(says) && first.endsWith(u'.'), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestCliTiled)
#include "tst_cli_tiled.moc"
