// The lines picture against the core: hovering keeps one token's lines and writes the weights of the core's
// own trace, masked pairs draw no line, the filters are the core's functions, and long texts show a window.
#include "tst_mainwindow.h"

#include <QDoubleSpinBox>
#include <QPixmap>

#include "core/analysis/linefilter.h"
#include "core/analysis/wordattention.h"
#include "ui/attention/linespanel.h"
#include "ui/attention/linesview.h"

namespace {

using Side = LinesView::Side;

// The window on the random model with the sentence typed and the lines picture chosen.
struct LinesWindow {
    MainWindow w;
    explicit LinesWindow(const QString& text = kSentence)
    {
        attnscope::testing::useRandomModel(*w.document());
        w.resize(1300, 850);
        w.show();
        w.sentenceEdit()->setText(text);
        w.document()->waitForIdle();
        QTest::mouseClick(w.findChild<QToolButton*>(QStringLiteral("picture-lines")), Qt::LeftButton);
    }
    LinesView* view() { return w.lines()->view(); }
    // Every (q, k) of head `head` (an index into the view's heads) for which the view draws a line.
    std::vector<std::pair<int, int>> drawn(int head)
    {
        std::vector<std::pair<int, int>> out;
        for (int q = 0; q < view()->input().queries(); ++q)
            for (int k = 0; k < view()->input().keys(); ++k)
                if (view()->drawsLine(head, q, k)) out.push_back({q, k});
        return out;
    }
};

} // namespace

void TestMainWindow::linesHoverIsolatesOneQueryWithTheCoresWeights()
{
    LinesWindow lw;
    QVERIFY(lw.w.document()->attentionPicture() == AttentionPicture::Lines);
    QTRY_VERIFY(lw.view()->isVisible());
    LinesView* v = lw.view();
    QCOMPARE(v->input().queries(), 9);
    QCOMPARE(v->input().heads.size(), std::size_t(1));
    QVERIFY(v->input().heads[0].head == lw.w.document()->focus());
    const ForwardTrace core = coreTrace(*lw.w.document());
    const Matrix& a = core.weights(0, 0);  // (T, T)
    // Nothing hovered: a line for every pair with weight under the causal mask.
    QCOMPARE(int(lw.drawn(0).size()), 9 * 10 / 2);

    QTest::mouseMove(v, v->labelRect({Side::Query, 4}).center().toPoint());
    QVERIFY(v->active() == (LinesView::Token{Side::Query, 4}));
    const auto lines = lw.drawn(0);
    QCOMPARE(int(lines.size()), 5);  // keys 0..4; 5..8 are masked
    numericcheck::Worst worst;
    worst.label("the numbers beside the keys");
    for (const auto& [q, k] : lines) QCOMPARE(q, 4);
    for (int k = 0; k < 9; ++k) {
        const QString shown = v->numberShown(0, k);
        if (k > 4) {
            QVERIFY2(shown.isEmpty(), qPrintable(shown));  // a masked pair has no number either
            continue;
        }
        QCOMPARE(shown, LinesView::weightText(a(4, k)));
        worst.add(double(v->drawnWeight(0, 4, k)), double(a(4, k)), 4, k);
    }
    QVERIFY2(worst.within(1e-6), worst.message().c_str());
    // The picture as painted draws those five lines and no other.
    v->grab();
    QCOMPARE(v->linesDrawn(), 5);
    // Leaving the view brings every line back.
    QEvent leave(QEvent::Leave);
    QCoreApplication::sendEvent(v, &leave);
    QVERIFY(!v->active().valid());
    QCOMPARE(int(lw.drawn(0).size()), 45);
}

void TestMainWindow::linesHoverOnAKeyKeepsTheLinesThatReachIt()
{
    LinesWindow lw;
    LinesView* v = lw.view();
    QTest::mouseMove(v, v->labelRect({Side::Key, 2}).center().toPoint());
    QVERIFY(v->active() == (LinesView::Token{Side::Key, 2}));
    const auto lines = lw.drawn(0);
    QCOMPARE(int(lines.size()), 7);  // queries 2..8 see key 2
    for (const auto& [q, k] : lines) {
        QCOMPARE(k, 2);
        QVERIFY(q >= 2);
    }
    const ForwardTrace core = coreTrace(*lw.w.document());
    const Matrix& a = core.weights(0, 0);  // (T, T)
    for (int q = 0; q < 9; ++q) QCOMPARE(v->numberShown(0, q), q < 2 ? QString() : LinesView::weightText(a(q, 2)));
}

void TestMainWindow::linesClickPinsAndKeysMoveIt()
{
    LinesWindow lw;
    LinesView* v = lw.view();
    QTest::mouseClick(v, Qt::LeftButton, {}, v->labelRect({Side::Query, 3}).center().toPoint());
    QVERIFY(v->pinned() == (LinesView::Token{Side::Query, 3}));
    // The pin holds while the pointer moves elsewhere.
    QTest::mouseMove(v, v->labelRect({Side::Query, 6}).center().toPoint());
    QVERIFY(v->active() == (LinesView::Token{Side::Query, 3}));
    QTest::keyClick(v, Qt::Key_Down);
    QVERIFY(v->pinned() == (LinesView::Token{Side::Query, 4}));
    QTest::keyClick(v, Qt::Key_Right);
    QVERIFY(v->pinned() == (LinesView::Token{Side::Key, 4}));
    QTest::keyClick(v, Qt::Key_Up);
    QVERIFY(v->pinned() == (LinesView::Token{Side::Key, 3}));
    QTest::keyClick(v, Qt::Key_Escape);
    QVERIFY(!v->pinned().valid());
    // The arrows moved the token, not the focused head.
    QVERIFY(lw.w.document()->focus() == (HeadSelection{0, 0}));
    // A new sentence keeps the pin when the token is still there, and drops it when not.
    QTest::mouseClick(v, Qt::LeftButton, {}, v->labelRect({Side::Query, 8}).center().toPoint());
    lw.w.sentenceEdit()->setText(QStringLiteral("the dog ran"));
    lw.w.document()->waitForIdle();
    QVERIFY(!v->pinned().valid());
}

void TestMainWindow::linesMaskedPairsDrawNoLine()
{
    LinesWindow lw;
    Document* doc = lw.w.document();
    doc->setLines({{}, true, 0.0, 1.0, false});  // every head of the layer
    LinesView* v = lw.view();
    QCOMPARE(v->input().heads.size(), std::size_t(4));
    for (int h = 0; h < 4; ++h)
        for (const auto& [q, k] : lw.drawn(h)) QVERIFY2(k <= q, qPrintable(QStringLiteral("head %1 draws %2 -> %3").arg(h).arg(q).arg(k)));
    // Without the mask the lines going down the page appear.
    doc->setMask(MaskKind::None);
    doc->waitForIdle();
    QCOMPARE(int(lw.drawn(0).size()), 81);
    // A blocked key is masked for every query: no line reaches it, and its label is struck through.
    doc->toggleBlockedKey(2);
    doc->waitForIdle();
    QVERIFY(v->input().blockedKey[2]);
    for (int h = 0; h < 4; ++h)
        for (const auto& [q, k] : lw.drawn(h)) QVERIFY(k != 2);
    QCOMPARE(int(lw.drawn(0).size()), 72);
    v->grab();
    QCOMPARE(v->linesDrawn(), 4 * 72);
}

void TestMainWindow::linesCtrlClickAndWholeLayerOverlayHeads()
{
    LinesWindow lw;
    Document* doc = lw.w.document();
    HeadGridView* grid = lw.w.grid();
    QTest::mouseClick(grid, Qt::LeftButton, Qt::ControlModifier, grid->cellRect({1, 2}).center());
    QTest::mouseClick(grid, Qt::LeftButton, Qt::ControlModifier, grid->cellRect({0, 3}).center());
    QCOMPARE(doc->focus(), (HeadSelection{0, 0}));  // Ctrl-click adds; it does not move the focus
    QCOMPARE(doc->lines().heads.size(), std::size_t(2));
    LinesView* v = lw.view();
    QCOMPARE(v->input().heads.size(), std::size_t(3));
    QVERIFY(v->input().heads[0].head == (HeadSelection{0, 0}));
    // The grid marks the heads drawn, in their colours.
    QCOMPARE(grid->markedHeads().size(), std::size_t(3));
    for (std::size_t i = 0; i < 3; ++i) {
        QVERIFY(grid->markedHeads()[i].first == v->input().heads[i].head);
        QCOMPARE(grid->markedHeads()[i].second, v->input().heads[i].colour);
    }
    // One colour per head.
    QVERIFY(v->input().heads[0].colour != v->input().heads[1].colour && v->input().heads[1].colour != v->input().heads[2].colour &&
            v->input().heads[0].colour != v->input().heads[2].colour);
    // Each head's numbers are its own weights in the core.
    const ForwardTrace core = coreTrace(*doc);
    v->pin({Side::Query, 5});
    for (std::size_t i = 0; i < 3; ++i) {
        const HeadSelection h = v->input().heads[i].head;
        for (int k = 0; k <= 5; ++k) QCOMPARE(v->numberShown(int(i), k), LinesView::weightText(core.weights(h.layer, h.head)(5, k)));
    }
    // Ctrl-click again takes a head out; the whole layer's box draws every head of the focused layer.
    QTest::mouseClick(grid, Qt::LeftButton, Qt::ControlModifier, grid->cellRect({1, 2}).center());
    QCOMPARE(v->input().heads.size(), std::size_t(2));
    lw.w.lines()->wholeLayerBox()->click();
    QVERIFY(doc->lines().wholeLayer);
    QCOMPARE(v->input().heads.size(), std::size_t(4));
    QTest::mouseClick(lw.w.findChild<QPushButton*>(QStringLiteral("lines-focused-only")), Qt::LeftButton);
    QCOMPARE(v->input().heads.size(), std::size_t(1));
    // Back to the heatmap: no marks.
    doc->setAttentionPicture(AttentionPicture::Heatmap);
    QVERIFY(grid->markedHeads().empty());
}

void TestMainWindow::linesFiltersAreTheCores()
{
    LinesWindow lw;
    Document* doc = lw.w.document();
    doc->setMask(MaskKind::None);
    doc->waitForIdle();
    LinesView* v = lw.view();
    const ForwardTrace core = coreTrace(*doc);
    const Matrix& a = core.weights(0, 0);  // (T, T)
    // (pairs that differ from the core's keptLines, lines the core keeps)
    const auto compare = [&](LineFilter filter) {
        const LineMask want = keptLines(a, filter);
        int differ = 0, kept = 0;
        for (int q = 0; q < 9; ++q)
            for (int k = 0; k < 9; ++k) {
                differ += v->drawsLine(0, q, k) != bool(want(q, k));
                kept += want(q, k);
            }
        return std::pair{differ, kept};
    };
    lw.w.lines()->thresholdSlider()->setValue(15);
    QCOMPARE(doc->lines().threshold, 0.15);
    const auto [thresholdDiffers, thresholded] = compare({0.15f, 1.0f});
    QCOMPARE(thresholdDiffers, 0);
    QVERIFY(thresholded < 81 && thresholded > 0);
    lw.w.lines()->thresholdSlider()->setValue(0);
    lw.w.lines()->keepShareBox()->setValue(0.5);
    QCOMPARE(doc->lines().keepShare, 0.5);
    const auto [shareDiffers, shared] = compare({0.0f, 0.5f});
    QCOMPARE(shareDiffers, 0);
    QVERIFY(shared < 81 && shared >= 9);
    // The numbers stay whole: a filtered line's weight is still written.
    v->pin({Side::Query, 0});
    for (int k = 0; k < 9; ++k) QCOMPARE(v->numberShown(0, k), LinesView::weightText(a(0, k)));
}

void TestMainWindow::linesHideSpecialIsTheRenormalisedPicture()
{
    MainWindow w;  // the built-in model: its text begins with <bos>
    w.show();
    w.sentenceEdit()->setText(QStringLiteral("the dog chased the cat because it was hungry"));
    w.document()->waitForIdle();
    w.document()->setAttentionPicture(AttentionPicture::Lines);
    LinesView* v = w.lines()->view();
    QTRY_VERIFY(v->isVisible());
    QVERIFY(v->input().queries() > 2);
    QVERIFY(v->input().specialKey[0]);
    QVERIFY(!v->renormalised());
    w.lines()->hideSpecialBox()->click();
    QVERIFY(w.document()->lines().hideSpecial);
    QVERIFY(v->renormalised());
    const ForwardTrace core = coreTrace(*w.document());
    const HeadSelection f = w.document()->focus();
    const Matrix want = withoutKeys(core.weights(f.layer, f.head), v->input().specialKey);
    numericcheck::Worst worst;
    for (int q = 1; q < want.rows(); ++q)
        for (int k = 0; k <= q; ++k) worst.add(double(v->drawnWeight(0, q, k)), double(want(q, k)), q, k);
    QVERIFY2(worst.within(1e-6), worst.message().c_str());
    for (int q = 0; q < want.rows(); ++q) QVERIFY(!v->drawsLine(0, q, 0));
}

// Lines between words on the built-in model ("barked." and "dog," are two tokens each; <bos> is a word of its
// own): the numbers beside the keys are the rule worked here from the core's token weights, and with the
// special tokens hidden each token row is renormalised first and then merged.
void TestMainWindow::linesBetweenWordsAreTheRuleAndRenormaliseFirst()
{
    MainWindow w;
    w.show();
    w.sentenceEdit()->setText(QStringLiteral("The dog, it barked."));
    w.document()->setAttentionPicture(AttentionPicture::Lines);
    w.controls()->wordsBox()->click();
    w.document()->waitForIdle();
    LinesView* v = w.lines()->view();
    QTRY_VERIFY(v->isVisible());
    QTRY_COMPARE(v->input().queries(), 5);  // <bos> The dog, it barked.
    QCOMPARE(v->input().keyLabels.value(2), QStringLiteral("dog,"));
    QVERIFY(v->input().specialKey[0] && !v->input().specialKey[1]);
    const std::vector<int> wordOf = {0, 1, 2, 2, 3, 4, 4};  // <bos> the dog , it barked .
    const ForwardTrace core = coreTrace(*w.document());
    const HeadSelection f = w.document()->focus();
    const Matrix& a = core.weights(f.layer, f.head);
    QCOMPARE(a.rows(), Eigen::Index(wordOf.size()));
    const auto rule = [&](const Matrix& m, int i, int j) {
        double sum = 0.0;
        int queries = 0;
        for (int q = 0; q < m.rows(); ++q) {
            if (wordOf[std::size_t(q)] != i) continue;
            ++queries;
            for (int k = 0; k < m.cols(); ++k)
                if (wordOf[std::size_t(k)] == j) sum += m(q, k);
        }
        return sum / queries;
    };
    numericcheck::Worst worst;
    v->pin({Side::Query, 4});
    for (int j = 0; j < 5; ++j) {
        worst.add(double(v->drawnWeight(0, 4, j)), rule(a, 4, j), 4, j);
        QCOMPARE(v->numberShown(0, j), LinesView::weightText(float(rule(a, 4, j))));
    }
    QVERIFY2(worst.within(1e-6), worst.message("word lines").c_str());

    w.lines()->hideSpecialBox()->click();
    QTRY_VERIFY(v->renormalised());
    std::vector<bool> special(wordOf.size(), false);
    special[0] = true;
    const Matrix renormalised = withoutKeys(a, special);
    numericcheck::Worst hidden;
    for (int i = 1; i < 5; ++i)
        for (int j = 1; j <= i; ++j) hidden.add(double(v->drawnWeight(0, i, j)), rule(renormalised, i, j), i, j);
    QVERIFY2(hidden.within(1e-5), hidden.message("renormalised, then merged").c_str());
}

void TestMainWindow::linesLongInputShowsAWindowAndSaysSo()
{
    QString text;
    for (int i = 0; i < 60; ++i) text += QStringLiteral("the dog chased a cat ");  // 300 tokens
    LinesWindow lw(text);
    LinesView* v = lw.view();
    QCOMPARE(v->input().queries(), 300);
    QVERIFY(v->isWindowed());
    QVERIFY2(v->windowSentence().contains(QStringLiteral("Past 256 tokens")), qPrintable(v->windowSentence()));
    QVERIFY(v->shownQueries().count < 100);
    v->pin({Side::Query, 250});
    const TokenSpan shown = v->shownQueries();
    QVERIFY(shown.first <= 250 && 250 < shown.first + shown.count);
    QVERIFY(!v->drawsLine(0, 10, 5));  // outside the window
    QVERIFY(v->drawsLine(0, 250, 250) || v->drawnWeight(0, 250, 250) == 0.0f);
    const ForwardTrace core = coreTrace(*lw.w.document());
    const Matrix& a = core.weights(0, 0);  // (T, T)
    QCOMPARE(v->numberShown(0, 249), LinesView::weightText(a(250, 249)));
    v->grab();
    QVERIFY(v->linesDrawn() <= shown.count);
    // Short again: every token, and no sentence.
    lw.w.sentenceEdit()->setText(kSentence);
    lw.w.document()->waitForIdle();
    QVERIFY(!v->isWindowed());
    QVERIFY(v->windowSentence().isEmpty());
}

void TestMainWindow::linesOnlyFocusKeptStillDrawsTheFocusedHead()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.document()->setEveryHeadBytes(1000.0);  // a pass that keeps only the focused head, at a few tokens
    w.show();
    w.sentenceEdit()->setText(kSentence);
    w.document()->waitForIdle();
    QVERIFY(!w.document()->snapshot()->trace.keepsEveryHead());
    w.document()->setAttentionPicture(AttentionPicture::Lines);
    w.document()->setLines({{}, true, 0.0, 1.0, false});
    LinesView* v = w.lines()->view();
    QTRY_VERIFY(v->isVisible());
    QCOMPARE(v->input().heads.size(), std::size_t(1));
    QVERIFY(v->input().unavailable.isEmpty());
    QVERIFY2(!v->input().note.isEmpty(), "the heads left out are not mentioned");
    const ForwardTrace core = coreTrace(*w.document());
    const Matrix& a = core.weights(0, 0);  // (T, T)
    v->pin({Side::Query, 8});
    for (int k = 0; k < 9; ++k) QCOMPARE(v->numberShown(0, k), LinesView::weightText(a(8, k)));
}

// A picture of more strokes than a paint may draw (LinesView::kDrawNowStrokes) is blended off the GUI thread:
// the paint that asks for it shows the last whole picture, labels and lines of one input, and once blended
// the picture is the one drawn at once, line for line.
void TestMainWindow::linesLargePictureIsBlendedBesideTheWindow()
{
    LinesWindow lw;
    LinesView* v = lw.view();
    lw.w.lines()->wholeLayerBox()->click();
    QCOMPARE(v->input().heads.size(), std::size_t(4));
    const auto everyLine = [&] {
        int n = 0;
        for (int h = 0; h < 4; ++h) n += int(lw.drawn(h).size());
        return n;
    };
    const int small = everyLine();
    QVERIFY(small <= LinesView::kDrawNowStrokes);
    v->grab();
    QVERIFY(!v->pictureBusy());  // few strokes: drawn at once
    QCOMPARE(v->linesDrawn(), small);

    QString text;
    for (int i = 0; i < 12; ++i) text += QStringLiteral("the dog chased a cat ");  // 60 tokens
    lw.w.sentenceEdit()->setText(text.trimmed());
    lw.w.document()->waitForIdle();
    QCOMPARE(v->input().queries(), 60);
    QVERIFY(!v->isWindowed());
    const int large = everyLine();
    QVERIFY2(large > LinesView::kDrawNowStrokes, qPrintable(QString::number(large)));
    v->grab();
    QVERIFY(v->pictureBusy());
    QCOMPARE(v->linesDrawn(), small);  // the last picture meanwhile
    v->waitForPicture();
    QVERIFY(!v->pictureBusy());
    const QImage blended = v->grab().toImage().convertToFormat(QImage::Format_ARGB32);
    QCOMPARE(v->linesDrawn(), large);

    // The same picture drawn at once (the exporters' path): the same strokes blended on the same white.
    QImage direct(blended.size(), QImage::Format_ARGB32_Premultiplied);
    {
        QPainter painter(&direct);
        v->paintLines(painter);
    }
    direct = direct.convertToFormat(QImage::Format_ARGB32);
    QCOMPARE(v->linesDrawn(), large);
    int worst = 0;
    qint64 inked = 0;
    for (int y = 0; y < blended.height(); ++y)
        for (int x = 0; x < blended.width(); ++x) {
            const QRgb a = blended.pixel(x, y), b = direct.pixel(x, y);
            worst = std::max({worst, std::abs(qRed(a) - qRed(b)), std::abs(qGreen(a) - qGreen(b)), std::abs(qBlue(a) - qBlue(b))});
            inked += a != qRgb(255, 255, 255);
        }
    QVERIFY2(inked > blended.width() * blended.height() / 4, qPrintable(QString::number(inked)));  // lines were drawn
    QCOMPARE(worst, 0);
}
