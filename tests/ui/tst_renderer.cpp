// Headless rendering: the views written at the requested size in each format, and the errors a person
// gets for a wrong view, extension or path.
#include <QFile>
#include <QImage>
#include <QTemporaryDir>
#include <QtTest>

#include "ui/document/document.h"
#include "ui/export/renderer.h"
#include "core/open/openmodel.h"

using namespace attnscope;

class TestRenderer : public QObject {
    Q_OBJECT
private slots:
    void writesRequestedSize_data();
    void writesRequestedSize();
    void refusesBadRequests_data();
    void refusesBadRequests();
    void reportsInputErrors();
};

void TestRenderer::writesRequestedSize_data()
{
    QTest::addColumn<QString>("view");
    QTest::addColumn<QString>("file");
    QTest::addColumn<QByteArray>("header");
    QTest::newRow("heatmap as PNG") << "heatmap" << "h.png" << QByteArray("\x89PNG");
    QTest::newRow("grid as PNG") << "grid" << "g.png" << QByteArray("\x89PNG");
    QTest::newRow("heatmap as SVG") << "heatmap" << "h.svg" << QByteArray("<?xml");
    QTest::newRow("grid as SVG") << "grid" << "g.svg" << QByteArray("<?xml");
    QTest::newRow("heatmap as PDF") << "heatmap" << "h.pdf" << QByteArray("%PDF");
    QTest::newRow("grid as PDF") << "grid" << "g.pdf" << QByteArray("%PDF");
}

void TestRenderer::writesRequestedSize()
{
    QFETCH(QString, view);
    QFETCH(QString, file);
    QFETCH(QByteArray, header);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    Document doc;
    doc.setText(QStringLiteral("The quick brown fox jumps over the lazy dog"));
    doc.setFocus({1, 2});
    RenderOptions options;
    options.outPath = dir.filePath(file);
    options.width = 640;
    options.height = 480;
    const Status status = renderView(view, doc, options);
    QVERIFY2(status.ok(), status.error().c_str());

    QFile out(options.outPath);
    QVERIFY(out.open(QIODevice::ReadOnly));
    const QByteArray bytes = out.readAll();
    QVERIFY(bytes.size() > 1000);
    QVERIFY2(bytes.startsWith(header), bytes.left(8).toHex().constData());
    if (file.endsWith(QLatin1String(".png"))) {
        const QImage image(options.outPath);
        QCOMPARE(image.size(), QSize(640, 480));
        // Not blank: the viridis ends are both somewhere in a heatmap of softmax rows.
        QVERIFY(image.pixel(0, 0) != image.pixel(320, 240) || image.pixel(320, 240) != image.pixel(200, 100));
    } else if (file.endsWith(QLatin1String(".svg"))) {
        QVERIFY(bytes.contains("width=\"640"));
    }
}

void TestRenderer::refusesBadRequests_data()
{
    QTest::addColumn<QString>("view");
    QTest::addColumn<QString>("file");
    QTest::addColumn<bool>("usage");
    QTest::newRow("unknown view") << "nonsense" << "x.png" << true;
    QTest::newRow("unknown extension") << "heatmap" << "x.bmp" << true;
    QTest::newRow("no extension") << "grid" << "x" << true;
    QTest::newRow("folder that does not exist") << "heatmap" << "missing/folder/x.png" << false;
}

void TestRenderer::refusesBadRequests()
{
    QFETCH(QString, view);
    QFETCH(QString, file);
    QFETCH(bool, usage);
    QTemporaryDir dir;
    Document doc;
    doc.setText(QStringLiteral("a b c"));
    RenderOptions options;
    options.outPath = dir.filePath(file);
    const Status status = renderView(view, doc, options);
    QVERIFY(!status.ok());
    QCOMPARE(!checkRenderRequest(view, options).ok(), usage);
    QVERIFY(!QFile::exists(options.outPath));
}

void TestRenderer::reportsInputErrors()
{
    QTemporaryDir dir;
    Document doc;
    Result<ModelPtr> small = loadModel("random:layers=1,heads=1,d_model=8,context=4,seed=2");
    QVERIFY(small);
    doc.setModel(*small);
    doc.setText(QStringLiteral("one two three four five six"));
    RenderOptions options;
    options.outPath = dir.filePath(QStringLiteral("x.png"));
    const Status status = renderView(QStringLiteral("heatmap"), doc, options);
    QVERIFY(!status.ok());
    QVERIFY(checkRenderRequest(QStringLiteral("heatmap"), options).ok());
    QVERIFY(QString::fromStdString(status.error()).contains(QStringLiteral("context")));
}

QTEST_MAIN(TestRenderer)
#include "tst_renderer.moc"
