#include "ui/lab/whyattention/whyattentionview.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "ui/common/flowlayout.h"
#include "ui/common/matrixplot.h"
#include "ui/common/plottitles.h"
#include "ui/drawing/colormap.h"
#include "core/open/openmodel.h"

namespace attnscope {

namespace {

const QColor kTransformerColor(31, 119, 180);
const QColor kRecurrentColor(214, 39, 40);

struct BuiltinPair {
    ModelPtr transformer;
    RecurrentModelPtr recurrent;
    QString error;
};

// The two models compared, whatever the document holds; both loaders keep one copy per process.
BuiltinPair builtinPair()
{
    BuiltinPair pair;
    Result<ModelPtr> transformer = loadModel("builtin");
    Result<RecurrentModelPtr> recurrent = loadRecurrentModelSpec("builtin-rnn");
    if (!transformer) pair.error = QString::fromStdString(transformer.error());
    else if (!recurrent) pair.error = QString::fromStdString(recurrent.error());
    else {
        pair.transformer = *transformer;
        pair.recurrent = *recurrent;
    }
    return pair;
}

// A model's next-token logits that stop the measurement once newer work has superseded it.
train::NextTokenLogits stoppable(train::NextTokenLogits next, const CancelFlag& cancelled)
{
    return [next = std::move(next), &cancelled](const std::vector<int>& ids) {
        if (cancelled.load()) return Result<Eigen::RowVectorXf>::fail("stopped for a newer measurement.");
        return next(ids);
    };
}

QString percent(double share) { return QStringLiteral("%1%").arg(std::lround(100.0 * share)); }

QCPGraph* addCurve(QCustomPlot* plot, const QColor& color, Qt::PenStyle style, QCPScatterStyle::ScatterShape shape, const QString& name)
{
    QCPGraph* g = plot->addGraph();
    g->setPen(QPen(color, 2, style));
    g->setScatterStyle(QCPScatterStyle(shape, color, color, 7));
    g->setName(name);
    return g;
}

} // namespace

const std::vector<int>& WhyAttentionView::distances()
{
    static const std::vector<int> d = {0, 1, 2, 4, 8, 16, 32};
    return d;
}

WhyAttentionView::WhyAttentionView(Document* document, QWidget* parent)
    : QWidget(parent), m_document(document), m_probeBox(new QComboBox(this)), m_sentenceBox(new QSpinBox(this)),
      m_distanceBox(new QComboBox(this)), m_status(new QLabel(this)), m_verdict(new QLabel(this)), m_prompt(new QLabel(this)),
      m_caption(new QLabel(this)), m_recallPlot(labplot::makePlot(this)), m_pathPlot(new CluePathPlot(this))
{
    m_probeBox->setObjectName(QStringLiteral("recall-probe"));
    m_probeBox->addItem(tr("pronoun"), int(train::RecallProbe::Pronoun));
    m_probeBox->addItem(tr("induction"), int(train::RecallProbe::Induction));
    m_probeBox->setToolTip(tr("Which clue must cross the fillers: the animal before “because it” (pronoun), or the word after "
                              "the animal in a sentence said again (induction)."));
    m_sentenceBox->setObjectName(QStringLiteral("recall-sentence"));
    m_sentenceBox->setRange(1, m_sentences);
    m_sentenceBox->setToolTip(tr("Which held-out probe sentence the right-hand pictures trace."));
    m_distanceBox->setObjectName(QStringLiteral("recall-distance"));
    for (int d : distances()) m_distanceBox->addItem(QString::number(d), d);
    setDistance(2);  // where the transformer still finds the clue about half the time and the GRU has lost it
    m_distanceBox->setToolTip(tr("Filler words put between the clue and the prediction in the traced sentence."));

    auto* controls = new FlowLayout;  // breaks into rows beside a lesson or at presenter mode's type
    controls->addPair(new QLabel(tr("Probe:"), this), m_probeBox);
    controls->addPair(new QLabel(tr("Traced sentence:"), this), m_sentenceBox);
    controls->addPair(new QLabel(tr("with filler words:"), this), m_distanceBox);

    for (QLabel* label : {m_status, m_verdict, m_prompt, m_caption}) {
        label->setWordWrap(true);
        label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    }
    m_prompt->setTextFormat(Qt::RichText);
    m_recallPlot->setObjectName(QStringLiteral("recall-plot"));
    // Room for the curves above their legend of four lines, also when the path is laid out under the plot.
    m_recallPlot->setMinimumHeight(380);
    m_pathPlot->setObjectName(QStringLiteral("clue-path"));
    m_caption->setText(tr(
        "What this measures: held-out sentences (made by the built-in corpus's generator from a seed its training never used) "
        "go through both models, with 0 to 32 filler words (“near the old house behind the red park …”) between the clue and the "
        "prediction. Accuracy: the most probable next word is a right answer; p(correct): the right answers' total probability. "
        "What it does not show: that path length alone is the cause. Both models saw only sentences in which nothing stands "
        "between the clue and what follows it, so fillers make the text strange to both; and this is one small GRU "
        "(builtin-rnn, 176 numbers of state) against one small transformer, each trained once: a larger or longer-trained "
        "recurrent network, an LSTM, or other text may hold the clue further. The heatmaps trace one sentence; the curves are the "
        "measurement."));

    auto* left = new QVBoxLayout;
    left->addWidget(m_recallPlot, 1);
    left->addWidget(m_verdict);
    auto* right = new QVBoxLayout;
    right->addWidget(m_prompt);
    right->addWidget(m_pathPlot, 1);
    m_plots = new QBoxLayout(QBoxLayout::LeftToRight);
    m_plots->addLayout(left, 2);
    m_plots->addLayout(right, 3);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(m_status);
    layout->addLayout(m_plots, 1);
    layout->addWidget(m_caption);

    buildRecallPlot();
    // Titles wrap to their plots in a picture as in the window (which fits its own plots' titles too).
    fitPlotTitles(this);
    m_status->setText(tr("The measurement starts when this view is first shown."));

    connect(m_probeBox, &QComboBox::currentIndexChanged, this, [this] {
        if (!m_started) return;
        refreshCurves();
        refreshPath();
    });
    connect(m_sentenceBox, &QSpinBox::valueChanged, this, [this] {
        if (m_started) refreshPath();
    });
    connect(m_distanceBox, &QComboBox::currentIndexChanged, this, [this] {
        moveDistanceMarker();
        if (m_started) refreshPath();
    });
    moveDistanceMarker();
}

void WhyAttentionView::buildRecallPlot()
{
    QCustomPlot* p = m_recallPlot;
    m_recallTitle = labplot::addTitle(p, tr("Recall against distance"));
    // One column per distance, equally spaced: the doubling distances as a log scale spaces them, with 0 (no
    // filler, each model's own baseline) in a column of its own.
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (std::size_t i = 0; i < distances().size(); ++i) ticker->addTick(double(i), QString::number(distances()[i]));
    p->xAxis->setTicker(ticker);
    p->xAxis->setLabel(tr("filler words between clue and prediction"));
    p->xAxis->setRange(-0.4, double(distances().size()) - 0.6);
    p->yAxis->setLabel(tr("share of sentences / probability"));
    p->yAxis->setRange(0.0, 1.05);
    m_graphs = {addCurve(p, kTransformerColor, Qt::SolidLine, QCPScatterStyle::ssCircle, tr("transformer: accuracy")),
                addCurve(p, kTransformerColor, Qt::DashLine, QCPScatterStyle::ssSquare, tr("transformer: p(correct)")),
                addCurve(p, kRecurrentColor, Qt::SolidLine, QCPScatterStyle::ssCircle, tr("GRU: accuracy")),
                addCurve(p, kRecurrentColor, Qt::DashLine, QCPScatterStyle::ssSquare, tr("GRU: p(correct)"))};
    p->legend->setVisible(true);
    p->legend->setWrap(1);  // one entry a line: the plot is narrow beside a lesson
    p->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    p->plotLayout()->addElement(2, 0, p->legend);
    p->plotLayout()->setRowStretchFactor(2, 0.001);
    m_distanceMarker = labplot::addVerticalMarker(p, p->xAxis, p->yAxis, QPen(QColor(90, 90, 90), 1.2, Qt::DashLine), 0.08);
}

train::RecallProbe WhyAttentionView::probe() const { return train::RecallProbe(m_probeBox->currentData().toInt()); }

void WhyAttentionView::setProbe(train::RecallProbe probe) { m_probeBox->setCurrentIndex(m_probeBox->findData(int(probe))); }

int WhyAttentionView::sentence() const { return m_sentenceBox->value() - 1; }

void WhyAttentionView::setSentence(int index) { m_sentenceBox->setValue(index + 1); }

int WhyAttentionView::distance() const { return m_distanceBox->currentData().toInt(); }

void WhyAttentionView::setDistance(int distance)
{
    const int i = m_distanceBox->findData(distance);
    Q_ASSERT(i >= 0);
    m_distanceBox->setCurrentIndex(i);
}

void WhyAttentionView::setSentences(int count)
{
    if (count == m_sentences) return;
    m_sentences = count;
    m_sentenceBox->setRange(1, count);
    if (m_started) {
        refreshCurves();
        refreshPath();
    }
}

train::RecallOptions WhyAttentionView::recallOptions() const
{
    train::RecallOptions o;
    o.probe = probe();
    o.distances = distances();
    o.sentences = m_sentences;
    return o;
}

void WhyAttentionView::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    // Side by side where the page has the room, one above the other where it has not. The page's width
    // decides, not the view's own: in its scroll area the view is never narrower than its minimum.
    const int room = parentWidget() ? parentWidget()->width() : width();
    const auto direction = room >= kSideBySideWidth ? QBoxLayout::LeftToRight : QBoxLayout::TopToBottom;
    if (m_plots->direction() != direction) m_plots->setDirection(direction);
}

void WhyAttentionView::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    start();
}

void WhyAttentionView::start()
{
    if (m_started) return;
    m_started = true;
    refreshCurves();
    refreshPath();
}

void WhyAttentionView::waitForResults()
{
    start();
    m_curveTask.wait();
    m_pathTask.wait();
}

void WhyAttentionView::refreshCurves()
{
    const train::RecallOptions options = recallOptions();
    m_status->setText(tr("Measuring both models on %1 held-out sentences at %2 distances…").arg(options.sentences).arg(options.distances.size()));
    m_status->show();
    m_curveTask.submit(
        [options](const CancelFlag& cancelled) {
            auto out = std::make_shared<RecallCurves>();
            const BuiltinPair models = builtinPair();
            if (!models.error.isEmpty()) {
                out->error = models.error;
                return std::shared_ptr<const RecallCurves>(out);
            }
            Result<train::RecallResult> t = train::measureRecall(
                *models.transformer->tokenizer, stoppable(train::transformerNextLogits(*models.transformer), cancelled), options);
            Result<train::RecallResult> r = t ? train::measureRecall(*models.recurrent->tokenizer,
                                                                     stoppable(train::recurrentNextLogits(*models.recurrent), cancelled), options)
                                              : Result<train::RecallResult>::fail(t.error());
            if (!r) out->error = QString::fromStdString(r.error());
            else {
                out->transformer = std::move(*t);
                out->recurrent = std::move(*r);
            }
            return std::shared_ptr<const RecallCurves>(out);
        },
        [this](std::shared_ptr<const RecallCurves> curves) { showCurves(std::move(curves)); });
}

void WhyAttentionView::showCurves(std::shared_ptr<const RecallCurves> curves)
{
    m_curves = std::move(curves);
    for (QCPGraph* g : m_graphs) g->data()->clear();
    const QString probeName = QString::fromStdString(train::toString(probe()));
    if (!m_curves->error.isEmpty()) {
        m_status->setText(tr("No measurement: %1").arg(m_curves->error));
        m_verdict->clear();
        labplot::replot(m_recallPlot);
        return;
    }
    m_status->hide();
    const train::RecallResult& t = m_curves->transformer;
    const train::RecallResult& r = m_curves->recurrent;
    QVector<double> x;  // the distances' columns
    for (int d : t.distances) x.push_back(double(std::find(distances().begin(), distances().end(), d) - distances().begin()));
    const std::vector<double>* ys[] = {&t.accuracy, &t.pCorrect, &r.accuracy, &r.pCorrect};
    for (std::size_t i = 0; i < m_graphs.size(); ++i) m_graphs[i]->setData(x, QVector<double>(ys[i]->begin(), ys[i]->end()), true);
    m_recallTitle->setText(tr("Recall against distance: %1 probe, %2 held-out sentences").arg(probeName).arg(t.sentences));
    m_verdict->setText(verdictText());
    labplot::replot(m_recallPlot);
}

QString WhyAttentionView::verdictText() const
{
    if (!m_curves || !m_curves->error.isEmpty() || m_curves->transformer.distances.empty()) return {};
    const train::RecallResult& t = m_curves->transformer;
    const train::RecallResult& r = m_curves->recurrent;
    const std::vector<int>& d = t.distances;
    QString text = tr("Accuracy with %1 and with %2 filler words: transformer %3 → %4, GRU %5 → %6.")
                       .arg(d.front()).arg(d.back())
                       .arg(percent(t.accuracy.front()), percent(t.accuracy.back()), percent(r.accuracy.front()), percent(r.accuracy.back()));
    // The first distance at which a model has lost half of what it got right at the shortest one.
    const auto halved = [&d](const std::vector<double>& accuracy) {
        for (std::size_t i = 1; i < accuracy.size(); ++i)
            if (accuracy[i] < 0.5 * accuracy.front()) return d[i];
        return -1;
    };
    const int th = halved(t.accuracy), rh = halved(r.accuracy);
    const auto halvedText = [](const QString& who, int at) {
        return at < 0 ? tr("%1 keeps at least half its accuracy at every distance").arg(who)
                      : tr("%1 has lost half its accuracy by %2 filler words").arg(who).arg(at);
    };
    text += QLatin1Char(' ') + tr("Compared with %1 fillers, %2; %3.")
                                   .arg(d.front())
                                   .arg(halvedText(tr("the GRU"), rh), halvedText(tr("the transformer"), th));
    // Five points either way is about what 100 sentences can tell apart.
    if (r.accuracy.front() - r.accuracy.back() <= 0.05 && r.accuracy.front() > 0.05)
        text += QLatin1Char(' ') + tr("At these distances the GRU holds up: its state still carries the clue %1 words on.").arg(d.back());
    if (r.accuracy.back() > t.accuracy.back() + 0.05) text += QLatin1Char(' ') + tr("At the longest distance the GRU does better than the transformer.");
    if (t.accuracy.back() <= 0.05)
        text += QLatin1Char(' ') + tr("The transformer loses the clue too: neither model saw fillers there in training, so the long "
                                      "distances measure strange text as well as path length.");
    return text;
}

void WhyAttentionView::refreshPath()
{
    const train::RecallOptions options = recallOptions();
    const int d = distance(), s = sentence();
    m_pathTask.submit(
        [options, d, s](const CancelFlag&) {
            PathResult out;
            const BuiltinPair models = builtinPair();
            if (!models.error.isEmpty()) {
                out.error = models.error;
                return out;
            }
            const std::vector<train::RecallPrompt> prompts = train::recallPrompts(options, d);
            if (s < 0 || s >= int(prompts.size())) {
                out.error = tr("there is no probe sentence %1.").arg(s + 1);
                return out;
            }
            out.prompt = prompts[std::size_t(s)];
            Result<train::CluePath> path = train::cluePath(*models.transformer, *models.recurrent, out.prompt);
            if (!path) {
                out.error = QString::fromStdString(path.error());
                return out;
            }
            out.transformerTop = QString::fromStdString(models.transformer->tokenizer->displayToken(path->transformer.top));
            out.recurrentTop = QString::fromStdString(models.recurrent->tokenizer->displayToken(path->recurrent.top));
            out.path = std::make_shared<const train::CluePath>(std::move(*path));
            return out;
        },
        [this](PathResult result) { showPath(std::move(result)); });
}

namespace {

QString answerText(const QString& top, const train::PromptScore& score)
{
    return QStringLiteral("“%1” (p(correct) %2, %3)")
        .arg(top.toHtmlEscaped())
        .arg(score.pCorrect, 0, 'f', 2)
        .arg(score.correct ? QObject::tr("right") : QObject::tr("wrong"));
}

} // namespace

void WhyAttentionView::showPath(PathResult result)
{
    m_path = result.path;
    m_pathError = result.error;
    if (!m_path) {
        m_prompt->setText(tr("No trace: %1").arg(m_pathError.toHtmlEscaped()));
        m_pathPlot->clearPath();
        return;
    }
    const train::CluePath& c = *m_path;
    m_pathPlot->showPath(c);
    const QString clue = tokenLabel(c.tokens.tokens[std::size_t(c.clueToken)]);

    // The prompt, the answers and the path length in words.
    QStringList words = QString::fromStdString(result.prompt.text).split(QLatin1Char(' '));
    for (QString& w : words) w = w.toHtmlEscaped();
    if (result.prompt.clueWord >= 0 && result.prompt.clueWord < words.size())
        words[result.prompt.clueWord] = QStringLiteral("<b><u>%1</u></b>").arg(words[result.prompt.clueWord]);
    QStringList answers;
    for (const std::string& a : result.prompt.answers) answers << QString::fromStdString(a).toHtmlEscaped();
    const int strongest = c.strongestHead;
    m_prompt->setText(
        tr("<b>%1</b><br>Traced sentence %2 with %3 filler words: %4 → ?<br>Right answers: %5. Transformer's top word: %6. GRU's: %7.<br>"
           "The clue “%8” is %9 tokens before the last; head L%10 H%11 puts %12 of the last token's attention straight on it.")
            .arg(pathText().toHtmlEscaped())
            .arg(sentence() + 1)
            .arg(distance())
            .arg(words.join(QLatin1Char(' ')), answers.join(QStringLiteral(", ")), answerText(result.transformerTop, c.transformer),
                 answerText(result.recurrentTop, c.recurrent), clue.toHtmlEscaped())
            .arg(c.stateUpdates)
            .arg(strongest / c.heads)
            .arg(strongest % c.heads)
            .arg(c.lastRow(strongest, c.clueToken), 0, 'f', 2));
}

QString WhyAttentionView::pathText() const
{
    if (!m_path) return {};
    return tr("Path length: GRU: the clue passes through %1 state updates; attention: 1 step.").arg(m_path->stateUpdates);
}

void WhyAttentionView::moveDistanceMarker()
{
    labplot::moveMarker(m_distanceMarker, m_distanceBox->currentIndex(), tr("traced: %1").arg(distance()));
    labplot::replot(m_recallPlot);
}

} // namespace attnscope
