// The Document's passes reuse the unchanged prefix (model/prefixreuse.h): typing word by word at the end, on
// the GUI thread and on the worker, each snapshot after the first reuses the tokens before the new word, and
// every number it holds (every head's weights, the focused head's scores and weights, the next tokens) is a
// fresh pass's. A setting changed, a word deleted and an edit at the start behave as prefix reuse says.
#include <QtTest>

#include <cmath>

#include "numericcheck.h"
#include "ui/document/document.h"
#include "waits.h"

using namespace attnscope;

namespace {

// The snapshot on screen against a pass that reuses nothing, on the same input: every head's weights, the
// focused head's scores (masked ones are -inf on both sides) and weights, and the next tokens.
numericcheck::Worst differenceFromAFreshPass(const Document& doc)
{
    const SnapshotPtr shown = doc.snapshot();
    const SnapshotPtr fresh = computeSnapshot(doc.model(), doc.text(), doc.settings(), doc.focus(), 0, doc.attentionDisplay()).first;
    numericcheck::Worst worst;
    worst.matchInfinities();
    if (shown->tokens.ids != fresh->tokens.ids) worst.fail("the tokens differ");
    if (shown->trace.attention.size() != fresh->trace.attention.size()) worst.fail("the numbers of heads differ");
    if (shown->nextTokens.size() != fresh->nextTokens.size()) worst.fail("the numbers of next tokens differ");
    if (!worst.finite()) return worst;
    for (std::size_t i = 0; i < fresh->trace.attention.size(); ++i) {
        worst.label("weights %zu", i);
        worst.add(shown->trace.attention[i], fresh->trace.attention[i]);
    }
    worst.label("the focused head's scores");
    worst.add(shown->trace.detail.scores, fresh->trace.detail.scores);
    worst.label("the focused head's weights");
    worst.add(shown->trace.detail.weights, fresh->trace.detail.weights);
    worst.label("next token");
    for (std::size_t i = 0; i < fresh->nextTokens.size(); ++i) {
        if (shown->nextTokens[i].id != fresh->nextTokens[i].id) worst.fail("the next tokens' ids differ");
        worst.add(shown->nextTokens[i].p, fresh->nextTokens[i].p, long(i));
    }
    return worst;
}

// Makes one change and waits for its snapshot. On the signal, not waitForIdle(): a wait on work that has not
// started runs it on the waiting thread, so the passes would hop between the two threads' caches.
template <class Change>
bool changeAndWait(Document& doc, Change&& change)
{
    QSignalSpy shown(&doc, &Document::snapshotChanged);
    change();
    return !shown.isEmpty() || shown.wait(testing::kWorkTimeoutMs);
}

// The Document computing on its worker whatever the size, on the model `spec` opens, its snapshot shown.
bool openOnTheWorker(Document& doc, const QString& spec)
{
    doc.setForceAsync(true);
    Result<ModelPtr> model = loadModelSpec(spec);
    return model && changeAndWait(doc, [&] { doc.setModel(*model, spec); });
}

} // namespace

class TestDocumentReuse : public QObject {
    Q_OBJECT
private slots:
    void typingAtTheEndReusesThePrefix_data()
    {
        QTest::addColumn<bool>("async");
        QTest::newRow("GUI thread") << false;
        QTest::newRow("worker thread") << true;
    }
    void typingAtTheEndReusesThePrefix()
    {
        QFETCH(bool, async);
        Document doc;  // the built-in model, a decoder
        doc.setForceAsync(async);
        const QStringList words = QStringLiteral("the small cat sat on the warm mat and the old dog watched the bird").split(' ');
        QString text;
        int reusing = 0;
        doc.waitForIdle();  // the constructor's pass (on this thread: nothing was submitted yet)
        std::size_t before = doc.snapshot()->tokens.ids.size();  // tokens of the text before the word (<bos> alone at first)
        for (const QString& word : words) {
            text += (text.isEmpty() ? QString() : QStringLiteral(" ")) + word;
            QVERIFY(changeAndWait(doc, [&] { doc.setText(text); }));
            const numericcheck::Worst worst = differenceFromAFreshPass(doc);
            QVERIFY2(worst.within(1e-4), qPrintable(QStringLiteral("after '%1': %2").arg(text, QString::fromStdString(worst.message()))));
            if (doc.snapshot()->reusedTokens > 0) {
                QVERIFY2(doc.snapshot()->reusedTokens == int(before), qPrintable(QStringLiteral("after %1: %2 reused of %3 before, %4 now").arg(text).arg(doc.snapshot()->reusedTokens).arg(before).arg(doc.snapshot()->tokens.ids.size())));  // every token before the new word
                ++reusing;
            }
            before = doc.snapshot()->tokens.ids.size();
        }
        QVERIFY2(reusing >= int(words.size()) - 1, qPrintable(QString::number(reusing)));  // at least all but the first word

        // Edits that keep the length: each pass fills the trace of the snapshot released two passes before,
        // whose zeros above the diagonal it keeps (model/prefixreuse.h), and which holds another text's
        // weights in the rows the pass carries (the third pass takes the first's: "dog" was "cat" there).
        const QString swapped = text.left(text.size() - words.last().size()) + QStringLiteral("fish");
        const QString earlier = QString(text).replace(QStringLiteral("old dog"), QStringLiteral("old cat"));
        for (const QString& next : {earlier, text, swapped, text, swapped}) {
            QVERIFY(changeAndWait(doc, [&] { doc.setText(next); }));
            QCOMPARE(doc.snapshot()->tokens.ids.size(), before);
            QVERIFY(doc.snapshot()->reusedTokens > 0);
            const numericcheck::Worst worst = differenceFromAFreshPass(doc);
            QVERIFY2(worst.within(1e-4), worst.message().c_str());
        }

        QVERIFY(changeAndWait(doc, [&] { doc.setTemperature(0.5); }));  // every row changes
        QCOMPARE(doc.snapshot()->reusedTokens, 0);
        const numericcheck::Worst afterTemperature = differenceFromAFreshPass(doc);
        QVERIFY2(afterTemperature.within(1e-4), afterTemperature.message().c_str());

        text.chop(words.last().size() + 1);  // a word deleted at the end
        QVERIFY(changeAndWait(doc, [&] { doc.setText(text); }));
        QCOMPARE(doc.snapshot()->reusedTokens, int(doc.snapshot()->tokens.ids.size()) - 1);
        const numericcheck::Worst afterDeletion = differenceFromAFreshPass(doc);
        QVERIFY2(afterDeletion.within(1e-4), afterDeletion.message().c_str());

        text.replace(0, 3, QStringLiteral("a"));  // the first word changed
        QVERIFY(changeAndWait(doc, [&] { doc.setText(text); }));
        QCOMPARE(doc.snapshot()->reusedTokens, 0);
        const numericcheck::Worst afterFirstWord = differenceFromAFreshPass(doc);
        QVERIFY2(afterFirstWord.within(1e-4), afterFirstWord.message().c_str());
    }

    // A pasted long text's pass is followed by a warm-up of the memory the next keystroke's trace will take
    // (Document::warmUpAfter): once per paste, not per keystroke, and stopped by the next request, whose
    // result is still a fresh pass's. The warm-up's effect on page faults is tst_allocation's.
    void aPastedLongTextWarmsTheNextPassesMemory()
    {
        Document doc;
        // 16 heads and the focused head's 4 matrices of about 1,000 tokens: 80 MB, past the 64 MB worth warming.
        QVERIFY(openOnTheWorker(doc, QStringLiteral("random:layers=4,heads=4,d_model=32,context=2048,seed=3")));
        QVERIFY(changeAndWait(doc, [&] { doc.setText(QStringLiteral("a short start")); }));
        QCOMPARE(doc.memoryWarmUps(), 0);  // a few tokens: nothing worth it

        QStringList words;
        for (int i = 0; i < 1000; ++i) words << QStringLiteral("w%1").arg(i % 37);
        QString text = words.join(' ');
        QVERIFY(changeAndWait(doc, [&] { doc.setText(text); }));
        QVERIFY(doc.snapshot()->tokens.ids.size() >= 1000);
        QCOMPARE(doc.memoryWarmUps(), 1);

        for (const char* word : {" next", " and", " more"}) {  // keystrokes right after it: the warm-up gives way
            text += QLatin1String(word);
            QVERIFY(changeAndWait(doc, [&] { doc.setText(text); }));
            QVERIFY(doc.snapshot()->reusedTokens > 0);
            const numericcheck::Worst worst = differenceFromAFreshPass(doc);
            QVERIFY2(worst.within(1e-4), worst.message().c_str());
        }
        QCOMPARE(doc.memoryWarmUps(), 1);  // a trace a token larger is not a new size

        QVERIFY(changeAndWait(doc, [&] { doc.setText(text + QStringLiteral(" ") + text); }));  // a second paste
        QCOMPARE(doc.memoryWarmUps(), 2);
    }  // the Document goes while that warm-up may still run: it stops it

    // A request that changes more than the text makes a whole pass anyway: the whole pass running before it
    // stops at its next head or layer and is never shown (not even its empty trace or an error), and what
    // is shown is a fresh pass's. Typing stops nothing: each pass is what the next one reuses.
    void aChangedSettingStopsTheWholePassBeforeIt()
    {
        Document doc;
        QVERIFY(openOnTheWorker(doc, QStringLiteral("random:layers=4,heads=4,d_model=64,context=4096,seed=3")));
        QStringList words;
        for (int i = 0; i < 2000; ++i) words << QStringLiteral("w%1").arg(i % 41);
        const QString text = words.join(' ');

        QSignalSpy shown(&doc, &Document::snapshotChanged);
        QSignalSpy errors(&doc, &Document::errorChanged);
        doc.setText(text);  // a whole pass over 2,000 tokens starts on the worker...
        AttentionSettings warmer = doc.settings();
        warmer.temperature = 0.7;
        doc.setSettings(warmer);  // ...and a setting changes while it runs
        QTRY_VERIFY_WITH_TIMEOUT(!doc.isComputing(), testing::kWorkTimeoutMs);
        QCOMPARE(doc.stoppedPasses(), 1);
        QCOMPARE(shown.count(), 1);
        QCOMPARE(errors.count(), 0);
        QCOMPARE(doc.snapshot()->settings.temperature, 0.7);
        QCOMPARE(int(doc.snapshot()->tokens.ids.size()), 2000);
        numericcheck::Worst worst = differenceFromAFreshPass(doc);
        QVERIFY2(worst.within(1e-4), worst.message().c_str());

        doc.setText(text + QStringLiteral(" w1"));
        doc.setText(text + QStringLiteral(" w1 w2"));
        QTRY_VERIFY_WITH_TIMEOUT(!doc.isComputing(), testing::kWorkTimeoutMs);
        QCOMPARE(doc.stoppedPasses(), 1);
        QVERIFY(doc.snapshot()->reusedTokens > 0);
        worst = differenceFromAFreshPass(doc);
        QVERIFY2(worst.within(1e-4), worst.message().c_str());
    }
};

QTEST_GUILESS_MAIN(TestDocumentReuse)
#include "tst_documentreuse.moc"
