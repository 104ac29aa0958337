// The sentence box under long, hostile and over-long text: the window cuts, refuses or offers to keep what
// fits, says so in a sentence, and never shows a number the core did not compute.
#include "tst_mainwindow.h"

void TestMainWindow::thousandTokensDoNotCrash()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.show();
    QStringList words;
    for (int i = 0; i < 1000; ++i) words << QStringLiteral("w%1").arg(i % 37);
    // Pasted at once, a text this long goes straight to the worker thread: wait for its result.
    w.sentenceEdit()->setText(words.join(QLatin1Char(' ')));
    QTRY_COMPARE_WITH_TIMEOUT(w.heatmap()->tokenCount(), 1000, testing::kWorkTimeoutMs);
    QVERIFY(w.document()->error().isEmpty());
    QVERIFY(w.heatmap()->labelStep() > 1);  // labels thin out
    QCOMPARE(w.tokenChips()->chipCount(), 1000);
    const numericcheck::Worst worst = worstDifference(*w.heatmap(), coreTrace(*w.document()), w.document()->focus());
    QVERIFY2(worst.within(1e-6), worst.message().c_str());
    QVERIFY(!w.grid()->headImage({0, 0}).isNull());
    w.heatmap()->replot();
    QVERIFY(!w.grab().isNull());
    // At this length further typing computes on the worker; the result is still the core's.
    QVERIFY(w.document()->isAsync());
    QTest::keyClicks(w.sentenceEdit(), QStringLiteral(" w5"));
    // "... w" arrives first when the worker was still busy; wait for the last keystroke's result.
    QTRY_COMPARE_WITH_TIMEOUT(w.tokenChips()->chipText(1000), QStringLiteral("w5"), testing::kWorkTimeoutMs);
    QCOMPARE(w.heatmap()->tokenCount(), 1001);
    const numericcheck::Worst after = worstDifference(*w.heatmap(), coreTrace(*w.document()), w.document()->focus());
    QVERIFY2(after.within(1e-6), after.message().c_str());
}

void TestMainWindow::tooLongInputShowsErrorNotNumbers()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.show();
    QVERIFY(w.openModel(QStringLiteral("random:layers=1,heads=2,d_model=16,context=8,seed=3")).ok());
    w.sentenceEdit()->setText(kSentence);  // 9 tokens into a context of 8
    QVERIFY(!w.document()->error().isEmpty());
    QVERIFY(w.errorLabel()->isVisibleTo(&w));
    QVERIFY(w.errorLabel()->text().contains(QStringLiteral("context")));
    QCOMPARE(w.heatmap()->tokenCount(), 0);
    QVERIFY(!w.statusLabel()->text().contains(QStringLiteral("nan"), Qt::CaseInsensitive));
    // The offer to truncate keeps exactly the first 8 tokens, as a prefix of what was typed.
    QVERIFY(w.truncateButton()->isVisibleTo(&w));
    QCOMPARE(w.document()->tokensOverContext(), 1);
    QTest::mouseClick(w.truncateButton(), Qt::LeftButton);
    QVERIFY(w.document()->error().isEmpty());
    QVERIFY(kSentence.startsWith(w.sentenceEdit()->text()));
    QCOMPARE(w.tokenChips()->chipCount(), 8);
    QCOMPARE(w.heatmap()->tokenCount(), 8);
    QVERIFY(!w.truncateButton()->isVisibleTo(&w));
    w.sentenceEdit()->setText(QStringLiteral("a short one"));
    QVERIFY(w.document()->error().isEmpty());
    QVERIFY(!w.errorLabel()->isVisibleTo(&w));
    QVERIFY(!w.openModel(QStringLiteral("no-such-model")).ok());
}

// The token limit (Model > Token Limit…) below the model's context: the banner names both lengths and
// the offer to truncate keeps exactly the limit.
void TestMainWindow::tokenLimitBelowContextOffersToKeepWhatFits()
{
    MainWindow w;
    w.show();
    QVERIFY(w.openModel(QStringLiteral("random:layers=1,heads=2,d_model=16,context=8,seed=3")).ok());
    AttentionSettings s = w.document()->settings();
    s.tokenLimit = 4;
    w.document()->setSettings(s);
    w.sentenceEdit()->setText(QStringLiteral("one two three four five six"));
    QVERIFY(w.errorLabel()->isVisibleTo(&w));
    const QString banner = w.errorLabel()->text();
    QVERIFY2(banner.contains(QStringLiteral("6 tokens")) && banner.contains(QStringLiteral("token limit is 4")) &&
                 banner.contains(QStringLiteral("context is 8")),
             qPrintable(banner));
    QCOMPARE(w.heatmap()->tokenCount(), 0);
    QCOMPARE(w.truncateButton()->text(), QStringLiteral("Keep the first 4 tokens"));
    QTest::mouseClick(w.truncateButton(), Qt::LeftButton);
    QVERIFY(w.document()->error().isEmpty());
    QVERIFY2(w.sentenceEdit()->text().startsWith(QStringLiteral("one two three four")), qPrintable(w.sentenceEdit()->text()));
    QCOMPARE(w.tokenChips()->chipCount(), 4);
    QCOMPARE(w.heatmap()->tokenCount(), 4);
}

// The hostile-text matrix as a paste would bring it (QString::fromUtf8 turns invalid bytes into U+FFFD),
// plus a lone UTF-16 surrogate that only a QString can hold: each ends drawn or refused with a banner,
// never with numbers next to an error.
void TestMainWindow::hostileTextNeverCrashesTheWindow()
{
    MainWindow w;
    w.show();
    QStringList texts;
    for (const hostiletext::Row& r : hostiletext::rows()) texts << QString::fromUtf8(r.bytes.data(), qsizetype(r.bytes.size()));
    texts << (QStringLiteral("abc ") + QChar(0xD800) + QStringLiteral(" def"));
    for (const QString& text : texts) {
        w.document()->setText(text);
        w.document()->waitForIdle();
        QCoreApplication::processEvents();
        const int drawn = w.heatmap()->tokenCount();
        w.grab();  // paint everything now
        // 500,000 tokens or a one-megabyte token must not grow the chips past what a widget can paint.
        QVERIFY(w.tokenChips()->chipCount() <= 65537);
        QVERIFY(w.tokenChips()->height() < 100'000);
        for (int i = 0; i < w.tokenChips()->chipCount(); i += 997) QVERIFY(w.tokenChips()->chipRect(i).width() < 1000);
        if (w.document()->error().isEmpty()) {
            QCOMPARE(drawn, w.tokenChips()->chipCount());
        } else {
            QVERIFY(w.errorLabel()->isVisibleTo(&w));
            QCOMPARE(drawn, 0);
        }
    }
}

void TestMainWindow::longRunsOfCombiningMarksAreCut()
{
    const QChar acute(0x0301);                                 // combining acute accent (Mn)
    const QString smpMark = QString::fromUcs4(U"\U0001D167");  // combining musical tremolo (Mn), a surrogate pair
    qsizetype cut = -1;

    // Text without a long run comes back unchanged, and nothing is counted.
    const QString plain = QStringLiteral("caf") + QChar(0x0065) + acute + QStringLiteral(" na") + QChar(0x0131) + acute + acute;
    QCOMPARE(capCombiningMarks(plain, 30, &cut), plain);
    QCOMPARE(cut, qsizetype(0));

    // One letter with 100 marks keeps its first 30; the next word is untouched.
    const QString zalgo = QStringLiteral("e") + QString(100, acute) + QStringLiteral(" x");
    QCOMPARE(capCombiningMarks(zalgo, 30, &cut), QStringLiteral("e") + QString(30, acute) + QStringLiteral(" x"));
    QCOMPARE(cut, qsizetype(70));

    // Two runs are counted apart: a base letter ends a run.
    const QString two = QStringLiteral("a") + QString(5, acute) + QStringLiteral("b") + QString(8, acute);
    QCOMPARE(capCombiningMarks(two, 6, &cut), QStringLiteral("a") + QString(5, acute) + QStringLiteral("b") + QString(6, acute));
    QCOMPARE(cut, qsizetype(2));

    // A mark outside the BMP counts once and is never split from its other half.
    QString smp = QStringLiteral("o");
    for (int i = 0; i < 4; ++i) smp += smpMark;
    QString smpKept = QStringLiteral("o");
    for (int i = 0; i < 3; ++i) smpKept += smpMark;
    QCOMPARE(capCombiningMarks(smp, 3, &cut), smpKept);
    QCOMPARE(cut, qsizetype(1));

    // A lone high surrogate is not a mark and is kept as it is.
    const QString lone = QStringLiteral("a") + QChar(0xD800) + QString(3, acute);
    QCOMPARE(capCombiningMarks(lone, 2, &cut), QStringLiteral("a") + QChar(0xD800) + QString(2, acute));
    QCOMPARE(cut, qsizetype(1));
}

void TestMainWindow::theSentenceBoxCutsMarksFromEveryPath()
{
    MainWindow w;
    w.show();
    const QChar acute(0x0301);
    const QString expected = QStringLiteral("the e") + QString(SentenceValidator::kMaxMarks, acute) + QStringLiteral(" dog");
    const QString pasted = QStringLiteral("the e") + QString(10'000, acute) + QStringLiteral(" dog");

    // Pasted into the box, as a person does.
    w.sentenceEdit()->selectAll();
    w.sentenceEdit()->insert(pasted);
    QCOMPARE(w.sentenceEdit()->text(), expected);
    QCOMPARE(w.document()->text(), expected);
    QVERIFY(w.noticeLabel()->isVisibleTo(&w));
    QVERIFY2(w.noticeLabel()->text().contains(QStringLiteral("9970 combining marks")), qPrintable(w.noticeLabel()->text()));

    // Set on the document (a scene, a restored window, a lesson): the box cuts it and the document follows.
    w.document()->setText(QStringLiteral("x"));
    w.document()->setText(pasted);
    QCOMPARE(w.sentenceEdit()->text(), expected);
    QCOMPARE(w.document()->text(), expected);
    w.document()->waitForIdle();
    QVERIFY(w.document()->error().isEmpty());
}
