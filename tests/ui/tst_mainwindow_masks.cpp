// The sparse pattern controls: each pattern and its numbers picked in the Mask group reach the document,
// the heatmap greys exactly the pairs worked out by hand, its numbers are the core's, a bad global list is
// refused with the parser's sentence, and a pattern runs inside the model's own (causal) mask.
#include "tst_mainwindow.h"

#include <QLineEdit>

#include "ui/lab/compareview.h"

namespace {

// Whether the heatmap hides exactly the pairs `hidden` names, for the 9 tokens of kSentence.
template <class Hidden>
QString firstWrongCell(const HeatmapView& map, Hidden hidden)
{
    for (int q = 0; q < 9; ++q)
        for (int k = 0; k < 9; ++k)
            if (map.isMaskedCell(q, k) != hidden(q, k) || (hidden(q, k) && map.cellValue(q, k) != 0.0))
                return QStringLiteral("query %1, key %2").arg(q).arg(k);
    return {};
}

} // namespace

void TestMainWindow::sparsePatternControlsHideTheKeysTheySay()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.show();
    w.sentenceEdit()->setText(kSentence);
    ControlPanel* c = w.controls();
    const HeatmapView& map = *w.heatmap();
    const auto pick = [c](PatternKind kind) { c->patternBox()->setCurrentIndex(c->patternBox()->findData(int(kind))); };

    // Blocks of 3 (by hand: query q sees keys from its block's start, q - q % 3, up to itself).
    pick(PatternKind::Block);
    QCOMPARE(w.document()->settings().sparse.block, 16);  // the starting number
    c->patternFirstBox()->setValue(3);
    QCOMPARE(w.document()->settings().sparse.kind, PatternKind::Block);
    QCOMPARE(w.document()->settings().sparse.block, 3);
    QCOMPARE(firstWrongCell(map, [](int q, int k) { return k > q || k < q - q % 3; }), QString());
    numericcheck::Worst worst = worstDifference(map, coreTrace(*w.document()), w.document()->focus());
    QVERIFY2(worst.within(1e-6), worst.message().c_str());
    QVERIFY(!c->causalBox()->isEnabled() && !c->windowBox()->isEnabled());
    QVERIFY2(c->maskNote()->text().contains(QStringLiteral("blocks of 3")), qPrintable(c->maskNote()->text()));

    // Global position 1 with a window of 2 (by hand: key 1, query 1 sees all before it, and q - 1, q).
    pick(PatternKind::Global);
    c->globalsEdit()->setText(QStringLiteral("1"));
    emit c->globalsEdit()->editingFinished();
    c->patternFirstBox()->setValue(2);
    QCOMPARE(QString::fromStdString(formatMask(maskSetting(w.document()->settings()))), QStringLiteral("global:1;window:2"));
    QCOMPARE(firstWrongCell(map, [](int q, int k) { return k > q || !(k == 1 || q == 1 || q - k < 2); }), QString());
    // A bad list keeps the settings and says why.
    c->globalsEdit()->setText(QStringLiteral("1,x"));
    emit c->globalsEdit()->editingFinished();
    QVERIFY2(c->maskNote()->text().contains(QStringLiteral("'x' is not one")), qPrintable(c->maskNote()->text()));
    QCOMPARE(w.document()->settings().sparse.globals, std::vector<int>{1});

    // Dilated: 3 keys 2 apart (q, q - 2, q - 4).
    pick(PatternKind::Dilated);
    c->patternFirstBox()->setValue(3);
    c->patternSecondBox()->setValue(2);
    QCOMPARE(firstWrongCell(map, [](int q, int k) { return k > q || (q - k) % 2 != 0 || q - k > 4; }), QString());

    // Random: 2 other keys a query (fewer where fewer come before it), drawn from seed 5.
    pick(PatternKind::Random);
    c->patternFirstBox()->setValue(2);
    c->patternSecondBox()->setValue(5);
    QCOMPARE(w.document()->settings().sparse.seed, 5u);
    for (int q = 0; q < 9; ++q) {
        int seen = 0;
        for (int k = 0; k < 9; ++k) seen += map.isMaskedCell(q, k) ? 0 : 1;
        QCOMPARE(seen, 1 + std::min(q, 2));
        QVERIFY(!map.isMaskedCell(q, q));
    }
    worst = worstDifference(map, coreTrace(*w.document()), w.document()->focus());
    QVERIFY2(worst.within(1e-6), worst.message().c_str());

    // Back to the window: no pattern, the causal box and the window box work again.
    pick(PatternKind::None);
    QVERIFY(!w.document()->settings().sparse.active());
    QVERIFY(c->causalBox()->isEnabled() && c->windowBox()->isEnabled());
    QVERIFY(!map.isMaskedCell(8, 0));
}

// Settings that arrive whole (a scene, a lesson) with a pattern take the model's own mask, whatever mask they
// name; and Compare's B under the other mask shows that mask plain, so the decoder's pattern never turns
// two-sided.
void TestMainWindow::sparsePatternFollowsTheModelsMask()
{
    Document doc;
    attnscope::testing::useRandomModel(doc);  // a decoder
    doc.setText(kSentence);
    AttentionSettings s;
    s.mask = MaskKind::None;
    applyMask(s, *parseMaskSetting("block:3"));
    doc.setSettings(s);
    QVERIFY(doc.settings().mask == MaskKind::Causal);
    QCOMPARE(doc.settings().sparse.block, 3);
    doc.setMask(MaskKind::None);  // the causal box rests under a pattern; asked anyway, the mask stays the model's
    QVERIFY(doc.settings().mask == MaskKind::Causal);

    CompareView compare(&doc);
    CompareBSettings b = doc.compareB();
    b.mask = MaskKind::Causal;
    doc.setCompareB(b);
    QVERIFY(compare.bSettings().sparse == doc.settings().sparse);  // B under A's mask keeps the pattern
    b.mask = MaskKind::None;
    doc.setCompareB(b);
    QVERIFY(!compare.bSettings().sparse.active() && compare.bSettings().mask == MaskKind::None);
}
