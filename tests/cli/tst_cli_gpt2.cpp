// Exit codes of the CLI paths issue 3 added: bad model folders and over-long input exit 1, bad usage 2.
#include <QTemporaryDir>
#include <QTest>

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
        QTest::newRow("bench without --tokens") << QStringList{"bench"} << 2 << "needs --tokens";
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
};

QTEST_GUILESS_MAIN(TestCliGpt2)
#include "tst_cli_gpt2.moc"
