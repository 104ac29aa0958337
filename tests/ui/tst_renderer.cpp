// Headless rendering: the views written at the requested size in each format, and the errors a person
// gets for a wrong view, extension or path.
#include <QFile>
#include <QImage>
#include <QTemporaryDir>
#include <QtTest>

#include "ui/document/document.h"
#include "ui/drawing/strokeraster.h"
#include "ui/export/renderer.h"
#include "core/compute/threadpool.h"
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
    void strokesCoverWhatTheyCross();
    void manyStrokesBlendAsOneAfterAnother();
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

// The lines picture's strokes on screen (drawing/strokeraster.h): an opaque stroke on whole pixels covers
// exactly them, half opacity mixes half, a steep stroke leaves no row out, and a stroke outside is clipped.
void TestRenderer::strokesCoverWhatTheyCross()
{
    QImage image(20, 20, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    const QRgb blue = qRgb(0, 0, 255);
    blendStroke(image, QLineF(5, 10, 15, 10), 2.0, blue, 1.0);  // rows 9 and 10, columns 5..14
    for (int y = 0; y < 20; ++y)
        for (int x = 0; x < 20; ++x) {
            const bool inside = x >= 5 && x < 15 && (y == 9 || y == 10);
            QCOMPARE(image.pixel(x, y), inside ? qRgba(0, 0, 255, 255) : QRgb(0));
        }
    image.fill(Qt::white);
    blendStroke(image, QLineF(0, 4, 20, 4), 2.0, qRgb(0, 0, 0), 0.5);
    const QRgb mixed = image.pixel(10, 3);
    QVERIFY2(std::abs(qRed(mixed) - 128) <= 1 && qAlpha(mixed) == 255, qPrintable(QString::number(mixed, 16)));
    // Steep: one pixel's worth of ink in every row it crosses, split between the two columns it straddles.
    image.fill(Qt::transparent);
    blendStroke(image, QLineF(10, 0, 10, 20), 1.0, blue, 1.0);
    for (int y = 0; y < 20; ++y) {
        const int ink = qAlpha(image.pixel(9, y)) + qAlpha(image.pixel(10, y));
        QVERIFY2(std::abs(ink - 255) <= 2, qPrintable(QStringLiteral("row %1: %2").arg(y).arg(ink)));
    }
    const QImage before = image;
    blendStroke(image, QLineF(-50, -40, -10, -30), 3.0, blue, 1.0);
    blendStroke(image, QLineF(30, 5, 60, 90), 3.0, blue, 1.0);
    QCOMPARE(image, before);
}

// StrokeList cuts the image into bands of rows drawn on several threads; every pixel still sees the strokes in
// the order they were added, so the picture is the one blendStroke draws stroke after stroke, bit for bit:
// steep and shallow, thin and wide, faint and opaque, crossing the edges and the bands.
void TestRenderer::manyStrokesBlendAsOneAfterAnother()
{
    ThreadPool& pool = ThreadPool::shared();
    const int threads = pool.threads();
    pool.setThreads(3);  // bands on any machine
    QImage one(233, 171, QImage::Format_ARGB32_Premultiplied), many(one.size(), one.format());
    one.fill(Qt::white);
    many.fill(Qt::white);
    StrokeList strokes;
    quint32 state = 12345;
    const auto next = [&](double lo, double hi) {
        state = state * 1664525u + 1013904223u;
        return lo + (hi - lo) * double(state >> 8) / double(1u << 24);
    };
    for (int i = 0; i < 600; ++i) {
        const QLineF line(next(-40, 270), next(-40, 210), next(-40, 270), next(-40, 210));
        const double width = i % 7 == 0 ? next(2, 9) : next(0.2, 1.5);
        const QRgb rgb = qRgb(int(next(0, 255)), int(next(0, 255)), int(next(0, 255)));
        const double alpha = i % 11 == 0 ? 1.0 : next(0.01, 0.6);
        blendStroke(one, line, width, rgb, alpha);
        strokes.add(line, width, rgb, alpha);
    }
    // The edge cases: flat, nearly flat (the column range is far past any int before clamping), upright,
    // a point, far outside, and a stroke beyond any image that is refused.
    const QLineF special[] = {QLineF(-10, 40, 300, 40), QLineF(0, 50.2, 230, 50.2000001), QLineF(70, -20, 70.0000001, 300),
                              QLineF(30, 30, 30, 30), QLineF(-1e5, -1e5, -9e4, 5e4), QLineF(0, 0, 1e9, 1)};
    for (const QLineF& line : special) {
        blendStroke(one, line, 1.5, qRgb(200, 30, 90), 0.7);
        strokes.add(line, 1.5, qRgb(200, 30, 90), 0.7);
    }
    QCOMPARE(strokes.size(), 605);  // the one beyond any image is not added
    strokes.blendInto(many);
    pool.setThreads(threads);
    QCOMPARE(many, one);
    QImage white(one.size(), one.format());
    white.fill(Qt::white);
    QVERIFY(one != white);  // something was drawn
}

QTEST_MAIN(TestRenderer)
#include "tst_renderer.moc"
