// attnscope-cli render as a person runs it: no display and no QT_QPA_PLATFORM in the environment
// (the command must choose the offscreen platform itself), exit codes 0/1/2 and "error: ..." on stderr.
#include <QImage>
#include <QTemporaryDir>
#include <QtTest>

#include "clirunner.h"

class TestCliRender : public QObject {
    Q_OBJECT
private slots:
    void render_data();
    void render();
    void fullDiskKeepsThePreviousFile();
    void linesAreVectorStrokesInSvg();
};

void TestCliRender::render_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("out");
    QTest::addColumn<int>("exitCode");
    const QStringList base = {"render", "--text", "The quick brown fox jumps over the lazy dog"};
    QTest::newRow("heatmap PNG at 500x400") << base + QStringList{"--view", "heatmap", "--layer", "1", "--head", "3", "--width", "500", "--height", "400", "--mask", "none", "--block-keys", "2"} << "h.png" << 0;
    QTest::newRow("grid SVG") << base + QStringList{"--view", "grid", "--scaling", "none", "--temperature", "2"} << "g.svg" << 0;
    QTest::newRow("value-weighted grid PNG") << base + QStringList{"--view", "grid", "--display", "value-weighted", "--width", "500", "--height", "400"} << "v.png" << 0;
    QTest::newRow("unknown display is usage") << base + QStringList{"--view", "grid", "--display", "norms"} << "x.png" << 2;
    QTest::newRow("heatmap PDF") << base + QStringList{"--view", "heatmap", "--positional", "none"} << "h.pdf" << 0;
    const QStringList size = {"--width", "500", "--height", "400"};
    for (const char* view : {"saturation", "why-sqrt-dk", "jacobian", "histogram", "dashboard", "compare", "why-attention", "pipeline",
                             "cell", "heads", "block", "positional", "cross"})
        QTest::newRow(qPrintable(QString("%1 PNG through the render command").arg(view)))
            << base + QStringList{"--view", view} + size << "v.png" << 0;
    QTest::newRow("cell chosen by query and key") << base + QStringList{"--view", "cell", "--query", "4", "--key", "2"} + size << "c.png" << 0;
    QTest::newRow("cross-attention with a source sentence") << base + QStringList{"--view", "cross", "--source", "Le chat"} << "x.svg" << 0;
    QTest::newRow("saturation PDF") << base + QStringList{"--view", "saturation", "--scaling", "none"} << "s.pdf" << 0;
    QTest::newRow("cell past the text is input") << base + QStringList{"--view", "cell", "--query", "40"} << "x.png" << 1;
    QTest::newRow("unknown view is usage") << base + QStringList{"--view", "nope"} << "x.png" << 2;
    QTest::newRow("unknown extension is usage") << base + QStringList{"--view", "grid"} << "x.gif" << 2;
    QTest::newRow("missing view is usage") << base << "x.png" << 2;
    QTest::newRow("layer past the model is input") << base + QStringList{"--view", "grid", "--layer", "9"} << "x.png" << 1;
    QTest::newRow("blocked key past the text is input") << base + QStringList{"--view", "grid", "--block-keys", "40"} << "x.png" << 1;
    QTest::newRow("lines PNG, two heads overlaid, a query pinned")
        << base + QStringList{"--view", "lines", "--heads", "0.1,1.3", "--query", "4"} + size << "l.png" << 0;
    QTest::newRow("lines SVG with every filter")
        << base + QStringList{"--view", "lines", "--threshold", "0.05", "--keep-share", "0.9", "--hide-special"} << "l.svg" << 0;
    QTest::newRow("lines PDF") << base + QStringList{"--view", "lines", "--mask", "none"} << "l.pdf" << 0;
    QTest::newRow("threshold above 1 is refused") << base + QStringList{"--view", "lines", "--threshold", "1.5"} << "x.png" << 1;
    QTest::newRow("threshold not a number is refused") << base + QStringList{"--view", "lines", "--threshold", "half"} << "x.png" << 1;
    QTest::newRow("keep share 0 is refused") << base + QStringList{"--view", "lines", "--keep-share", "0"} << "x.png" << 1;
    QTest::newRow("keep share NaN is refused") << base + QStringList{"--view", "lines", "--keep-share", "nan"} << "x.png" << 1;
    QTest::newRow("a head past the model is refused") << base + QStringList{"--view", "lines", "--heads", "0.1,9.0"} << "x.png" << 1;
    QTest::newRow("heads that are not pairs are refused") << base + QStringList{"--view", "lines", "--heads", "1"} << "x.png" << 1;
    QTest::newRow("a pinned query past the text is refused") << base + QStringList{"--view", "lines", "--query", "40"} << "x.png" << 1;
    QTest::newRow("a lines option on the heatmap is usage") << base + QStringList{"--view", "heatmap", "--threshold", "0.1"} << "x.png" << 2;
    QTest::newRow("unwritable folder is input") << base + QStringList{"--view", "grid"} << "no/such/folder/x.png" << 1;
}

void TestCliRender::render()
{
    QFETCH(QStringList, args);
    QFETCH(QString, out);
    QFETCH(int, exitCode);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(out);
    clitest::RunOptions headless;
    headless.environment = QProcessEnvironment::systemEnvironment();
    headless.environment.remove(QStringLiteral("QT_QPA_PLATFORM"));
    headless.environment.remove(QStringLiteral("DISPLAY"));
    headless.environment.remove(QStringLiteral("WAYLAND_DISPLAY"));
    const clitest::Run cli = clitest::runCli(args + QStringList{"--out", path}, headless);
    QVERIFY(cli.finished);
    const QByteArray err = cli.err;
    QCOMPARE(cli.status, QProcess::NormalExit);
    QVERIFY2(cli.exitCode == exitCode, err.constData());
    if (exitCode != 0) {
        QVERIFY2(err.contains("error: "), err.constData());
        QVERIFY(!QFile::exists(path));
        return;
    }
    QVERIFY2(err.isEmpty(), err.constData());  // success says nothing on stderr
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray bytes = file.readAll();
    QVERIFY(bytes.size() > 1000);
    if (out.endsWith(QLatin1String(".png"))) QCOMPARE(QImage(path).size(), QSize(500, 400));
    if (out.endsWith(QLatin1String(".svg"))) QVERIFY(bytes.startsWith("<?xml") && bytes.contains("<svg"));
    if (out.endsWith(QLatin1String(".pdf"))) QVERIFY(bytes.startsWith("%PDF"));
}

// The lines view in SVG: one stroke per drawn line, not a picture of them. The built-in model reads
// "<bos> the dog chased the cat" as 6 tokens, so the causal mask leaves 21 pairs, each with weight.
void TestCliRender::linesAreVectorStrokesInSvg()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("l.svg"));
    const clitest::Run cli = clitest::runCli({"render", "--view", "lines", "--text", "the dog chased the cat", "--out", path});
    QVERIFY2(cli.finished && cli.exitCode == 0, cli.err.constData());
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray svg = file.readAll();
    QVERIFY(!svg.contains("<image"));
    const int strokes = int(svg.count("<polyline"));
    QVERIFY2(strokes == 21 + 1, qPrintable(QString::number(strokes)));  // and the legend's swatch
}

// A render that cannot finish writing (here: the file-size limit a full disk would impose) must leave the
// previous export byte for byte and no temporary file beside it, and say so.
void TestCliRender::fullDiskKeepsThePreviousFile()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("figure.png"));
    {
        QFile old(path);
        QVERIFY(old.open(QIODevice::WriteOnly));
        old.write("the previous figure");
    }
    clitest::RunOptions capped;
    capped.fileSizeLimitBytes = 2048;  // a heatmap PNG is tens of kilobytes
    const clitest::Run cli = clitest::runCli({"render", "--text", "The quick brown fox", "--view", "heatmap", "--out", path}, capped);
    QVERIFY(cli.finished);
    QCOMPARE(cli.exitCode, 1);
    QVERIFY2(cli.err.startsWith("error: ") && cli.err.contains("the previous file is unchanged"), cli.err.constData());
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(file.readAll(), QByteArray("the previous figure"));
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden), QStringList{"figure.png"});
}

QTEST_GUILESS_MAIN(TestCliRender)
#include "tst_cli_render.moc"
