// Long texts in the window. The token chips: a long text draws only the rows a scroll area exposes, and those
// rows look exactly as they do when the whole widget is drawn. The heatmap: past one pixel per token it
// draws an overview, each cell the largest weight of the pairs it covers (checked against a plain loop over
// the snapshot's weights), and zooms, pans and labels down to one exact cell per pair. The heads grid: the
// same overview per head. The sentence box: a text past QLineEdit's default 32,767 characters arrives whole.
#include <QImage>
#include <QLabel>
#include <QSet>
#include <QtTest>
#include <qcustomplot.h>
#include <functional>
#include <random>

#include "ui/attention/headgridview.h"
#include "ui/attention/heatmapview.h"
#include "ui/common/matrixplot.h"
#include "ui/lab/saturation/scorehistogramview.h"
#include "ui/steps/blockview.h"
#include "ui/steps/cellview.h"
#include "ui/steps/headsview.h"
#include "numericcheck.h"
#include "overviewreference.h"
#include "ui/drawing/colormap.h"
#include "core/model/forward.h"
#include "core/model/model.h"
#include "ui/window/mainwindow.h"
#include "ui/window/sentencevalidator.h"
#include "ui/window/tokenchips.h"
#include "core/open/openmodel.h"

using namespace attnscope;

namespace {

// 1,200 words of a small vocabulary through a random two-layer model with a 2,048-token context, causal
// with a window of 300 keys, so the map has hidden pairs on both sides of every query's visible band.
SnapshotPtr longSnapshot(int words = 1200)
{
    static const ModelPtr model = *loadModel("random:layers=2,heads=4,d_model=64,context=2048,seed=3");
    const QStringList vocabulary = QStringLiteral("the cat sat on a mat and dog ran over hill while birds sang").split(u' ');
    std::mt19937 rng(11);
    QStringList text;
    for (int i = 0; i < words; ++i) text << vocabulary[int(rng() % std::uint32_t(vocabulary.size()))];
    AttentionSettings settings;
    settings.mask = MaskKind::Causal;
    settings.window = 300;
    auto [snapshot, error] = computeSnapshot(model, text.join(u' '), settings, {1, 2}, 1);
    return snapshot;
}

// The worst difference between the drawn map and a plain loop over the snapshot's weights: each drawn cell
// the largest unmasked weight of its pairs. A cell whose pairs are all hidden is drawn as NaN (a gap), so
// there a NaN is what is wanted and anything else fails.
numericcheck::Worst worstOverviewDifference(const HeatmapView& view)
{
    const ForwardTrace& t = view.shownSnapshot()->trace;
    const Matrix& w = t.weights(view.shownHead().layer, view.shownHead().head);  // (T, T)
    const TokenSpan keys = view.drawnKeys(), queries = view.drawnQueries();
    const int C = view.mapCells().width(), R = view.mapCells().height();
    const Matrix reference = overviewref::largestVisible(w, t.detail.masked, queries.first, queries.count, keys.first, keys.count, R, C);
    numericcheck::Worst worst;
    worst.label("drawn cell (row, column)");
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) {
            const double drawn = view.drawnCell(c, r);
            if (!(reference(r, c) < 0.0f)) worst.add(drawn, double(reference(r, c)), r, c);
            else if (!std::isnan(drawn)) worst.fail("a cell whose pairs are all hidden is drawn");
        }
    return worst;
}

// The pairs `settings` hide in a (T, T) map, as masked scores: −inf where hidden, 0 elsewhere.
Matrix maskOf(const AttentionSettings& settings, int T)
{
    Matrix masked = Matrix::Zero(T, T);
    for (int k = 0; k < T; ++k)
        for (int q = 0; q < T; ++q)
            if (isMaskedPair(settings, q, k)) masked(q, k) = -std::numeric_limits<float>::infinity();
    return masked;
}

} // namespace

class TestLongInputs : public QObject {
    Q_OBJECT
private slots:
    void aPartDrawnAloneIsThatPartOfTheWhole()
    {
        auto snapshot = std::make_shared<Snapshot>();
        for (int i = 0; i < 3000; ++i) {
            snapshot->tokens.tokens.push_back(std::string(1 + i % 7, char('a' + i % 26)));
            snapshot->tokens.ids.push_back(i);
        }
        snapshot->settings.blockedKeys = {5, 1234, 2999};
        TokenChips chips;
        chips.resize(500, 100);
        chips.setSnapshot(snapshot);
        chips.resize(500, chips.heightForWidth(500));
        QCOMPARE(chips.chipCount(), 3000);
        QVERIFY(chips.height() > 2000);  // hundreds of rows

        const QImage whole = chips.grab().toImage();
        // A band across the middle, cut through rows, and the band holding the last chip.
        for (const QRect band : {QRect(0, chips.chipRect(1234).top() - 7, 500, 61), QRect(0, chips.chipRect(2999).top() - 3, 500, 40)}) {
            const QRect part = band.intersected(chips.rect());
            const QImage drawn = chips.grab(part).toImage();
            QCOMPARE(drawn.size(), part.size() * whole.devicePixelRatio());
            QVERIFY2(drawn == whole.copy(part), qPrintable(QStringLiteral("the band at y = %1 differs").arg(part.top())));
            // Chips are drawn there (borders, fills, letters), not a blank band.
            QSet<QRgb> colours;
            for (int y = 0; y < drawn.height(); ++y)
                for (int x = 0; x < drawn.width(); ++x) colours.insert(drawn.pixel(x, y));
            QVERIFY2(colours.size() > 8, qPrintable(QStringLiteral("%1 colours").arg(colours.size())));
        }
    }

    // 1,200 tokens in a map a few hundred pixels wide: an overview, every drawn cell the largest weight it
    // covers; the hovered pair's own numbers and the query's top keys are still the snapshot's exactly.
    void heatmapDrawsTheLargestWeightOfEachCell()
    {
        const SnapshotPtr snapshot = longSnapshot();
        QVERIFY(snapshot);
        const int T = snapshot->trace.tokens;
        QCOMPARE(T, 1200);
        HeatmapView view;
        view.resize(700, 640);
        view.setSnapshot(snapshot);
        view.replot();
        QVERIFY(view.showsOverview());
        QCOMPARE(view.drawnKeys(), (TokenSpan{0, T}));
        QVERIFY2(view.mapCells().width() < T && view.mapCells().width() > 200, qPrintable(QString::number(view.mapCells().width())));
        const numericcheck::Worst worst = worstOverviewDifference(view);
        QVERIFY2(worst.within(1e-7), worst.message("the drawn overview").c_str());
        // The window of 300 keys: a long query sees a band, and the keys before it are drawn grey.
        QVERIFY(std::isnan(view.drawnCell(0, view.mapCells().height() - 1)));

        const Matrix& w = snapshot->trace.weights(1, 2);
        QCOMPARE(view.cellValue(900, 850), double(w(900, 850)));
        QVERIFY(view.isMaskedCell(900, 500) && view.cellValue(900, 500) == 0.0);
        const std::vector<KeyWeight> top = view.topKeysOf(900);
        QCOMPARE(int(top.size()), HeatmapView::kTopKeys);
        QVERIFY(top[0].key > 900 - 300 && top[0].key <= 900);  // inside the window
        for (int k = 601; k <= 900; ++k) QVERIFY(w(900, k) <= top.back().weight || k == top[0].key || k == top[1].key ||
                                                 k == top[2].key || k == top[3].key || k == top[4].key);
        const QString tip = view.cellToolTip(900, 850);
        QVERIFY2(tip.contains(QStringLiteral("this pixel: queries")) && tip.contains(QStringLiteral("top keys of query 900: %1").arg(top[0].key)),
                 qPrintable(tip));
    }

    // The wheel zooms at the pointer, a drag pans, a Shift-drag zooms to its rectangle, a double-click shows
    // it whole. Zoomed in to a few dozen tokens, the map holds one exact cell per pair and labels every token.
    void heatmapZoomsPansAndLabels()
    {
        const SnapshotPtr snapshot = longSnapshot();
        HeatmapView view;
        view.resize(700, 640);
        view.setSnapshot(snapshot);
        view.replot();
        QVERIFY(!view.isZoomed());
        const int step = view.labelStep();
        QVERIFY(step > 10);

        // 1. Wheel, four notches, over the pair (query 400, key 300): that pair stays under the pointer.
        const QPoint at(int(view.xAxis->coordToPixel(300)), int(view.yAxis->coordToPixel(400)));
        QSignalSpy zoomed(&view, &HeatmapView::zoomChanged);
        QWheelEvent wheel(at, view.mapToGlobal(at), QPoint(), QPoint(0, 4 * 120), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(&view, &wheel);
        view.replot();
        QVERIFY(view.isZoomed() && zoomed.count() == 1);
        const double spanAfterWheel = view.visibleTokens().height();
        QVERIFY2(std::abs(spanAfterWheel * std::pow(1.25, 4) - 1200.0) < 2.0, qPrintable(QString::number(spanAfterWheel)));
        QVERIFY2(std::abs(view.xAxis->pixelToCoord(at.x()) - 300) < 1.0 && std::abs(view.yAxis->pixelToCoord(at.y()) - 400) < 1.0,
                 qPrintable(QStringLiteral("the pair under the pointer is now %1, %2").arg(view.xAxis->pixelToCoord(at.x())).arg(view.yAxis->pixelToCoord(at.y()))));
        QVERIFY(view.labelStep() < step);
        const numericcheck::Worst zoomedIn = worstOverviewDifference(view);
        QVERIFY2(zoomedIn.within(1e-7), zoomedIn.message("the drawn overview").c_str());

        // 2. Shift-drag a rectangle around keys 295–315 × queries 395–415: one cell per pair, every token labelled.
        const auto pixel = [&](double key, double query) { return QPoint(int(view.xAxis->coordToPixel(key)), int(view.yAxis->coordToPixel(query))); };
        QTest::mousePress(&view, Qt::LeftButton, Qt::ShiftModifier, pixel(295, 395));
        QTest::mouseMove(&view, pixel(305, 405));
        QTest::mouseRelease(&view, Qt::LeftButton, Qt::ShiftModifier, pixel(315, 415));
        view.replot();
        const QRectF box = view.visibleTokens();
        QVERIFY2(box.contains(QPointF(305, 405)) && box.height() < 30 && box.height() > 15, qPrintable(QStringLiteral("%1 × %2 at %3, %4").arg(box.width()).arg(box.height()).arg(box.left()).arg(box.top())));
        QVERIFY(!view.showsOverview());
        QCOMPARE(view.mapCells(), QSize(view.drawnKeys().count, view.drawnQueries().count));
        QVERIFY2(view.labelStep() == 1, qPrintable(QStringLiteral("every %1th token labelled, %2 tokens across").arg(view.labelStep()).arg(box.height())));
        const Matrix& w = snapshot->trace.weights(1, 2);
        const TokenSpan keys = view.drawnKeys(), queries = view.drawnQueries();
        for (int r = 0; r < queries.count; ++r)
            for (int c = 0; c < keys.count; ++c) {
                const int q = queries.first + r, k = keys.first + c;
                const double drawn = view.drawnCell(c, r);
                QVERIFY(view.isMaskedCell(q, k) ? std::isnan(drawn) : drawn == double(w(q, k)));
            }
        QCOMPARE(view.cellAt(pixel(301, 407)), QPoint(407, 301));
        // Zoomed into a long text, a label says where it is: "405 sat", not "sat".
        const auto queryLabels = qSharedPointerDynamicCast<QCPAxisTickerText>(view.yAxis->ticker());
        const QString label405 = queryLabels->ticks().value(405);
        QVERIFY2(label405.startsWith(QStringLiteral("405 ")) && label405.size() > 4, qPrintable(label405));

        // 3. Drag 100 pixels to the right and 50 down: the map follows the pointer, earlier tokens come in.
        const double cell = view.axisRect()->rect().width() / view.xAxis->range().size();
        const QPointF before = view.visibleTokens().center();
        const QPoint from = view.axisRect()->rect().center();
        QTest::mousePress(&view, Qt::LeftButton, Qt::NoModifier, from);
        QTest::mouseMove(&view, from + QPoint(100, 50));
        QTest::mouseRelease(&view, Qt::LeftButton, Qt::NoModifier, from + QPoint(100, 50));
        view.replot();
        const QPointF moved = view.visibleTokens().center() - before;
        QVERIFY2(std::abs(moved.x() + 100 / cell) < 0.01 && std::abs(moved.y() + 50 / cell) < 0.01,
                 qPrintable(QStringLiteral("moved %1, %2 tokens at %3 pixels per token").arg(moved.x()).arg(moved.y()).arg(cell)));

        // 4. A text one word longer keeps the zoom; a pan past the start stops at the map's edge.
        view.setSnapshot(longSnapshot(1201));
        view.replot();
        QVERIFY(view.isZoomed());
        QVERIFY(std::abs(view.visibleTokens().center().x() - (before.x() + moved.x())) < 0.01);
        view.panBy(QPointF(-5000, -5000));
        view.replot();
        QVERIFY2(std::abs(view.visibleTokens().left() + 0.5) < 1e-6 && std::abs(view.visibleTokens().top() + 0.5) < 1e-6,
                 qPrintable(QStringLiteral("the view starts at key %1, query %2").arg(view.visibleTokens().left()).arg(view.visibleTokens().top())));

        // 5. A double-click shows the whole map again.
        QTest::mouseDClick(&view, Qt::LeftButton, Qt::NoModifier, from);
        view.replot();
        QVERIFY(!view.isZoomed());
        QVERIFY(view.showsOverview());
        QVERIFY(view.labelStep() > 10);  // thinned out again (the margins, and so the step, may differ a little)

        // 6. A map of three tokens does not zoom: its cells are already large.
        view.setSnapshot(longSnapshot(3));
        view.replot();
        view.zoomBy(2.0, QPointF(1, 1));
        view.zoomToTokens(QRectF(0, 0, 1, 1));
        view.replot();
        QVERIFY(!view.isZoomed() && !view.showsOverview());
        QCOMPARE(view.mapCells(), QSize(3, 3));
    }

    // The heads grid shrinks each long head the same way: a pixel is the largest weight it covers (the
    // snapshot's overviews, made where the pass was computed, checked here against the plain loop).
    void gridDrawsTheLargestWeightOfEachPixel()
    {
        const SnapshotPtr snapshot = longSnapshot();
        HeadGridView grid;
        grid.resize(600, 400);
        grid.setSnapshot(snapshot);
        const ForwardTrace& t = snapshot->trace;
        QCOMPARE(int(snapshot->headOverviews.size()), 8);  // made on the computing thread, not the grid's
        QCOMPARE(t.tokens, 1200);  // in cells of 8 tokens (the smallest power of two with 256 or fewer): 150 a side
        for (const HeadSelection head : {HeadSelection{0, 0}, HeadSelection{1, 2}}) {
            const QImage& image = grid.headImage(head);
            QCOMPARE(image.size(), QSize(150, 150));
            const Matrix& w = t.weights(head.layer, head.head);
            const Matrix reference = overviewref::largestVisibleInCells(w, t.detail.masked, 8);
            int wrong = 0;
            for (int y = 0; y < 150; ++y)
                for (int x = 0; x < 150; ++x) {
                    const QRgb want = reference(y, x) < 0.0f ? ColorMap::maskedColor().rgb() : ColorMap::weightColor(reference(y, x));
                    wrong += image.pixel(x, y) != want;
                }
            QVERIFY2(wrong == 0, qPrintable(QStringLiteral("%1 of 22,500 pixels differ").arg(wrong)));
        }
    }

    // A keystroke at the end of a long text carries the grid's rows of cells before it from the snapshot
    // before (model/headsummary.h's carrySummary): after appends, an edit of the last word and a deletion,
    // under both displays, every overview, share and row sum is a summary made from nothing's; across the
    // length where the cells double (1,024 tokens) nothing is carried. The same where the pass keeps only the
    // focused head and makes the overviews itself (a lower budget stands for a longer text): it reuses the
    // prefix in whole rows of cells (model/prefixreuse.h), and makes a whole pass where the cells double.
    void keystrokesCarryTheGridsRowsOfCells_data()
    {
        QTest::addColumn<bool>("valueWeighted");
        QTest::addColumn<bool>("onlyFocus");
        QTest::newRow("weights") << false << false;
        QTest::newRow("value-weighted") << true << false;
        QTest::newRow("only the focused head kept") << false << true;
        QTest::newRow("only the focused head kept, value-weighted") << true << true;
    }
    void keystrokesCarryTheGridsRowsOfCells()
    {
        QFETCH(bool, valueWeighted);
        QFETCH(bool, onlyFocus);
        const double budget = onlyFocus ? 1e6 : Snapshot::kEveryHeadBytes;
        const AttentionDisplay display = valueWeighted ? AttentionDisplay::ValueWeighted : AttentionDisplay::Weights;
        const ModelPtr model = *loadModel("random:layers=2,heads=4,d_model=32,context=2048,seed=3");
        const QStringList vocabulary = QStringLiteral("the cat sat on a mat and dog ran over hill while birds sang").split(u' ');
        std::mt19937 rng(17);
        QStringList words;
        for (int i = 0; i < 1000; ++i) words << vocabulary[int(rng() % std::uint32_t(vocabulary.size()))];
        AttentionSettings settings;
        SnapshotPtr before = computeSnapshot(model, words.join(u' '), settings, {1, 2}, 1, display, true, budget).first;
        QCOMPARE(before->trace.tokens, 1000);  // a token a word: cells of 4
        QCOMPARE(before->trace.keepsEveryHead(), !onlyFocus);
        HeadGridView grid;  // shows each snapshot in turn, keeping the rows of pixels a snapshot carried
        grid.resize(600, 400);
        grid.setSnapshot(before);
        QVERIFY(!grid.headImage({0, 0}).isNull());
        const auto edits = std::vector<std::pair<QString, std::function<void()>>>{
            {"three words appended", [&] { words << "dog" << "sat" << "on"; }},
            {"the last word changed", [&] { words.last() = "hill"; }},
            {"two words deleted", [&] { words.removeLast(); words.removeLast(); }},
            {"one more", [&] { words << "birds"; }},
            {"past 1,024 tokens", [&] { for (int i = 0; i < 30; ++i) words << "mat"; }},
        };
        for (const auto& [name, edit] : edits) {
            edit();
            const SnapshotPtr now = computeSnapshot(model, words.join(u' '), settings, {1, 2}, 2, display, true, budget).first;
            const SnapshotPtr fresh = computeSnapshot(model, words.join(u' '), settings, {1, 2}, 3, display, false, budget).first;
            const int T = now->trace.tokens, size = T > 1024 ? 8 : 4;
            QCOMPARE(fresh->carriedCellRows, 0);
            if (onlyFocus) {
                QCOMPARE(now->trace.keepsEveryHead(), false);
                QCOMPARE(now->carriedCellRows, 0);  // carried inside the pass instead
                QVERIFY2(T > 1024 ? now->reusedTokens == 0 : now->reusedTokens > 0 && now->reusedTokens % size == 0,
                         qPrintable(QStringLiteral("%1: %2 tokens reused").arg(name).arg(now->reusedTokens)));
                const numericcheck::Worst d = numericcheck::difference(now->trace.weights(1, 2), fresh->trace.weights(1, 2));
                QVERIFY2(d.within(1e-4), qPrintable(QStringLiteral("%1: %2").arg(name, QString::fromStdString(d.message("the focused head's weights")))));
            } else {
                QVERIFY2(now->reusedTokens > 0, qPrintable(name));
                QCOMPARE(now->carriedCellRows, T > 1024 ? 0 : now->reusedTokens / size);
            }
            QCOMPARE(now->headOverviews.size(), std::size_t(8));
            QCOMPARE(int(now->headOverviews[0].rows()), (T + size - 1) / size);
            for (std::size_t i = 0; i < 8; ++i) {
                const Matrix& a = now->headOverviews[i];
                const Matrix& b = fresh->headOverviews[i];
                QCOMPARE(a.rows(), b.rows());
                QCOMPARE(a.cols(), b.cols());
                // A weight × value length may pass 1: within 1e-5 of the cell's size (a pass that reuses the
                // prefix rounds differently from a whole one, about 1e-6 here). A cell with no weights is NaN
                // (a gap) on both sides and is skipped; a NaN on one side only fails.
                numericcheck::Worst worst;
                worst.label("%s, head %zu, cell (row, column)", qPrintable(name), i);
                for (Eigen::Index r = 0; r < a.rows(); ++r)
                    for (Eigen::Index c = 0; c < a.cols(); ++c)
                        if (!(std::isnan(a(r, c)) && std::isnan(b(r, c)))) worst.addRelative(a(r, c), b(r, c), 1.0, r, c);
                QVERIFY2(worst.atMost(1e-5), worst.message().c_str());
                QVERIFY2(std::abs(now->headSinks[i] - fresh->headSinks[i]) < 1e-6f, qPrintable(name));
                if (onlyFocus) continue;  // the row sums stay in the trace
                // Each row of cells sums a few thousand weights: within 1e-5 of its size.
                QCOMPARE(now->headRowSums[i].rows(), a.rows());
                numericcheck::Worst sums;
                sums.label("%s, head %zu, row sums", qPrintable(name), i);
                sums.addRelative(now->headRowSums[i], fresh->headRowSums[i]);
                QVERIFY2(sums.within(1e-5), sums.message().c_str());
            }
            // The grid: the same pixels as a grid that saw only this snapshot; under the plain display the
            // carried rows of cells were not coloured again.
            grid.setSnapshot(now);
            HeadGridView alone;
            alone.resize(600, 400);
            alone.setSnapshot(now);
            for (int l = 0; l < 2; ++l)
                for (int h = 0; h < 4; ++h)
                    QVERIFY2(grid.headImage({l, h}) == alone.headImage({l, h}), qPrintable(QStringLiteral("%1, head %2.%3").arg(name).arg(l).arg(h)));
            QCOMPARE(grid.keptImageRows(), valueWeighted ? 0 : 8 * now->carriedCellRows);
            QVERIFY(!onlyFocus || grid.keptImageRows() == 0);
            before = now;  // the next edit's pass reuses this one's, while it lives
        }
    }

    // A text whose every head would not fit keeps the focused head's weights alone and its grid's overviews
    // from the pass: each one against a plain loop over that head's weights, from a pass that keeps that head;
    // the heatmap draws the kept head, the hidden pairs grey from the settings (no focused head's steps are
    // kept), and the grid draws the overviews. The budget is lowered to 4 MiB so that 8 heads at 600 tokens
    // (11 MB) cross it; under the window's 768 MiB that takes 1,024 heads, and 40 s under the sanitizers.
    void aLongTextKeepsOnlyTheFocusedHead()
    {
        const ModelPtr model = *loadModel("random:layers=2,heads=4,d_model=32,context=1024,seed=3");
        const double budget = 4.0 * 1024 * 1024;
        const QStringList vocabulary = QStringLiteral("the cat sat on a mat and dog ran over hill").split(u' ');
        std::mt19937 rng(5);
        QStringList words;
        for (int i = 0; i < 600; ++i) words << vocabulary[int(rng() % std::uint32_t(vocabulary.size()))];
        AttentionSettings settings;
        settings.window = 300;
        settings.sinks = 2;
        const HeadSelection focus{1, 2};
        const auto [snapshot, error] =
            computeSnapshot(model, words.join(u' '), settings, focus, 1, AttentionDisplay::Weights, false, budget);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const ForwardTrace& t = snapshot->trace;
        const int T = t.tokens, cells = 2 * 4;
        QCOMPARE(T, 600);
        QVERIFY(Snapshot::keepsOnlyFocus(model->config, T, budget) && !Snapshot::keepsOnlyFocus(model->config, T));
        QVERIFY(!t.keepsEveryHead() && t.keepsWeights(focus.layer, focus.head) && !t.hasDetail);
        Eigen::Index kept = 0;
        for (const Matrix& w : t.attention) kept += w.size();
        QCOMPARE(kept, Eigen::Index(T) * T);
        QCOMPARE(int(snapshot->headOverviews.size()), cells);
        QCOMPARE(int(snapshot->headSinks.size()), cells);
        QVERIFY2(onlyFocusKept(*snapshot).contains(QStringLiteral("362 tokens")), qPrintable(onlyFocusKept(*snapshot)));

        const Matrix masked = maskOf(settings, T);
        HeadGridView grid;
        grid.resize(900, 900);
        grid.setSnapshot(snapshot);
        for (const HeadSelection head : {focus, HeadSelection{0, 0}, HeadSelection{1, 3}}) {
            // That head's weights, from a pass that keeps it.
            CaptureRequest capture;
            capture.detail = head;
            capture.overviewCells = Snapshot::kHeadOverview;
            capture.onlyDetailWeights = true;
            Result<ForwardTrace> own = forward(*model, snapshot->tokens.ids, settings, capture);
            QVERIFY(bool(own));
            const Matrix& w = own->weights(head.layer, head.head);
            const Matrix reference = overviewref::largestVisibleInCells(w, masked, 4);  // 600 tokens: cells of 4, 150 a side
            const Matrix& made = snapshot->headOverviews[std::size_t(head.layer * 4 + head.head)];
            QCOMPARE(made.rows(), Eigen::Index(150));
            const QImage& image = grid.headImage(head);
            QCOMPARE(image.size(), QSize(150, 150));
            int wrong = 0, wrongPixels = 0;
            for (int y = 0; y < 150; ++y)
                for (int x = 0; x < 150; ++x) {
                    const bool hidden = reference(y, x) < 0.0f;
                    wrong += hidden != std::isnan(made(y, x)) || (!hidden && std::abs(made(y, x) - reference(y, x)) > 1e-6f);
                    const QRgb want = hidden ? ColorMap::maskedColor().rgb() : ColorMap::weightColor(reference(y, x));
                    wrongPixels += image.pixel(x, y) != want;
                }
            QVERIFY2(wrong == 0 && wrongPixels == 0,
                     qPrintable(QStringLiteral("head %1.%2: %3 cells, %4 pixels differ").arg(head.layer).arg(head.head).arg(wrong).arg(wrongPixels)));
        }

        HeatmapView view;
        view.resize(700, 640);
        view.setSnapshot(snapshot);
        view.replot();
        QVERIFY(view.showsOverview());
        QCOMPARE(view.shownHead(), focus);
        QVERIFY(view.isMaskedCell(500, 100) && !view.isMaskedCell(500, 1) && !view.isMaskedCell(500, 450));
        QCOMPARE(view.cellValue(500, 450), double(t.weights(focus.layer, focus.head)(500, 450)));
        QVERIFY(std::isnan(view.drawnCell(view.mapCells().width() / 3, view.mapCells().height() - 1)));  // outside the window
        for (const KeyWeight& k : view.topKeysOf(500)) QVERIFY(!isMaskedPair(settings, 500, k.key));
    }

    // The views that read the focused head's steps (Heads, Block, Cell, the score histogram) have none to show
    // for a text too long to keep them: they keep nothing of the text before on screen and say why, in the
    // sentence the pipeline and rollout use.
    void theStepViewsSayWhyALongTextHasNone()
    {
        Document doc;
        doc.setEveryHeadBytes(4.0 * 1024 * 1024);  // 8 heads at 600 tokens (11 MB) cross it
        doc.setModel(*loadModel("random:layers=2,heads=4,d_model=32,context=1024,seed=3"));
        doc.setText(QStringLiteral("the cat sat on the mat"));
        doc.waitForIdle();
        HeadsView heads(&doc);
        BlockView block(&doc);
        CellView cell(&doc);
        ScoreHistogramView histogram(&doc);
        QVERIFY(doc.snapshot()->trace.hasDetail);
        QCOMPARE(heads.headPlot(0)->shown().rows(), Eigen::Index(6));
        QCOMPARE(block.plot(QStringLiteral("residual_in"))->shown().rows(), Eigen::Index(6));
        QVERIFY(cell.hasCell() && !histogram.scoresShown().isEmpty());

        QStringList words;
        for (int i = 0; i < 600; ++i) words << QStringLiteral("cat");
        doc.setText(words.join(u' '));
        doc.waitForIdle();
        const QString why = onlyFocusKept(*doc.snapshot());
        QVERIFY2(why.contains(QStringLiteral("362 tokens")), qPrintable(why));
        const auto says = [&why](const QWidget& view) {
            for (const QLabel* l : view.findChildren<QLabel*>())
                if (l->isVisibleTo(&view) && l->text() == why) return true;
            return false;
        };
        for (int h = 0; h < heads.headCount(); ++h) QCOMPARE(heads.headPlot(h)->shown().size(), Eigen::Index(0));
        for (const MatrixPlot* p : {heads.concatPlot(), heads.woPlot(), heads.outputPlot()}) QCOMPARE(p->shown().size(), Eigen::Index(0));
        QVERIFY(says(heads));
        QCOMPARE(block.plot(QStringLiteral("residual_in"))->shown().size(), Eigen::Index(0));
        QCOMPARE(block.normsPlot()->graph(0)->data()->size(), 0);
        QVERIFY(says(block));
        QVERIFY(!cell.hasCell());
        QVERIFY(says(cell));
        QVERIFY(histogram.scoresShown().isEmpty());
        bool titled = false;
        for (QCPLayoutElement* e : histogram.plot()->plotLayout()->elements(true))
            if (const auto* t = qobject_cast<QCPTextElement*>(e)) titled |= t->text().simplified() == why;
        QVERIFY(titled);
    }

    // QLineEdit's default limit of 32,767 characters cut a pasted long text without a word; the box now takes
    // 40,000 whole, and only past SentenceValidator::kMaxCharacters is text cut, from its end, with a notice.
    void theSentenceBoxTakesALongTextWhole()
    {
        MainWindow w;
        QString text;
        while (text.size() < 40'000) text += QStringLiteral("the quick brown fox ");
        w.sentenceEdit()->selectAll();
        w.sentenceEdit()->insert(text);
        QCOMPARE(w.sentenceEdit()->text().size(), text.size());
        QCOMPARE(w.document()->text(), text);
        QVERIFY(!w.noticeLabel()->text().contains(QStringLiteral("were cut")));

        SentenceValidator validator;
        QSignalSpy cut(&validator, &SentenceValidator::lengthCut);
        const int limit = SentenceValidator::kMaxCharacters;
        QString tooLong(limit + 5, QLatin1Char('a'));
        int pos = int(tooLong.size());
        QCOMPARE(validator.validate(tooLong, pos), QValidator::Acceptable);
        QCOMPARE(int(tooLong.size()), limit);
        QCOMPARE(pos, limit);
        QCOMPARE(cut.size(), 1);
        QCOMPARE(cut.front().front().value<qsizetype>(), qsizetype(5));
        // A surrogate pair across the limit goes whole; a text at the limit is left alone.
        QString pair = QString(limit - 1, QLatin1Char('a')) + QString::fromUcs4(U"\U0001F600") + QStringLiteral("b");
        pos = 0;
        validator.validate(pair, pos);
        QCOMPARE(int(pair.size()), limit - 1);
        QString atLimit(limit, QLatin1Char('a'));
        pos = 0;
        validator.validate(atLimit, pos);
        QCOMPARE(int(atLimit.size()), limit);
        QCOMPARE(cut.size(), 2);
    }
};

QTEST_MAIN(TestLongInputs)
#include "tst_longinputs.moc"
