// The window with the recurrent model builtin-rnn open: its next-token list against a top-k of runRecurrent's
// last logits made here by plain loops; every view of attention gives the one sentence instead (and nothing
// on screen says NaN); typing updates the list; opening the built-in transformer again brings the heatmap
// back with the core's weights.
#include <QAction>
#include <QLabel>
#include <QSignalSpy>
#include <QRegularExpression>
#include <QLineEdit>
#include <QStandardPaths>
#include <QStatusBar>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <numeric>

#include "numericcheck.h"
#include "core/model/forward.h"
#include "core/open/openmodel.h"
#include "ui/attention/headgridview.h"
#include "ui/attention/heatmapview.h"
#include "ui/attention/nexttokenview.h"
#include "ui/document/noattentionpage.h"
#include "ui/export/renderer.h"
#include "ui/window/mainwindow.h"
#include "ui/window/tokenchips.h"
#include "waits.h"

using namespace attnscope;

namespace {

struct Expected {
    std::vector<int> ids;     // the k most probable, most probable first (ties: lower id)
    std::vector<double> p;    // their softmax probabilities over the whole vocabulary
};

// The GRU's prediction after the last token, independently of the window: the model's own pass, then a
// softmax in double precision by plain loops and a full sort.
Expected expectedNextTokens(const QString& text, int k)
{
    const RecurrentModelPtr model = *loadRecurrentModelSpec("builtin-rnn");
    const Result<TokenizedText> tokens = model->tokenizer->encode(text.toStdString());
    const Result<RecurrentTrace> run = runRecurrent(*model, tokens->ids);
    const int V = int(run->logits.cols());
    const int last = run->tokens - 1;
    double top = -INFINITY;
    for (int v = 0; v < V; ++v) top = std::max(top, double(run->logits(last, v)));
    std::vector<double> p(std::size_t(V), 0.0);
    double sum = 0.0;
    for (int v = 0; v < V; ++v) sum += p[std::size_t(v)] = std::exp(double(run->logits(last, v)) - top);
    for (double& x : p) x /= sum;
    std::vector<int> order(static_cast<std::size_t>(V));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return p[std::size_t(a)] > p[std::size_t(b)]; });
    Expected e;
    for (int i = 0; i < k; ++i) {
        e.ids.push_back(order[std::size_t(i)]);
        e.p.push_back(p[std::size_t(order[std::size_t(i)])]);
    }
    return e;
}

// Fails with the first row that differs.
QString compareShown(const NextTokenView& view, const Expected& e)
{
    const std::vector<NextToken>& shown = view.shown();
    if (shown.size() != e.ids.size()) return QStringLiteral("%1 next tokens shown, %2 expected").arg(shown.size()).arg(e.ids.size());
    numericcheck::Worst worst;  // a NaN fails it
    for (std::size_t i = 0; i < shown.size(); ++i) {
        if (shown[i].id != e.ids[i]) return QStringLiteral("row %1 shows id %2, expected %3").arg(i).arg(shown[i].id).arg(e.ids[i]);
        worst.add(shown[i].p, e.p[i], long(i));
    }
    if (!worst.within(1e-5)) return QString::fromStdString(worst.message("probability"));
    return {};
}

// Every label and the status line the person can see, for a word "nan" or "inf".
QString nonFiniteOnScreen(const MainWindow& w)
{
    static const QRegularExpression nonFinite(QStringLiteral("\\b(nan|inf)\\b"), QRegularExpression::CaseInsensitiveOption);
    for (const QLabel* label : w.findChildren<QLabel*>())
        if (label->isVisible() && nonFinite.match(label->text()).hasMatch()) return label->text();
    return {};
}

// What the status bar says (its labels' texts).
QString statusText(const MainWindow& w)
{
    QStringList texts;
    for (const QLabel* label : w.statusBar()->findChildren<QLabel*>()) texts << label->text();
    return texts.join(QLatin1Char('\n'));
}

} // namespace

class TestRecurrentWindow : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
    void nextTokensAreTheGrusAndFollowTyping();
    void everyViewOfAttentionGivesTheSentence();
    void theTransformerComesBackWithItsHeatmap();
};

void TestRecurrentWindow::nextTokensAreTheGrusAndFollowTyping()
{
    MainWindow w;
    QVERIFY2(w.openModel(QStringLiteral("builtin-rnn")).ok(), "the window does not open builtin-rnn");
    QVERIFY(w.document()->recurrentModel());
    QCOMPARE(w.document()->modelSpec(), QStringLiteral("builtin-rnn"));
    for (const QString& text : {QStringLiteral("the dog sat on the rug because it"), QStringLiteral("the cat sat on the mat and")}) {
        w.sentenceEdit()->setText(text);
        w.document()->waitForIdle();
        QVERIFY2(w.document()->error().isEmpty(), qPrintable(w.document()->error()));
        const QString differs = compareShown(*w.nextTokens(), expectedNextTokens(text, Snapshot::kNextTokens));
        QVERIFY2(differs.isEmpty(), qPrintable(text + QStringLiteral(": ") + differs));
        const Result<TokenizedText> tokens = (*loadRecurrentModelSpec("builtin-rnn"))->tokenizer->encode(text.toStdString());
        QCOMPARE(w.tokenChips()->chipCount(), int(tokens->ids.size()));
    }
    // The two sentences predict different things, so the list really followed the typing.
    QVERIFY(expectedNextTokens(QStringLiteral("the dog sat on the rug because it"), 1).ids !=
            expectedNextTokens(QStringLiteral("the cat sat on the mat and"), 1).ids);
}

void TestRecurrentWindow::everyViewOfAttentionGivesTheSentence()
{
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openModel(QStringLiteral("builtin-rnn")).ok());
    w.document()->waitForIdle();
    const QString sentence = QString::fromStdString(noAttentionSentence("builtin-rnn"));
    // One gated page per registered page of attention, and one for the Attention tab's focused head.
    int expected = 1;
    for (const ViewEntry& entry : allViews()) expected += entry.page && !entry.withoutAttention ? 1 : 0;
    const QList<NoAttentionPage*> gates = w.findChildren<NoAttentionPage*>();
    QCOMPARE(int(gates.size()), expected);
    for (const NoAttentionPage* gate : gates) {
        QVERIFY(gate->showsSentence());
        QCOMPARE(gate->sentence(), sentence);
    }
    QVERIFY(!w.heatmap()->isVisibleTo(&w));
    QVERIFY(!w.grid()->isVisibleTo(&w));
    QVERIFY(w.nextTokens()->isVisibleTo(&w));
    QVERIFY2(statusText(w).contains(QStringLiteral("builtin-rnn (a GRU")), qPrintable(statusText(w)));
    // Every place a person can go, while typing: no crash, and nothing on screen says NaN.
    for (const TabPage& page : w.document()->pages()) {
        const QStringList views = page.views.isEmpty() ? QStringList{QString()} : page.views;
        for (const QString& view : views) {
            if (view == QStringLiteral("why-attention")) continue;  // it runs both models itself (tst_whyattention)
            QVERIFY(w.document()->setPlace(page.name, view));
            w.sentenceEdit()->setText(QStringLiteral("the dog sat on the rug because ") + page.name + view);
            w.document()->waitForIdle();
            QCoreApplication::processEvents();
            const QString bad = nonFiniteOnScreen(w);
            QVERIFY2(bad.isEmpty(), qPrintable(page.name + QLatin1Char('/') + view + QStringLiteral(": ") + bad));
            QCOMPARE(int(w.nextTokens()->shown().size()), Snapshot::kNextTokens);
        }
    }
    // What keys, lessons and scenes still change while the controls are greyed: no crash, and the GRU's
    // prediction stays its own (attention settings mean nothing to it).
    const QString text = QStringLiteral("the dog sat on the rug because it");
    w.sentenceEdit()->setText(text);
    QVERIFY(w.document()->setPlace(QStringLiteral("attention")));
    QTest::keyClick(&w, Qt::Key_Down);
    QTest::keyClick(&w, Qt::Key_Right);
    w.document()->setMask(MaskKind::None);
    w.document()->setTemperature(3.0);
    w.document()->setWordLevel(true);
    w.document()->setAttentionDisplay(AttentionDisplay::ValueWeighted);
    w.document()->setAttentionPicture(AttentionPicture::Lines);
    w.document()->waitForIdle();
    QCoreApplication::processEvents();
    const QString differs = compareShown(*w.nextTokens(), expectedNextTokens(text, Snapshot::kNextTokens));
    QVERIFY2(differs.isEmpty(), qPrintable(differs));
    QVERIFY(nonFiniteOnScreen(w).isEmpty());
}

void TestRecurrentWindow::theTransformerComesBackWithItsHeatmap()
{
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.sentenceEdit()->setText(QStringLiteral("the dog sat on the rug because it"));
    // From the Model menu, as a person opens it.
    QAction* entry = w.findChild<QAction*>(QStringLiteral("open-builtin-rnn"));
    QVERIFY(entry);
    QSignalSpy opened(&w, &MainWindow::modelOpenFinished);
    entry->trigger();
    QVERIFY(opened.wait(testing::kWorkTimeoutMs));
    QCOMPARE(opened.at(0).at(1).toBool(), true);
    w.document()->waitForIdle();
    QVERIFY(w.document()->recurrentModel());
    QVERIFY(!w.heatmap()->isVisibleTo(&w));
    QVERIFY(w.openModel(QStringLiteral("builtin")).ok());
    w.document()->waitForIdle();
    QVERIFY(!w.document()->recurrentModel());
    QVERIFY(w.heatmap()->isVisibleTo(&w));
    QVERIFY(w.grid()->isVisibleTo(&w));
    for (const NoAttentionPage* gate : w.findChildren<NoAttentionPage*>()) QVERIFY(!gate->showsSentence());
    // The heatmap shows the core's weights of the focused head for the builtin model again.
    const Document& doc = *w.document();
    const Result<TokenizedText> tokens = doc.model()->tokenizer->encode(doc.text().toStdString());
    const Result<ForwardTrace> trace = forward(*doc.model(), tokens->ids, doc.settings());
    QVERIFY(trace);
    const Matrix& weights = trace->weights(doc.focus().layer, doc.focus().head);  // (T, T)
    QCOMPARE(w.heatmap()->tokenCount(), int(weights.rows()));
    numericcheck::Worst worst;  // a NaN fails it
    for (int q = 0; q < weights.rows(); ++q)
        for (int k = 0; k < weights.cols(); ++k) worst.add(w.heatmap()->cellValue(q, k), double(weights(q, k)), q, k);
    QVERIFY2(worst.within(1e-6), worst.message("heatmap").c_str());
    QVERIFY2(!statusText(w).contains(QStringLiteral("GRU")), qPrintable(statusText(w)));
}

QTEST_MAIN(TestRecurrentWindow)
#include "tst_recurrentwindow.moc"
