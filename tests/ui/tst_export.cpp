// Export from the window and the renderer: every view in every format is a valid file, SVG and PDF hold
// vectors (no embedded bitmap; a heatmap is one rectangle per cell), a PNG's pixels follow the dpi, the
// chosen colour map reaches the screen and the files, and the window's data export writes what the core's
// exportData writes for the document.
#include <QApplication>
#include <QClipboard>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMenu>
#include <QMimeData>
#include <QStandardPaths>
#include <QSvgRenderer>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>

#include "numericcheck.h"
#include "tinyneox.h"
#include "ui/attention/heatmapview.h"
#include "ui/drawing/colormap.h"
#include "ui/document/document.h"
#include "ui/export/dataexportdialog.h"
#include "ui/export/exportdialog.h"
#include "ui/export/plotmenu.h"
#include "ui/export/viewexport.h"
#include "core/model/generate.h"
#include "ui/steps/costview.h"
#include "ui/window/mainwindow.h"
#include "ui/export/renderer.h"
#include "ui/window/windowactions.h"
#include "core/open/openmodel.h"

using namespace attnscope;

namespace {

const QString kSentence = QStringLiteral("the cat sat on the mat and then the dog barked");

QByteArray readFile(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// How many elements of each name an SVG holds.
QHash<QString, int> svgElements(const QByteArray& svg)
{
    QHash<QString, int> counts;
    QXmlStreamReader xml(svg);
    while (!xml.atEnd())
        if (xml.readNext() == QXmlStreamReader::StartElement) ++counts[xml.name().toString()];
    if (xml.hasError()) counts[QStringLiteral("#error")] = 1;
    return counts;
}

// Two timings as the window's Cost view passes them to its export (oneHeadMs, allHeadsMs and bytes per T).
std::vector<CostPoint> windowCostPoints()
{
    std::vector<CostPoint> points(2);
    points[0] = {8, 2.5, 3.0, 512, 1536, 6144};
    points[1] = {16, 1234.5, 5000.0, 2048, 3072, 12288};
    return points;
}

Status render(Document& doc, const QString& view, const QString& path, int width = 900, int height = 640, int dpi = 96)
{
    RenderOptions options;
    options.outPath = path;
    options.width = width;
    options.height = height;
    options.dpi = dpi;
    options.source = QStringLiteral("the dog sat on the mat and then the cat barked");  // patching: as many tokens
    // The Cost view draws given timings, as the window passes its own: measuring up to 2,048 tokens for
    // each format took 24 s of the sanitizer run. theCostExportDrawsTheWindowsTimings renders a measured one.
    if (view == QLatin1String("cost")) options.costPoints = windowCostPoints();
    return renderView(view, doc, options);
}

} // namespace

class TestExport : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
    void cleanup() { ColorMap::setCurrent(ColorMap::kDefault); }

    void everyViewInEveryFormatIsAValidFile_data()
    {
        QTest::addColumn<QString>("view");
        for (const QString& view : renderViewNames()) QTest::newRow(qPrintable(view)) << view;
    }
    void everyViewInEveryFormatIsAValidFile()
    {
        QFETCH(QString, view);
        QTemporaryDir dir;
        Document doc;
        doc.setText(kSentence);
        const QByteArray cache = qgetenv("HF_HUB_CACHE");
        if (view == QLatin1String("checkpoints")) {
            // Checkpoints draws a repository of the Hugging Face cache with several revisions: two tiny GPT-NeoX
            // snapshots as plain folders, each named by a ref.
            const std::string repo = dir.filePath(QStringLiteral("hub/models--t--tiny")).toStdString();
            for (const char* step : {"step1", "step2"}) {
                const std::string commit(40, step[4]);
                tinyneox::Spec spec;
                spec.seed = std::uint64_t(step[4]);
                tinyneox::writeFolder(repo + "/snapshots", commit, spec);
                QVERIFY(QDir().mkpath(QString::fromStdString(repo + "/refs")));
                QFile ref(QString::fromStdString(repo + "/refs/" + step));
                QVERIFY(ref.open(QIODevice::WriteOnly));
                ref.write(commit.c_str());
            }
            qputenv("HF_HUB_CACHE", dir.filePath(QStringLiteral("hub")).toUtf8());
        }
        const auto restoreCache = qScopeGuard([&] { qputenv("HF_HUB_CACHE", cache); });
        if (view == QLatin1String("ablation")) {
            // The ablation view measures what knocking heads out changes, so it needs one knocked out.
            AttentionSettings s = doc.settings();
            s.ablated = {{0, 1}};
            doc.setSettings(s);
        }
        for (const QString& format : {QStringLiteral("png"), QStringLiteral("svg"), QStringLiteral("pdf")}) {
            const QString path = dir.filePath(view + QLatin1Char('.') + format);
            const Status s = render(doc, view, path);
            QVERIFY2(s.ok(), s.error().c_str());
            const QByteArray bytes = readFile(path);
            if (format == QLatin1String("png")) {
                QCOMPARE(QImage::fromData(bytes, "PNG").size(), QSize(900, 640));
            } else if (format == QLatin1String("svg")) {
                QVERIFY(QSvgRenderer(bytes).isValid());
                const QHash<QString, int> elements = svgElements(bytes);
                QVERIFY2(!elements.contains(QStringLiteral("#error")), "the SVG is not well-formed XML");
                // Vectors, not a picture of the widget: not one embedded bitmap in any view.
                QVERIFY2(elements.value(QStringLiteral("image")) == 0,
                         qPrintable(QStringLiteral("%1 embedded image(s)").arg(elements.value(QStringLiteral("image")))));
            } else {
                QVERIFY(bytes.startsWith("%PDF-"));
                QVERIFY(bytes.trimmed().endsWith("%%EOF"));
                QVERIFY2(!bytes.contains("/Subtype /Image") && !bytes.contains("/Subtype/Image"), "the PDF embeds a bitmap");
            }
        }
    }

    void anSvgHeatmapIsOneRectanglePerCell()
    {
        QTemporaryDir dir;
        Document doc;
        doc.setText(kSentence);
        doc.waitForIdle();
        const int T = int(doc.snapshot()->tokens.ids.size());
        const QString path = dir.filePath(QStringLiteral("h.svg"));
        QVERIFY(render(doc, QStringLiteral("heatmap"), path).ok());
        const QByteArray svg = readFile(path);
        const QHash<QString, int> elements = svgElements(svg);
        QCOMPARE(elements.value(QStringLiteral("image")), 0);
        // Every cell, masked ones in their own grey, is one <rect>; the rest of the plot adds a few more.
        QVERIFY2(elements.value(QStringLiteral("rect")) >= T * T,
                 qPrintable(QStringLiteral("%1 rects for %2 cells").arg(elements.value(QStringLiteral("rect"))).arg(T * T)));
        // The masked grey and the viridis ends are fills of those rects.
        QVERIFY(svg.contains("#bdbdbd"));
        QVERIFY(svg.contains("#fde725") || svg.contains("#fde724"));
    }

    void aPngFollowsTheDpi()
    {
        QTemporaryDir dir;
        Document doc;
        doc.setText(kSentence);
        const QString path = dir.filePath(QStringLiteral("h300.png"));
        QVERIFY(render(doc, QStringLiteral("heatmap"), path, 400, 300, 300).ok());
        const QImage image(path);
        QCOMPARE(image.size(), QSize(1250, 938));  // 400 × 300 at 300/96, rounded
        QCOMPARE(image.dotsPerMeterX(), int(std::lround(300 / 0.0254)));
        RenderOptions bad;
        bad.outPath = dir.filePath(QStringLiteral("x.png"));
        bad.dpi = 5000;
        const Status s = renderView(QStringLiteral("heatmap"), doc, bad);
        QVERIFY(!s.ok() && !checkRenderRequest(QStringLiteral("heatmap"), bad).ok());
    }

    // The top-left cell (query 0, key 0) holds weight 1 under the causal mask: the ramp's top colour.
    void theColourMapReachesTheScreenAndTheFiles_data()
    {
        QTest::addColumn<QString>("name");
        for (const QString& name : ColorMap::names()) QTest::newRow(qPrintable(name)) << name;
    }
    void theColourMapReachesTheScreenAndTheFiles()
    {
        QFETCH(QString, name);
        const ColorMap::Kind kind = *ColorMap::fromName(name);
        MainWindow window;
        window.resize(1200, 800);
        window.show();
        window.sentenceEdit()->setText(kSentence);
        window.actions()->setColorMap(name);
        QCOMPARE(ColorMap::current(), kind);
        HeatmapView* heatmap = window.heatmap();
        heatmap->replot(QCustomPlot::rpImmediateRefresh);
        const QPoint cell(int(heatmap->xAxis->coordToPixel(0)), int(heatmap->yAxis->coordToPixel(0)));
        const QRgb top = ColorMap::gradient(kind).color(1.0, QCPRange(0, 1));
        const QImage screen = heatmap->grab().toImage();
        QCOMPARE(QColor(screen.pixel(cell)).name(), QColor(top).name());
        QTemporaryDir dir;
        const QString png = dir.filePath(QStringLiteral("plot.png"));
        const Status exported = exportWidget(heatmap, png, heatmap->size(), 96);
        QVERIFY2(exported.ok(), exported.error().c_str());
        QCOMPARE(QColor(QImage(png).pixel(cell)).name(), QColor(top).name());
        // A masked cell (query 0, key 1) is the masked colour of this map, never a ramp colour.
        const QPoint masked(int(heatmap->xAxis->coordToPixel(1)), int(heatmap->yAxis->coordToPixel(0)));
        QCOMPARE(QColor(QImage(png).pixel(masked)).name(), ColorMap::maskedColor(kind).name());
    }

    void theWindowsViewExportIsTheRenderersPicture()
    {
        MainWindow window;
        window.show();
        window.sentenceEdit()->setText(kSentence);
        window.tabs()->setCurrentIndex(1);  // Scaling lab, on its first view
        QCOMPARE(currentViewName(*window.document()), QStringLiteral("saturation"));
        QTemporaryDir dir;
        ExportDialog dialog(&window, window.document(), QStringLiteral("compare"));
        QCOMPARE(dialog.view(), QStringLiteral("compare"));
        dialog.setPath(dir.filePath(QStringLiteral("compare.svg")));
        const Status exported = dialog.exportNow();
        QVERIFY2(exported.ok(), exported.error().c_str());
        const QByteArray svg = readFile(dir.filePath(QStringLiteral("compare.svg")));
        QCOMPARE(svgElements(svg).value(QStringLiteral("image")), 0);
        QVERIFY(svg.contains("Compare") || svg.contains("B − A") || svgElements(svg).value(QStringLiteral("text")) > 0);
        dialog.setPath(dir.filePath(QStringLiteral("compare.bmp")));
        QVERIFY(!dialog.exportNow().ok());
    }

    // The Cost view's export draws the timings the window shows (timing again would block for a second and
    // could draw other numbers); a window that has not timed yet lets the picture's view time in the background.
    void theCostExportDrawsTheWindowsTimings()
    {
        MainWindow window;
        window.sentenceEdit()->setText(kSentence);
        CostView* cost = window.findChild<CostView*>();
        QVERIFY(cost);
        QVERIFY(liveRenderOptions(&window, QStringLiteral("cost")).costPoints.empty());
        cost->showPoints(windowCostPoints());
        QCOMPARE(int(liveRenderOptions(&window, QStringLiteral("cost")).costPoints.size()), 2);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("cost.svg"));
        const Status exported = exportView(*window.document(), &window, QStringLiteral("cost"), path, QSize(900, 500), 96);
        QVERIFY2(exported.ok(), exported.error().c_str());
        const QByteArray svg = readFile(path);
        QVERIFY2(svg.contains("At 16 tokens one head takes 1234.50 ms"), "the picture does not show the window's timings");

        RenderOptions fresh;
        fresh.outPath = dir.filePath(QStringLiteral("measured.svg"));
        fresh.width = 900;
        fresh.height = 500;
        QVERIFY(renderView(QStringLiteral("cost"), *window.document(), fresh).ok());
        QVERIFY2(readFile(fresh.outPath).contains("At 2048 tokens one head takes"), "the picture's view did not time up to 2,048 tokens");
    }

    void aClickedPlotExportsAndCopiesOnItsOwn()
    {
        MainWindow window;
        window.resize(1200, 800);
        window.show();
        window.sentenceEdit()->setText(kSentence);
        QWidget* plot = PlotMenu::plotAt(window.heatmap());
        QCOMPARE(plot, static_cast<QWidget*>(window.heatmap()));
        QMenu* menu = window.actions()->plotMenu()->menuFor(plot);
        QStringList entries;
        for (QAction* a : menu->actions()) entries << a->text();
        QVERIFY2(entries.contains(QStringLiteral("Export This Plot…")) && entries.contains(QStringLiteral("&Export View…")) &&
                     entries.contains(QStringLiteral("Export &Data…")),
                 qPrintable(entries.join(QLatin1Char('|'))));
        delete menu;

        QTemporaryDir dir;
        ExportDialog dialog(&window, window.document(), QString(), plot);
        QCOMPARE(dialog.view(), QString());
        dialog.setPath(dir.filePath(QStringLiteral("plot.pdf")));
        QVERIFY(dialog.exportNow().ok());
        QVERIFY(readFile(dir.filePath(QStringLiteral("plot.pdf"))).startsWith("%PDF"));

        const Status copied = copyWidgetToClipboard(plot);
        QVERIFY2(copied.ok(), copied.error().c_str());
        const QMimeData* data = QGuiApplication::clipboard()->mimeData();
        QVERIFY(data && data->hasImage());
        QVERIFY(data->data(QStringLiteral("image/svg+xml")).contains("<svg"));
        QVERIFY(copyViewToClipboard(*window.document(), &window, QStringLiteral("grid")).ok());
        QCOMPARE(qvariant_cast<QImage>(QGuiApplication::clipboard()->mimeData()->imageData()).width(), 2 * liveViewSize(&window, "grid").width());
    }

    void theDataDialogWritesWhatTheCoreWrites_data()
    {
        QTest::addColumn<int>("what");
        QTest::addColumn<int>("format");
        QTest::addColumn<bool>("focused");
        QTest::newRow("attention npy, every head") << int(DataKind::Attention) << int(DataFormat::Npy) << false;
        QTest::newRow("attention csv, focused head") << int(DataKind::Attention) << int(DataFormat::Csv) << true;
        QTest::newRow("scores json, focused head") << int(DataKind::Scores) << int(DataFormat::Json) << true;
        QTest::newRow("stats npz") << int(DataKind::Stats) << int(DataFormat::Npy) << false;
        QTest::newRow("trace json") << int(DataKind::Trace) << int(DataFormat::Json) << true;
        QTest::newRow("weights csv") << int(DataKind::Weights) << int(DataFormat::Csv) << false;
    }
    void theDataDialogWritesWhatTheCoreWrites()
    {
        QFETCH(int, what);
        QFETCH(int, format);
        QFETCH(bool, focused);
        MainWindow window;
        window.sentenceEdit()->setText(kSentence);
        window.document()->setFocus({1, 2});
        window.document()->setTemperature(0.7);
        QTemporaryDir dir;
        DataExportDialog dialog(&window, window.document());
        dialog.setPath(dir.filePath(QStringLiteral("numbers")));
        dialog.setRequest(DataKind(what), DataFormat(format), focused);
        const DataExportRequest request = dialog.request();
        QVERIFY(dialog.path().endsWith(QString::fromStdString(suggestedSuffix(request.what, request.format))));
        QCOMPARE(request.head.has_value(), focused);
        if (focused) QVERIFY(*request.head == (HeadSelection{1, 2}));
        const Status exported = dialog.exportNow();
        QVERIFY2(exported.ok(), exported.error().c_str());
        const Document& doc = *window.document();
        const Result<std::string> expected = exportData(*doc.model(), doc.snapshot()->tokens, doc.settings(), request);
        QVERIFY(expected.hasValue());
        QCOMPARE(readFile(dialog.path()), QByteArray::fromStdString(*expected));
    }

    // For an encoder–decoder the dialog offers its cross-attention: the model's own answer against the sentence.
    // Each exported row is the row generation chose the next token from (an independent path: step by step,
    // not teacher-forced); a decoder-only model has no such item.
    void theDataDialogExportsAnEncoderDecodersCrossAttention()
    {
        MainWindow window;
        {
            DataExportDialog dialog(&window, window.document());
            dialog.setRequest(DataKind::CrossAttention, DataFormat::Json, true);
            QVERIFY(dialog.request().what != DataKind::CrossAttention);
        }
        Result<ModelPtr> model = loadModel("builtin-translator");
        QVERIFY(model.hasValue());
        window.document()->setModel(*model, QStringLiteral("builtin-translator"));
        const std::string sentence = "the girl saw the red birds near the river .";
        window.sentenceEdit()->setText(QString::fromStdString(sentence));
        window.document()->setFocus({1, 2});
        QTemporaryDir dir;
        DataExportDialog dialog(&window, window.document());
        dialog.setPath(dir.filePath(QStringLiteral("cross")));
        dialog.setRequest(DataKind::CrossAttention, DataFormat::Json, true);
        QVERIFY(dialog.request().what == DataKind::CrossAttention);
        const Status exported = dialog.exportNow();
        QVERIFY2(exported.ok(), exported.error().c_str());
        const QJsonObject json = QJsonDocument::fromJson(readFile(dialog.path())).object();
        AttentionSettings causal = window.document()->settings();
        causal.mask = MaskKind::Causal;
        const Model& m = **model;
        Result<TokenGeneration> written = generateTokens(m, m.tokenizer->encode(sentence)->ids, 40, causal);
        QVERIFY(written.hasValue() && written->stoppedAtEnd);
        const QJsonArray rows = json.value(QStringLiteral("data")).toArray();
        QCOMPARE(std::size_t(rows.size()), written->steps.size());  // the start token and every word but the end token
        QCOMPARE(json.value(QStringLiteral("source_tokens")).toArray().size(), int(written->source.size()));
        numericcheck::Worst worst;
        for (int i = 0; i < rows.size(); ++i) {
            const Eigen::RowVectorXf& row = written->steps[std::size_t(i)].attention[std::size_t(1 * m.config.heads + 2)];
            const QJsonArray got = rows[i].toArray();
            QCOMPARE(got.size(), int(row.size()));
            worst.label("exported row %d, key", i);
            for (int k = 0; k < got.size(); ++k) worst.add(got[k].toDouble(), double(row[k]), k);
        }
        QVERIFY2(worst.within(1e-5), worst.message().c_str());

        // With the Words switch on the same export is between words: the sentence's words across, the answer's
        // (what its ids read as, the start token alone) down, each cell the rule worked here from the rows above.
        window.document()->setWordLevel(true);
        const Status wordsExported = dialog.exportNow();
        QVERIFY2(wordsExported.ok(), wordsExported.error().c_str());
        const QJsonObject words = QJsonDocument::fromJson(readFile(dialog.path())).object();
        QCOMPARE(words.value(QStringLiteral("level")).toString(), QStringLiteral("words"));
        QCOMPARE(words.value(QStringLiteral("source_words")).toArray().size(), 11);  // <bos> and the ten words
        const QJsonArray targetOf = words.value(QStringLiteral("word_of_token")).toArray();
        const QJsonArray sourceOf = words.value(QStringLiteral("source_word_of_token")).toArray();
        QCOMPARE(targetOf.size(), rows.size());
        QCOMPARE(targetOf[0].toInt(), 0);  // the decoder's start token is a word of its own
        const QJsonArray wordRows = words.value(QStringLiteral("data")).toArray();
        numericcheck::Worst byRule;
        for (int i = 0; i < wordRows.size(); ++i)
            for (int j = 0; j < wordRows[i].toArray().size(); ++j) {
                double sum = 0.0;
                int queries = 0;
                for (int q = 0; q < rows.size(); ++q) {
                    if (targetOf[q].toInt() != i) continue;
                    ++queries;
                    for (int k = 0; k < sourceOf.size(); ++k)
                        if (sourceOf[k].toInt() == j) sum += rows[q].toArray()[k].toDouble();
                }
                byRule.add(wordRows[i].toArray()[j].toDouble(), sum / queries, i, j);
            }
        QVERIFY2(byRule.within(1e-5), byRule.message("word cross-attention").c_str());
    }
};

QTEST_MAIN(TestExport)
#include "tst_export.moc"
