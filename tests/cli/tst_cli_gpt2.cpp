// Exit codes of the CLI on GPT-2 folders: bad model folders and over-long input exit 1, bad usage 2.
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <fstream>

#include "clirunner.h"

class TestCliGpt2 : public QObject {
    Q_OBJECT
private slots:
    void exitCodes_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("message");
        QTest::newRow("missing model folder") << QStringList{"info", "--model", "/nonexistent/gpt2"} << 1 << "does not exist";
        QTest::newRow("pytorch pickle only") << QStringList{"info", "--model", "@pickle"} << 1 << "safe_serialization=True";
        QTest::newRow("bench past the context") << QStringList{"bench", "--tokens", "300", "--repeat", "1", "--model", "random:context=256"}
                                                << 1 << "300 tokens but the model's context is 256";
        QTest::newRow("bench zero tokens") << QStringList{"bench", "--tokens", "0"} << 2 << "--tokens must be";
        QTest::newRow("top-k not a number") << QStringList{"attention", "--text", "a b", "--top-k", "x"} << 2 << "--top-k must be";
        QTest::newRow("bench on the random model") << QStringList{"bench", "--tokens", "8", "--repeat", "2"} << 0 << "";
    }
    void exitCodes()
    {
        QFETCH(QStringList, args);
        QFETCH(int, code);
        QFETCH(QString, message);
        QTemporaryDir dir;
        for (QString& a : args)
            if (a == "@pickle") {
                std::ofstream(dir.filePath("config.json").toStdString()) << "{}";
                std::ofstream(dir.filePath("pytorch_model.bin").toStdString()) << "not opened";
                a = dir.path();
            }
        const clitest::Run cli = clitest::runCli(args);
        QVERIFY(cli.finished);
        const QString err = QString::fromUtf8(cli.err);
        QCOMPARE(cli.exitCode, code);
        if (code != 0) QVERIFY2(err.startsWith("error: ") && err.contains(message), qPrintable(err));
        else QVERIFY(cli.out.contains("\"forward_ms_median\""));
    }

    // Without --tokens, bench times every default length the model's context holds, on the threads asked
    // for, and its GFLOP/s are the hand count below divided by the median time.
    void benchReportsEachLengthAndItsRate()
    {
        const clitest::Run cli = clitest::runCli(
            {"bench", "--model", "random:context=256", "--repeat", "2", "--threads", "2"});
        QVERIFY(cli.finished);
        QCOMPARE(cli.exitCode, 0);
        const QList<QByteArray> lines = cli.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 3);  // 8, 64 and 256 tokens; 1,024 is past the context
        const int expectedTokens[] = {8, 64, 256};
        for (int i = 0; i < 3; ++i) {
            const QJsonObject o = QJsonDocument::fromJson(lines[i]).object();
            QCOMPARE(o["tokens"].toInt(), expectedTokens[i]);
            QCOMPARE(o["threads"].toInt(), 2);
            QVERIFY(o["forward_ms_min"].toDouble() <= o["forward_ms_median"].toDouble());
            QVERIFY(o["gemm_gflops"].toDouble() > 0.0);
            QCOMPARE(o["fraction_of_gemm"].toDouble(), o["gflops"].toDouble() / o["gemm_gflops"].toDouble());
            // The plain read of the weights' bytes: at least the embedding table (8,192 × 64 floats), and the
            // rate and ratio are its size and the pass's median over its time.
            const double bytes = o["weights_mb"].toDouble() * (1 << 20), readMs = o["stream_read_ms"].toDouble();
            QVERIFY2(bytes >= 8192.0 * 64 * 4 && bytes < 2 * 8192.0 * 64 * 4, qPrintable(QString::number(bytes)));
            QVERIFY(readMs > 0.0);
            QVERIFY(std::abs(o["stream_gb_per_s"].toDouble() - bytes / (readMs * 1e-3) / 1e9) <= 1e-9 * o["stream_gb_per_s"].toDouble());
            QVERIFY(std::abs(o["forward_over_stream"].toDouble() - o["forward_ms_median"].toDouble() / readMs) <= 1e-9 * o["forward_over_stream"].toDouble());
        }
        // The random model: 2 layers, 4 heads of 16, d_model 64, d_ff 256, causal. At 8 tokens, per layer:
        // Q, K, V and output projections 4 * (8 * 64 * 64) multiply-adds = 131,072; 36 visible pairs, each
        // a 16-long dot product for the score and a 16-long update of the output, in 4 heads: 4,608;
        // feed-forward 2 * (8 * 64 * 256) = 262,144. Two layers, two operations per multiply-add:
        const double flops = 2.0 * 2.0 * (131072 + 4608 + 262144);
        const QJsonObject first = QJsonDocument::fromJson(lines[0]).object();
        const double implied = first["gflops"].toDouble() * 1e9 * first["forward_ms_median"].toDouble() * 1e-3;
        QVERIFY2(std::abs(implied - flops) <= 1e-9 * flops, qPrintable(QString::number(implied, 'f', 1)));
    }
};

QTEST_GUILESS_MAIN(TestCliGpt2)
#include "tst_cli_gpt2.moc"
