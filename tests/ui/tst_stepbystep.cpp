// The step-by-step views: each renders headless at the requested size, and the numbers they draw are the
// core's. Set ATTNSCOPE_KEEP_RENDERS=DIR to keep the rendered images for a look.
#include <QImage>
#include <QSignalSpy>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QtTest>
#include <QPushButton>

#include <cmath>
#include <qcustomplot.h>

#include "ui/steps/blockview.h"
#include "core/analysis/cellexplain.h"
#include "ui/steps/cellview.h"
#include "ui/steps/costview.h"
#include "core/analysis/crossattention.h"
#include "ui/steps/crossattentionview.h"
#include "ui/steps/headsview.h"
#include "ui/common/matrixplot.h"
#include "ui/common/plottitles.h"
#include "ui/steps/pipelineview.h"
#include "ui/steps/positionalview.h"
#include "ui/steps/stepbystep.h"
#include "ui/steps/stepsviews.h"
#include "core/model/generate.h"
#include "ui/export/renderer.h"
#include "numericcheck.h"
#include "randomdefault.h"
#include "waits.h"
#include "core/open/openmodel.h"

using namespace attnscope;

namespace {

RenderOptions sized(const QString& path, QSize size)
{
    RenderOptions options;
    options.outPath = path;
    options.width = size.width();
    options.height = size.height();
    return options;
}

// What a plot draws against the core's matrix; a masked score is -inf on both sides.
numericcheck::Worst maxDiff(const Matrix& a, const Matrix& b)
{
    numericcheck::Worst w;
    w.matchInfinities();
    w.add(a, b);
    return w;
}

QVector<double> values(QCPBars* bars)
{
    QVector<double> v;
    for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it) v << it->value;
    return v;
}

const QString kText = QStringLiteral("the cat sat on the mat");

// The built-in translator on the lessons' sentence; null when it does not load.
ModelPtr openTranslator(Document& doc)
{
    Result<ModelPtr> model = loadModel("builtin-translator");
    if (!model) return nullptr;
    doc.setModel(*model, QStringLiteral("builtin-translator"));
    doc.setText(QStringLiteral("the girl saw the red birds near the river ."));
    return *model;
}

} // namespace

class TestStepByStep : public QObject {
    Q_OBJECT
private slots:
    void rendersEveryView_data();
    void rendersEveryView();
    void rendersSvgAndPdf();
    void rejectsBadInput();
    void cellViewShowsCoreNumbers_data();
    void cellViewShowsCoreNumbers();
    void pipelineClickSelectsCell();
    void matrixLabelsNeverOverlap();
    void matrixOfOneRowOrColumnIsDrawn();
    void labelsTurnedOnAreTakenBeforeDrawing();
    void headsViewSlicesAreHeadOutputs();
    void headsViewFitsItsWidth_data();
    void headsViewFitsItsWidth();
    void blockViewNorms();
    void blockViewShowsTheDecodersThreeSublayers();
    void positionalDemo();
    void crossViewMatchesCore();
    void crossViewBetweenWords();
    void sharpestAlignmentHeadIsOneClick();
    void costViewMeasuresInBackground();
    void containerHasEveryTab();
};

void TestStepByStep::rendersEveryView_data()
{
    QTest::addColumn<QString>("view");
    QTest::addColumn<QSize>("size");
    for (const ViewEntry& v : stepsViews()) QTest::newRow(qPrintable(v.name + ", 1600x1000")) << v.name << QSize(1600, 1000);
    QTest::newRow("pipeline, small 640x400") << "pipeline" << QSize(640, 400);
}

void TestStepByStep::rendersEveryView()
{
    QFETCH(QString, view);
    QFETCH(QSize, size);
    Document doc;
    attnscope::testing::useRandomModel(doc);
    doc.setText(kText);
    QTemporaryDir dir;
    const QByteArray keep = qgetenv("ATTNSCOPE_KEEP_RENDERS");
    const QString path = (keep.isEmpty() ? dir.path() : QString::fromLocal8Bit(keep)) + "/" + view + QStringLiteral("-%1x%2.png").arg(size.width()).arg(size.height());
    RenderOptions opts;
    opts.outPath = path;
    opts.width = size.width();
    opts.height = size.height();
    if (view == "cost") opts.layer = 0;  // any option; cost ignores the cell
    const Status drawn = renderView(view, doc, opts);
    QVERIFY2(drawn.ok(), drawn.error().c_str());
    QImage image(path);
    QCOMPARE(image.size(), size);
    // Not blank: more than a handful of colours.
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); y += 7)
        for (int x = 0; x < image.width(); x += 7) colours.insert(image.pixel(x, y));
    QVERIFY2(colours.size() > 20, qPrintable(QString("only %1 colours").arg(colours.size())));
}

void TestStepByStep::rendersSvgAndPdf()
{
    Document doc;
    attnscope::testing::useRandomModel(doc);
    doc.setText(kText);
    QTemporaryDir dir;
    const Status cell = renderView("cell", doc, sized(dir.path() + "/cell.svg", QSize(800, 500)));
    QVERIFY2(cell.ok(), cell.error().c_str());
    QSvgRenderer svg(dir.path() + "/cell.svg");
    QVERIFY(svg.isValid());
    QCOMPARE(svg.viewBox().size(), QSize(800, 500));
    const Status heads = renderView("heads", doc, sized(dir.path() + "/heads.pdf", QSize(800, 500)));
    QVERIFY2(heads.ok(), heads.error().c_str());
    QFile pdf(dir.path() + "/heads.pdf");
    QVERIFY(pdf.open(QIODevice::ReadOnly));
    QVERIFY(pdf.read(5) == "%PDF-");
}

void TestStepByStep::rejectsBadInput()
{
    Document doc;
    attnscope::testing::useRandomModel(doc);
    doc.setText(kText);
    QTemporaryDir dir;
    const RenderOptions png = sized(dir.path() + "/x.png", QSize(100, 100));
    const Status unknown = renderView("nonsense", doc, png);
    QVERIFY(!unknown.ok());
    QVERIFY(QString::fromStdString(unknown.error()).contains("nonsense"));
    RenderOptions far = png;
    far.query = 6;
    QVERIFY(!renderView("cell", doc, far).ok());
    RenderOptions head = png;
    head.head = 4;
    QVERIFY(!renderView("pipeline", doc, head).ok());
    QVERIFY(!renderView("cell", doc, sized(dir.path() + "/x.bmp", QSize(100, 100))).ok());
}

void TestStepByStep::cellViewShowsCoreNumbers_data()
{
    QTest::addColumn<int>("query");
    QTest::addColumn<int>("key");
    QTest::newRow("default cell") << -1 << -1;
    QTest::newRow("visible cell (4, 1)") << 4 << 1;
    QTest::newRow("masked cell (1, 3)") << 1 << 3;
}

void TestStepByStep::cellViewShowsCoreNumbers()
{
    QFETCH(int, query);
    QFETCH(int, key);
    Document doc;
    attnscope::testing::useRandomModel(doc);
    doc.setText(kText);
    doc.setFocus({1, 2});
    CellView view(&doc);
    view.setCell(query, key);
    const ForwardTrace& trace = doc.snapshot()->trace;
    if (query < 0) std::tie(query, key) = defaultCell(trace);
    QCOMPARE(view.query(), query);
    QCOMPARE(view.key(), key);
    const CellExplanation core = *explainCell(trace, query, key);

    const numericcheck::Worst dq = numericcheck::difference(values(view.queryBars()), core.queryRow),
                              dk = numericcheck::difference(values(view.keyBars()), core.keyRow),
                              dp = numericcheck::difference(values(view.productBars()), core.products),
                              dw = numericcheck::difference(values(view.weightBars()), core.rowWeights);
    QVERIFY2(dq.within(1e-6), dq.message("query row").c_str());
    QVERIFY2(dk.within(1e-6), dk.message("key row").c_str());
    QVERIFY2(dp.within(1e-6), dp.message("products").c_str());
    QVERIFY2(dw.within(1e-6), dw.message("row weights").c_str());
    // The printed sum is the core's sum of products, and it equals the raw score the trace holds.
    const QString text = view.summaryText();
    QVERIFY2(text.contains(QString::number(core.sumOfProducts, 'f', 4)), qPrintable(text));
    QVERIFY2(text.contains(QString::number(trace.detail.scores(query, key), 'f', 4)), qPrintable(text));
    QCOMPARE(text.contains("−∞"), core.masked);
    QCOMPARE(core.masked, key > query);
}

void TestStepByStep::pipelineClickSelectsCell()
{
    Document doc;
    attnscope::testing::useRandomModel(doc);
    doc.setText(kText);
    PipelineView view(&doc);
    view.resize(1200, 800);
    const HeadDetail& d = doc.snapshot()->trace.detail;
    const QPair<const char*, const Matrix*> steps[] = {{"x", &d.x}, {"q", &d.q}, {"k", &d.k}, {"v", &d.v},
                                                       {"scores", &d.scores}, {"scaled", &d.scaled}, {"masked", &d.masked},
                                                       {"weights", &d.weights}, {"head_output", &d.headOutput}};
    for (const auto& [name, m] : steps) {
        const numericcheck::Worst diff = maxDiff(view.plot(name)->shown(), *m);
        QVERIFY2(diff.within(1e-6), diff.message(name).c_str());
    }
    QSignalSpy spy(view.plot("weights"), &MatrixPlot::cellClicked);
    emit view.plot("weights")->cellClicked(3, 2);
    QCOMPARE(view.cellView()->query(), 3);
    QCOMPARE(view.cellView()->key(), 2);
    // A new sentence keeps the chosen cell while it exists.
    doc.setText(QStringLiteral("a b c d e f g"));
    QCOMPARE(view.cellView()->query(), 3);
    QCOMPARE(view.cellView()->explanation().rawScore, doc.snapshot()->trace.detail.scores(3, 2));
}

// Token labels on a matrix: all of them when there is room, every k-th when there is not, and never two
// closer than the font's height (rows) or its height across the 60-degree lean (columns).
// QCustomPlot sizes a cell by the distance between the first and last cells, which one row (or column) lacks:
// such a matrix must still fill its axis rect with its colours, and read back as itself.
void TestStepByStep::matrixOfOneRowOrColumnIsDrawn()
{
    for (const QSize shape : {QSize(3, 1), QSize(1, 3), QSize(1, 1)}) {
        Matrix m(shape.height(), shape.width());
        for (int i = 0; i < m.rows(); ++i)
            for (int j = 0; j < m.cols(); ++j) m(i, j) = 0.2f + 0.3f * float(i + j);
        MatrixPlot plot;
        plot.resize(400, 300);
        plot.setViewport(plot.rect());
        plot.setMatrix(m, MatrixPlot::Scale::Probability);
        plot.replot();
        QCOMPARE(plot.shown(), m);
        const QImage image = plot.toPixmap(400, 300).toImage();
        const QRect cells = plot.axisRect()->rect();
        const QColor background = image.pixelColor(2, 2);
        int coloured = 0, seen = 0;
        for (int y = cells.top() + 3; y < cells.bottom() - 3; y += 7)
            for (int x = cells.left() + 3; x < cells.right() - 3; x += 7, ++seen) coloured += image.pixelColor(x, y) != background;
        QVERIFY2(coloured > seen * 9 / 10, qPrintable(QStringLiteral("%1x%2: %3 of %4 points coloured").arg(shape.width()).arg(shape.height()).arg(coloured).arg(seen)));
    }
}

void TestStepByStep::matrixLabelsNeverOverlap()
{
    QStringList tokens;
    for (int i = 0; i < 40; ++i) tokens << QStringLiteral("w%1").arg(i);
    const Matrix m = Matrix::Zero(40, 40);
    MatrixPlot plot;
    const auto labelled = [](QCPAxis* axis) {
        QVector<double> at;
        const auto ticker = axis->ticker().dynamicCast<QCPAxisTickerText>();
        if (ticker)
            for (auto it = ticker->ticks().constBegin(); it != ticker->ticks().constEnd(); ++it) at << it.key();
        return at;
    };
    const auto closest = [](const QVector<double>& at) {
        double gap = INFINITY;
        for (int i = 1; i < at.size(); ++i) gap = std::min(gap, at[i] - at[i - 1]);
        return gap;
    };
    for (const QSize size : {QSize(1400, 1400), QSize(260, 220)}) {
        plot.resize(size);
        plot.setViewport(plot.rect());  // a widget never shown gets no resize event
        plot.setMatrix(m, MatrixPlot::Scale::Symmetric, tokens, tokens);
        plot.replot();
        const QVector<double> rows = labelled(plot.yAxis), cols = labelled(plot.xAxis);
        QVERIFY(!rows.isEmpty() && !cols.isEmpty());
        QCOMPARE(rows.first(), 0.0);
        const double fontHeight = QFontMetricsF(plot.yAxis->tickLabelFont()).height();
        const double rowPixels = plot.axisRect()->height() / 40.0, colPixels = plot.axisRect()->width() / 40.0;
        if (rows.size() > 1) QVERIFY2(closest(rows) * rowPixels >= fontHeight, qPrintable(QString::number(closest(rows) * rowPixels)));
        if (cols.size() > 1) QVERIFY(closest(cols) * colPixels * std::sin(M_PI / 3) >= fontHeight);
        if (size.width() == 1400) {
            QCOMPARE(rows.size(), 40);  // room for every token
            QCOMPARE(cols.size(), 40);
        } else {
            QVERIFY(rows.size() < 40 && cols.size() < 40);
        }
        QVERIFY(plot.yAxis->tickLabels() && plot.xAxis->tickLabels());
    }
    // A thumbnail too small for any label (less than nine lines of the label font each way) draws none.
    const int fontHeight = static_cast<int>(QFontMetricsF(plot.yAxis->tickLabelFont()).height());
    plot.resize(40 * fontHeight, 6 * fontHeight);
    plot.setViewport(plot.rect());
    plot.replot();
    QVERIFY(!plot.yAxis->tickLabels() && !plot.xAxis->tickLabels());
}

// A thumbnail grown large turns its labels on during a layout. The axes must then hold one label per tick
// before they are drawn: QCPAxis::draw reads a label for every tick without checking, and a list taken
// while labels were off (empty) made it read past the end, which crashed the window on a tab switch.
void TestStepByStep::labelsTurnedOnAreTakenBeforeDrawing()
{
    QStringList tokens;
    for (int i = 0; i < 12; ++i) tokens << QStringLiteral("w%1").arg(i);
    MatrixPlot plot;
    QStringList mismatched;
    // Connected after the plot's own handler, so it sees the axes as they will be drawn.
    connect(&plot, &QCustomPlot::afterLayout, &plot, [&] {
        for (QCPAxis* axis : {plot.xAxis, plot.yAxis})
            if (axis->tickLabels() && axis->tickVectorLabels().size() != axis->tickVector().size())
                mismatched << QStringLiteral("%1 ticks, %2 labels").arg(axis->tickVector().size()).arg(axis->tickVectorLabels().size());
    });
    const int fontHeight = static_cast<int>(QFontMetricsF(plot.yAxis->tickLabelFont()).height());
    plot.setMatrix(Matrix::Zero(12, 12), MatrixPlot::Scale::Symmetric, tokens, tokens);
    for (const QSize size : {QSize(4 * fontHeight, 4 * fontHeight), QSize(40 * fontHeight, 40 * fontHeight), QSize(4 * fontHeight, 4 * fontHeight),
                             QSize(40 * fontHeight, 40 * fontHeight)}) {
        plot.resize(size);
        plot.setViewport(plot.rect());
        plot.replot(QCustomPlot::rpImmediateRefresh);
    }
    QVERIFY(plot.yAxis->tickLabels());
    QVERIFY2(mismatched.isEmpty(), qPrintable(mismatched.join(QStringLiteral("; "))));
}

void TestStepByStep::headsViewSlicesAreHeadOutputs()
{
    Document doc;
    attnscope::testing::useRandomModel(doc);
    doc.setText(kText);
    doc.setFocus({1, 0});
    HeadsView view(&doc);
    const int H = doc.model()->config.heads;
    QCOMPARE(view.headCount(), H);
    const Matrix concat = view.concatPlot()->shown();
    const int Dh = doc.model()->config.dHead;
    for (int h = 0; h < H; ++h) {
        // Each head's own forward pass, focused on it, is the oracle for its panel and its slice.
        CaptureRequest capture;
        capture.detail = HeadSelection{1, h};
        const ForwardTrace t = *forward(*doc.model(), doc.snapshot()->tokens.ids, doc.settings(), capture);
        const numericcheck::Worst panel = maxDiff(view.headPlot(h)->shown(), t.detail.headOutput);
        const numericcheck::Worst slice = maxDiff(concat.middleCols(h * Dh, Dh), t.detail.headOutput);
        QVERIFY2(panel.within(1e-6), panel.message(qPrintable(QString("head %1 panel").arg(h))).c_str());
        QVERIFY2(slice.within(1e-6), slice.message(qPrintable(QString("head %1 concat slice").arg(h))).c_str());
    }
    const numericcheck::Worst out = maxDiff(view.outputPlot()->shown(), doc.snapshot()->trace.detail.attnOutput);
    QVERIFY2(out.within(1e-6), out.message("attention output").c_str());
    view.setHighlightedHead(2);
    QCOMPARE(view.highlightedHead(), 2);
}

void TestStepByStep::headsViewFitsItsWidth_data()
{
    QTest::addColumn<QString>("model");
    QTest::addColumn<int>("perRow");
    QTest::newRow("4 heads") << "random:layers=1,heads=4,d_model=64,seed=1" << 4;
    QTest::newRow("GPT-2's 12") << "random:layers=1,heads=12,d_model=192,seed=1" << 12;
    QTest::newRow("Llama's 32") << "random:layers=1,heads=32,d_model=256,seed=1" << 11;
}

// In the window the view sits in a scroll area: every head's title on one line once pushed GPT-2's 12 heads
// and the output plot past the right edge of a 1,600-pixel window. At 1,000 pixels every plot is inside
// the view, the heads laid in rows of equal width.
void TestStepByStep::headsViewFitsItsWidth()
{
    QFETCH(QString, model);
    QFETCH(int, perRow);
    Document doc;
    doc.setModel(*loadModel(model.toStdString()));
    doc.setText(QStringLiteral("the cat sat on the mat and looked at the dog"));
    HeadsView view(&doc);
    fitPlotTitles(&view);  // as the window does
    view.resize(1000, 760);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    const int H = doc.model()->config.heads;
    QCOMPARE(HeadsView::headsPerRow(H), perRow);
    QVERIFY2(view.minimumSizeHint().width() <= view.width(), qPrintable(QString::number(view.minimumSizeHint().width())));
    const QRect inside = view.rect();
    QList<MatrixPlot*> plots{view.concatPlot(), view.woPlot(), view.outputPlot()};
    for (int h = 0; h < H; ++h) {
        const QRect r(view.headPlot(h)->mapTo(&view, QPoint(0, 0)), view.headPlot(h)->size());
        const QRect first(view.headPlot(0)->mapTo(&view, QPoint(0, 0)), view.headPlot(0)->size());
        QVERIFY2(std::abs(r.width() - first.width()) <= 1, qPrintable(QStringLiteral("head %1: %2 px, head 0: %3 px").arg(h).arg(r.width()).arg(first.width())));
        QCOMPARE(r.top() > first.top(), h >= perRow);  // the row below starts with head perRow
        QVERIFY(view.headPlot(h)->title().startsWith(QStringLiteral("head %1").arg(h)));
        plots << view.headPlot(h);
    }
    for (MatrixPlot* p : plots) {
        const QRect r(p->mapTo(&view, QPoint(0, 0)), p->size());
        QVERIFY2(inside.contains(r), qPrintable(p->title()));
    }
}

void TestStepByStep::blockViewNorms()
{
    Document doc;
    attnscope::testing::useRandomModel(doc);
    doc.setText(kText);
    BlockView view(&doc);
    const HeadDetail& d = doc.snapshot()->trace.detail;
    const Matrix* norms[] = {&d.residualIn, &d.attnOutput, &d.residualMid, &d.ffOutput, &d.residualOut};
    QCOMPARE(view.normsPlot()->graphCount(), 5);
    for (int g = 0; g < 5; ++g) {
        const Eigen::VectorXf expected = norms[g]->rowwise().norm();
        numericcheck::Worst w;
        w.label("norm graph %d, token", g);
        int t = 0;
        for (auto it = view.normsPlot()->graph(g)->data()->constBegin(); it != view.normsPlot()->graph(g)->data()->constEnd(); ++it, ++t)
            w.add(it->value, expected(t), t);
        QCOMPARE(t, 6);
        QVERIFY2(w.within(1e-5), w.message().c_str());
    }
    QCOMPARE(view.plot("ff_hidden")->shown().cols(), Eigen::Index(doc.model()->config.dFF));
}

// An encoder–decoder's Block view switches to the decoder's block: the core's pass over the model's own answer
// at the focused layer, each of the three sublayers' contributions drawn and its row norms plotted.
void TestStepByStep::blockViewShowsTheDecodersThreeSublayers()
{
    Document doc;
    const ModelPtr model = openTranslator(doc);
    QVERIFY(model);
    doc.setFocus({1, 3});
    BlockView view(&doc);
    QVERIFY(!view.showsDecoder());
    view.showDecoder(true);
    view.waitForDecoder();
    QVERIFY(view.showsDecoder());
    QVERIFY(view.decoderTrace().has_value());
    const Model& m = *model;
    AttentionSettings causal = doc.settings();
    causal.mask = MaskKind::Causal;
    const std::vector<int> source = doc.snapshot()->tokens.ids;
    const TokenizedText target = *greedyTarget(m, source, CrossAttentionView::kMaxAnswerTokens, causal);
    EncoderDecoderTrace trace;
    QVERIFY(forwardEncoderDecoder(m, source, target.ids, causal, false, trace, HeadSelection{1, 3}).ok());
    const EncoderDecoderTrace::DecoderBlock& b = trace.block;
    const std::pair<const char*, const Matrix*> shown[] = {{"dec_self_output", &b.selfOutput}, {"dec_cross_output", &b.crossOutput},
                                                           {"dec_ff_hidden", &b.ffHidden}, {"dec_residual_out", &b.residualOut}};
    for (const auto& [name, expected] : shown) {
        const Matrix& drawn = view.plot(QString::fromLatin1(name))->shown();
        QCOMPARE(drawn.rows(), Eigen::Index(target.ids.size()));
        const numericcheck::Worst diff = maxDiff(drawn, *expected);
        QVERIFY2(diff.within(1e-6), diff.message(name).c_str());
    }
    // Seven lines: the stream in, the three contributions, the stream after each.
    QCOMPARE(view.normsPlot()->graphCount(), 7);
    const Eigen::VectorXf crossNorms = b.crossOutput.rowwise().norm();
    int t = 0;
    numericcheck::Worst w;
    w.label("cross-attention's norm, token");
    for (auto it = view.normsPlot()->graph(3)->data()->constBegin(); it != view.normsPlot()->graph(3)->data()->constEnd(); ++it, ++t)
        w.add(it->value, crossNorms(t), t);
    QCOMPARE(t, int(target.ids.size()));
    QVERIFY2(w.within(1e-5), w.message().c_str());
    // A decoder-only model has one kind of block.
    attnscope::testing::useRandomModel(doc);
    QVERIFY(!view.showsDecoder());
}

void TestStepByStep::positionalDemo()
{
    Document doc;
    attnscope::testing::useRandomModel(doc);
    doc.setText(kText);
    PositionalView view(&doc);
    QVERIFY(!view.demoReady());
    view.runPermutationDemo();
    QVERIFY(view.demoReady());
    // The view's own figures: a NaN fails both comparisons.
    QVERIFY2(view.permutationDifference(false) >= 0 && view.permutationDifference(false) < 1e-5,
             "positions off: worst difference " + QByteArray::number(view.permutationDifference(false)));
    QVERIFY2(view.permutationDifference(true) > 1e-3, "positions on: worst difference " + QByteArray::number(view.permutationDifference(true)));
    // The drawn matrices are the ones compared: reordering the left one gives the right one.
    const Matrix a = view.demoPlot(false, false)->shown(), b = view.demoPlot(false, true)->shown();
    Matrix reordered = a.colwise().reverse().rowwise().reverse();  // "dog bites man" -> "man bites dog" is (2, 1, 0)
    const numericcheck::Worst drawn = maxDiff(reordered, b);
    QVERIFY2(drawn.within(1e-5), drawn.message("drawn matrices").c_str());
    const numericcheck::Worst sin = maxDiff(view.sinusoidalPlot()->shown(), doc.model()->sinusoidal.topRows(PositionalView::kShownPositions));
    QVERIFY2(sin.within(1e-6), sin.message("sinusoidal table").c_str());
}

// The Words switch on the translator: the model's own answer's words down (what its ids read as: the start
// token alone, "." against the word before it), the sentence's words across, each cell the rule worked here
// from the core's token weights; switched off, the tokens come back.
void TestStepByStep::crossViewBetweenWords()
{
    Document doc;
    const ModelPtr model = openTranslator(doc);
    QVERIFY(model);
    doc.setFocus({1, 2});
    CrossAttentionView view(&doc);
    view.waitForResult();
    QVERIFY(view.hasResult());
    const Matrix tokens = view.result().weights;  // (T, S)
    const std::size_t T = view.targetTokens().ids.size(), S = view.sourceTokens().ids.size();
    QCOMPARE(S, std::size_t(11));  // <bos> and ten words, each its own token
    doc.setWordLevel(true);
    view.waitForResult();
    const TokenizedText& targetWords = view.targetTokens();
    QCOMPARE(view.sourceTokens().tokens.size(), std::size_t(11));
    QCOMPARE(targetWords.tokens.size(), T - 1);  // the answer's "." joins the word before it
    QVERIFY(targetWords.spans.front().special);
    std::vector<int> wordOf(T);
    for (std::size_t t = 0; t < T; ++t) wordOf[t] = int(std::min(t, T - 2));
    numericcheck::Worst worst;
    for (std::size_t i = 0; i + 1 < T; ++i)
        for (std::size_t j = 0; j < S; ++j) {
            double sum = 0.0;
            int rows = 0;
            for (std::size_t q = 0; q < T; ++q)
                if (wordOf[q] == int(i)) {
                    sum += tokens(Eigen::Index(q), Eigen::Index(j));
                    ++rows;
                }
            worst.add(view.weightsPlot()->shown()(Eigen::Index(i), Eigen::Index(j)), sum / rows, long(i), long(j));
        }
    QVERIFY2(worst.within(1e-6), worst.message("word cross-attention").c_str());
    doc.setWordLevel(false);
    QCOMPARE(view.targetTokens().ids.size(), T);
}

// One click focuses the decoder head with the smallest mean row entropy, worked here by a plain loop over the
// core's cross-attention of every head, and shows it as lines.
void TestStepByStep::sharpestAlignmentHeadIsOneClick()
{
    Document doc;
    const ModelPtr model = openTranslator(doc);
    QVERIFY(model);
    doc.setFocus({0, 0});
    CrossAttentionView view(&doc);
    view.waitForResult();
    const CrossAttentionResult r = view.result();  // a copy: the click below recomputes the view's own
    QVERIFY(!r.allCross.empty());
    int bestAt = -1;
    double best = 0.0;
    for (std::size_t i = 0; i < r.allCross.size(); ++i) {
        const Matrix& w = r.allCross[i];
        double sum = 0.0;
        for (Eigen::Index q = 0; q < w.rows(); ++q)
            for (Eigen::Index k = 0; k < w.cols(); ++k)
                if (w(q, k) > 0.0f) sum -= double(w(q, k)) * std::log(double(w(q, k)));
        const double mean = sum / double(w.rows());
        if (bestAt < 0 || mean < best - 1e-9) {
            bestAt = int(i);
            best = mean;
        }
    }
    view.findChild<QPushButton*>(QStringLiteral("cross-sharpest"))->click();
    QCOMPARE(doc.focus().layer, bestAt / r.heads);
    QCOMPARE(doc.focus().head, bestAt % r.heads);
    QVERIFY(doc.attentionPicture() == AttentionPicture::Lines);
    QVERIFY(sharpestCrossHead(view.result()).meanEntropy < 1.0);  // a sharp alignment: well under ln 11 nats
}

void TestStepByStep::crossViewMatchesCore()
{
    Document doc;
    attnscope::testing::useRandomModel(doc);
    doc.setText(QStringLiteral("le chat est assis"));
    CrossAttentionView view(&doc);
    QVERIFY(view.hasResult());
    const ModelPtr& m = doc.model();
    Result<CrossAttentionResult> core =
        crossAttention(*m, m->tokenizer->encode("le chat est assis")->ids, m->tokenizer->encode("The cat sat on the mat")->ids,
                       doc.settings(), doc.focus());
    QVERIFY(core);
    const numericcheck::Worst d = maxDiff(view.weightsPlot()->shown(), core->weights);
    QVERIFY2(d.within(1e-6), d.message("cross weights").c_str());
    QCOMPARE(view.weightsPlot()->shown().rows(), Eigen::Index(4));
    QCOMPARE(view.weightsPlot()->shown().cols(), Eigen::Index(6));
    view.setSource(QStringLiteral("one two"));
    QCOMPARE(view.result().weights.cols(), Eigen::Index(2));
    doc.setText(QStringLiteral("a b c"));  // the target follows the document until edited
    QCOMPARE(view.result().weights.rows(), Eigen::Index(3));
}

void TestStepByStep::costViewMeasuresInBackground()
{
    Document doc;
    attnscope::testing::useRandomModel(doc);
    CostView view(&doc);
    view.setMaxTokens(64);
    QSignalSpy done(&view, &CostView::measured);
    view.measure();
    QVERIFY(done.wait(testing::kWorkTimeoutMs));
    QCOMPARE(int(view.points().size()), 4);  // 8, 16, 32, 64
    QCOMPARE(view.points().back().oneHeadMatrixBytes, std::int64_t(2 * 64 * 64 * 4));
    QCOMPARE(view.plot()->graph(3)->dataCount(), 4);
    // The tiled curve, counted by hand for d_head 16, blocks of 64: Q, acc, K, V (64 × 16 each), m and l (64
    // each), the 64 × 64 tile, and the output (T × 16).
    const int dHead = doc.model()->config.dHead;
    QCOMPARE(view.plot()->graph(6)->dataCount(), 4);
    for (int i = 0; i < 4; ++i) {
        const int T = 8 << i, b = std::min(T, 64);
        const double want = 4.0 * (4.0 * b * dHead + 2 * b + double(b) * b + double(T) * dHead);
        QCOMPARE((view.plot()->graph(6)->data()->constBegin() + i)->value, want);
    }
}

void TestStepByStep::containerHasEveryTab()
{
    Document doc;
    attnscope::testing::useRandomModel(doc);
    StepByStep steps(&doc);
    QCOMPARE(steps.count(), 8);
    QVERIFY(steps.pipeline() && steps.heads() && steps.block() && steps.positional() && steps.rope() && steps.cross() &&
            steps.tiled() && steps.cost());
}

QTEST_MAIN(TestStepByStep)
#include "tst_stepbystep.moc"
