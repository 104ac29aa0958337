// The hostile-text matrix (tests/core/hostiletext.h) through attnscope-cli, as a file (--text-file), so
// NUL bytes and invalid UTF-8 reach the program as they are: invalid text is exit 1 with one sentence
// naming the byte, valid text is tokenised, and attention either runs or refuses text longer than the
// token limit with both lengths. Never a crash. Then --max-tokens, the configurable limit.
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QtTest>

#include "clirunner.h"
#include "hostiletext.h"

class TestCliHostileText : public QObject {
    Q_OBJECT
private slots:
    void matrix_data()
    {
        QTest::addColumn<int>("row");
        for (std::size_t i = 0; i < hostiletext::rows().size(); ++i) QTest::newRow(hostiletext::rows()[i].name) << int(i);
    }

    void matrix()
    {
        QFETCH(int, row);
        const hostiletext::Row& r = hostiletext::rows()[static_cast<std::size_t>(row)];
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("text.txt"));
        {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(r.bytes.data(), qint64(r.bytes.size()));
        }
        const clitest::Run tokenize = clitest::runCli({"tokenize", "--text-file", path});
        QVERIFY(tokenize.finished);
        QCOMPARE(tokenize.status, QProcess::NormalExit);
        if (!r.valid) {
            QCOMPARE(tokenize.exitCode, 1);
            QVERIFY2(tokenize.err.startsWith("error: the text is not valid UTF-8 (byte "), tokenize.err.constData());
        } else {
            QVERIFY2(tokenize.exitCode == 0, tokenize.err.constData());
            QJsonParseError error;
            QJsonDocument::fromJson(tokenize.out, &error);
            QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
        }

        const clitest::Run attention = clitest::runCli({"attention", "--text-file", path});
        QVERIFY(attention.finished);
        QCOMPARE(attention.status, QProcess::NormalExit);
        if (attention.exitCode == 0) {
            QVERIFY(r.valid);
            return;
        }
        QCOMPARE(attention.exitCode, 1);
        QCOMPARE(attention.err.count('\n'), 1);  // one sentence
        if (r.valid) {
            // Only length refuses valid text; the default (built-in) model's context is 128 tokens.
            QVERIFY2(attention.err.contains("tokens but the model's context is 128 tokens"), attention.err.constData());
        }
    }

    void tokenLimit_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("message");
        // Five words are six tokens for the default (built-in) model, which puts <bos> first.
        const QStringList five = {"--text", "one two three four five"};
        QTest::newRow("under the limit") << QStringList{"attention"} + five + QStringList{"--max-tokens", "6"} << 0 << QString();
        QTest::newRow("over the limit names both lengths")
            << QStringList{"attention"} + five + QStringList{"--max-tokens", "3"} << 1
            << "the input has 6 tokens but the token limit is 3 (the model's context is 128).";
        QTest::newRow("a limit past the context is the context")
            << QStringList{"attention", "--model", "random:context=4"} + five + QStringList{"--max-tokens", "100"} << 1
            << "the input has 5 tokens but the model's context is 4 tokens.";
        QTest::newRow("trace honours it") << QStringList{"trace", "--layer", "0", "--head", "0", "--max-tokens", "2"} + five << 1
                                          << "token limit is 2";
        QTest::newRow("render honours it")
            << QStringList{"render", "--view", "heatmap", "--out", "/nonexistent/x.png", "--max-tokens", "2"} + five << 1
            << "token limit is 2";
        QTest::newRow("zero is bad usage") << QStringList{"attention", "--max-tokens", "0"} + five << 2 << "token limit must be";
        QTest::newRow("text is bad usage") << QStringList{"attention", "--max-tokens", "lots"} + five << 2 << "token limit must be";
    }

    void tokenLimit()
    {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, message);
        const clitest::Run cli = clitest::runCli(args);
        QVERIFY(cli.finished);
        QVERIFY2(cli.exitCode == exitCode, cli.err.constData());
        if (exitCode != 0) QVERIFY2(cli.err.contains(message.toUtf8()), cli.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestCliHostileText)
#include "tst_cli_hostiletext.moc"
