// The Why attention view (ui/lab/whyattention/whyattentionview.h): its four curves are measureRecall's for the built-in
// transformer and builtin-rnn, computed here with the models' own passes; the GRU heatmap is runRecurrent's
// hidden state for the traced prompt, cell for cell; the attention heatmap is the transformer trace's last
// row of every head; the path length it states is the count of tokens after the clue, found here by the
// clue's own word.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <qcustomplot.h>

#include "core/model/forward.h"
#include "core/open/openmodel.h"
#include "core/train/corpus/lexicon.h"
#include "core/train/probes/recall.h"
#include "numericcheck.h"
#include "ui/document/document.h"
#include "ui/lab/labplot.h"
#include "ui/lab/whyattention/whyattentionview.h"

using namespace attnscope;

namespace {

ModelPtr transformer()
{
    Result<ModelPtr> m = loadModel("builtin");
    return m ? *m : nullptr;
}

RecurrentModelPtr recurrent()
{
    Result<RecurrentModelPtr> m = loadRecurrentModelSpec("builtin-rnn");
    return m ? *m : nullptr;
}

// The reference measurements: each model's own pass, written out here rather than taken from the core's
// adapters (core/train/probes/cluepath.h) that the view uses.
train::RecallResult referenceRecall(const train::RecallOptions& options, bool gru)
{
    const ModelPtr t = transformer();
    const RecurrentModelPtr r = recurrent();
    train::NextTokenLogits next;
    if (gru)
        next = [&r](const std::vector<int>& ids) -> Result<Eigen::RowVectorXf> {
            Result<RecurrentTrace> trace = runRecurrent(*r, ids);
            if (!trace) return Result<Eigen::RowVectorXf>::fail(trace.error());
            return Result<Eigen::RowVectorXf>::ok(trace->logits.row(trace->tokens - 1));
        };
    else
        next = [&t](const std::vector<int>& ids) -> Result<Eigen::RowVectorXf> {
            CaptureRequest everything;  // every head's weights as well: the logits must not depend on what is kept
            everything.nextTokenLogits = true;
            Result<ForwardTrace> trace = forward(*t, ids, AttentionSettings{}, everything);
            if (!trace) return Result<Eigen::RowVectorXf>::fail(trace.error());
            return Result<Eigen::RowVectorXf>::ok(trace->nextLogits);
        };
    Result<train::RecallResult> result = train::measureRecall(gru ? *r->tokenizer : *t->tokenizer, next, options);
    return result ? *result : train::RecallResult{};
}

std::vector<double> graphValues(const QCPGraph* graph)
{
    std::vector<double> values;
    for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it) values.push_back(it->value);
    return values;
}

std::vector<double> graphKeys(const QCPGraph* graph)
{
    std::vector<double> keys;
    for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it) keys.push_back(it->key);
    return keys;
}

} // namespace

class TestWhyAttention : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void curvesAreMeasureRecall_data();
    void curvesAreMeasureRecall();
    void heatmapsAreTheModelsOwnNumbers_data();
    void heatmapsAreTheModelsOwnNumbers();
    void nothingIsComputedUntilShown();
    void verdictReadsTheCurves();
};

void TestWhyAttention::initTestCase()
{
    QVERIFY2(transformer(), "the built-in model does not load");
    QVERIFY2(recurrent(), "builtin-rnn does not load");
}

void TestWhyAttention::curvesAreMeasureRecall_data()
{
    QTest::addColumn<int>("probe");
    QTest::newRow("pronoun, 12 sentences") << int(train::RecallProbe::Pronoun);
    QTest::newRow("induction, 12 sentences") << int(train::RecallProbe::Induction);
}

void TestWhyAttention::curvesAreMeasureRecall()
{
    QFETCH(int, probe);
    Document doc;
    WhyAttentionView view(&doc);
    view.setSentences(12);
    view.setProbe(train::RecallProbe(probe));
    view.waitForResults();
    QVERIFY(view.curves());
    QVERIFY2(view.curves()->error.isEmpty(), qPrintable(view.curves()->error));

    train::RecallOptions options;
    options.probe = train::RecallProbe(probe);
    options.sentences = 12;
    options.distances = {0, 1, 2, 4, 8, 16, 32};
    QCOMPARE(view.recallOptions().distances, options.distances);
    const train::RecallResult t = referenceRecall(options, false);
    const train::RecallResult r = referenceRecall(options, true);
    QCOMPARE(t.accuracy.size(), options.distances.size());
    const std::vector<double>* want[] = {&t.accuracy, &t.pCorrect, &r.accuracy, &r.pCorrect};
    numericcheck::Worst worst;
    for (int i = 0; i < 4; ++i) {
        worst.label("curve %d", i);
        worst.add(graphValues(view.curve(i)), *want[i]);
        QCOMPARE(graphKeys(view.curve(i)), (std::vector<double>{0, 1, 2, 3, 4, 5, 6}));  // one column per distance
    }
    QVERIFY2(worst.within(1e-12), worst.message().c_str());
    qInfo("curves: %s", worst.message().c_str());
    // The curves are shares and probabilities.
    for (int i = 0; i < 4; ++i)
        for (double v : graphValues(view.curve(i))) QVERIFY2(v >= 0.0 && v <= 1.0, qPrintable(QString::number(v)));
    qInfo("%s: transformer accuracy %s, GRU accuracy %s", QTest::currentDataTag(),
          qPrintable(QStringList([&] { QStringList s; for (double a : t.accuracy) s << QString::number(a); return s; }()).join(',')),
          qPrintable(QStringList([&] { QStringList s; for (double a : r.accuracy) s << QString::number(a); return s; }()).join(',')));
}

void TestWhyAttention::heatmapsAreTheModelsOwnNumbers_data()
{
    QTest::addColumn<int>("probe");
    QTest::addColumn<int>("sentence");
    QTest::addColumn<int>("distance");
    QTest::newRow("pronoun, sentence 3, 16 fillers") << int(train::RecallProbe::Pronoun) << 2 << 16;
    QTest::newRow("pronoun, sentence 1, 1 filler") << int(train::RecallProbe::Pronoun) << 0 << 1;
    QTest::newRow("induction, sentence 5, 8 fillers") << int(train::RecallProbe::Induction) << 4 << 8;
}

void TestWhyAttention::heatmapsAreTheModelsOwnNumbers()
{
    QFETCH(int, probe);
    QFETCH(int, sentence);
    QFETCH(int, distance);
    Document doc;
    WhyAttentionView view(&doc);
    view.setSentences(6);
    view.setProbe(train::RecallProbe(probe));
    view.setSentence(sentence);
    view.setDistance(distance);
    view.waitForResults();
    QVERIFY2(view.path(), qPrintable(view.pathError()));

    // The traced prompt, found here from the probe's own list.
    train::RecallOptions options;
    options.probe = train::RecallProbe(probe);
    options.sentences = 6;
    const train::RecallPrompt prompt = train::recallPrompts(options, distance)[std::size_t(sentence)];
    const ModelPtr t = transformer();
    const RecurrentModelPtr r = recurrent();
    Result<TokenizedText> tokens = t->tokenizer->encode(prompt.text);
    QVERIFY(tokens);
    const int T = int(tokens->ids.size());

    // 1. The GRU's hidden state, (T, Hd), against the map's cells.
    Result<RecurrentTrace> run = runRecurrent(*r, tokens->ids);
    QVERIFY(run);
    const int Hd = int(run->hidden.cols());
    const QCPColorMap* hidden = view.pathPlot()->hiddenMap();
    QCOMPARE(hidden->data()->keySize(), T);
    QCOMPARE(hidden->data()->valueSize(), Hd);
    Eigen::MatrixXd drawn(T, Hd);  // (T, Hd)
    for (int s = 0; s < T; ++s)
        for (int u = 0; u < Hd; ++u) drawn(s, u) = labplot::heatmapCell(hidden, u, s);
    numericcheck::Worst worst;
    worst.label("hidden state");
    worst.add(drawn, run->hidden.cast<double>());
    QVERIFY2(worst.within(1e-12), worst.message().c_str());  // the same floats: no difference at all
    qInfo("hidden state: %s", worst.message().c_str());

    // 2. Every head's attention row from the last token, (L H, T), against a pass that keeps every head.
    Result<ForwardTrace> trace = forward(*t, tokens->ids, AttentionSettings{}, CaptureRequest{});
    QVERIFY(trace);
    const int rows = trace->layers * trace->heads;
    const QCPColorMap* attention = view.pathPlot()->attentionMap();
    QCOMPARE(attention->data()->keySize(), T);
    QCOMPARE(attention->data()->valueSize(), rows);
    numericcheck::Worst rowWorst;
    for (int l = 0; l < trace->layers; ++l)
        for (int h = 0; h < trace->heads; ++h) {
            Eigen::RowVectorXd got(T);  // (T)
            for (int k = 0; k < T; ++k) got[k] = labplot::heatmapCell(attention, l * trace->heads + h, k);
            rowWorst.label("layer %d head %d", l, h);
            rowWorst.add(got, trace->weights(l, h).row(T - 1).cast<double>());
            QVERIFY(std::abs(got.sum() - 1.0) < 1e-5);
        }
    QVERIFY2(rowWorst.within(1e-6), rowWorst.message().c_str());
    qInfo("attention rows: %s", rowWorst.message().c_str());

    // 3. The clue: the first token that is the clue word itself (a word tokenizer), and the path length
    //    stated is the number of tokens after it.
    const std::vector<std::string> words = [&] {
        std::vector<std::string> w;
        std::string rest = prompt.text;
        for (std::size_t at; (at = rest.find(' ')) != std::string::npos; rest = rest.substr(at + 1)) w.push_back(rest.substr(0, at));
        w.push_back(rest);
        return w;
    }();
    const std::string clueWord = words[std::size_t(prompt.clueWord)];
    if (probe == int(train::RecallProbe::Pronoun)) {
        const auto isAnimal = [&](const train::Animal& a) { return clueWord == a.singular; };
        QVERIFY2(std::any_of(train::lexicon().animals.begin(), train::lexicon().animals.end(), isAnimal), clueWord.c_str());
    } else {
        QCOMPARE(prompt.answers, std::vector<std::string>{clueWord});
    }
    const int clue = int(std::find(tokens->tokens.begin(), tokens->tokens.end(), clueWord) - tokens->tokens.begin());
    QVERIFY(clue < T);
    QCOMPARE(view.path()->clueToken, clue);
    QCOMPARE(view.path()->stateUpdates, T - 1 - clue);
    QVERIFY2(view.pathText().contains(QStringLiteral("passes through %1 state updates; attention: 1 step").arg(T - 1 - clue)),
             qPrintable(view.pathText()));
    QVERIFY(view.pathPlot()->hiddenTitle().contains(QStringLiteral("through %1 updates").arg(T - 1 - clue)));
    // The strongest head is the one with the most weight on the clue.
    double best = -1.0;
    for (int i = 0; i < rows; ++i) best = std::max(best, double(trace->attention[std::size_t(i)](T - 1, clue)));
    QCOMPARE(double(view.path()->lastRow(view.path()->strongestHead, clue)), best);
}

void TestWhyAttention::nothingIsComputedUntilShown()
{
    Document doc;
    WhyAttentionView view(&doc);
    QVERIFY(!view.curves());
    QVERIFY(!view.path());
    view.setSentences(2);
    view.setProbe(train::RecallProbe::Induction);
    QVERIFY(!view.curves());
    view.waitForResults();
    QVERIFY(view.curves() && view.path());
}

void TestWhyAttention::verdictReadsTheCurves()
{
    Document doc;
    WhyAttentionView view(&doc);
    view.setSentences(10);
    view.waitForResults();
    QVERIFY(view.curves());
    const train::RecallResult& r = view.curves()->recurrent;
    const train::RecallResult& t = view.curves()->transformer;
    const QString verdict = view.verdictText();
    const auto pct = [](double share) { return QStringLiteral("%1%").arg(std::lround(100.0 * share)); };
    QVERIFY2(verdict.contains(QStringLiteral("transformer %1 → %2").arg(pct(t.accuracy.front()), pct(t.accuracy.back()))), qPrintable(verdict));
    QVERIFY2(verdict.contains(QStringLiteral("GRU %1 → %2").arg(pct(r.accuracy.front()), pct(r.accuracy.back()))), qPrintable(verdict));
    const bool holds = r.accuracy.front() - r.accuracy.back() <= 0.05 && r.accuracy.front() > 0.05;
    QCOMPARE(verdict.contains(QStringLiteral("the GRU holds up")), holds);
    QCOMPARE(verdict.contains(QStringLiteral("The transformer loses the clue too")), t.accuracy.back() <= 0.05);
}

QTEST_MAIN(TestWhyAttention)
#include "tst_whyattention.moc"
