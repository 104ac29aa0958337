#include "ui/research/corpus/corpusview.h"

#include <QEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QLocale>
#include <QMessageBox>
#include <QPushButton>
#include <QSpinBox>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <qcustomplot.h>

#include "core/limits.h"
#include "ui/common/flowlayout.h"

namespace attnscope {

namespace {

constexpr double HeadCorpusStats::*kField[CorpusView::kStatisticCount] = {
    &HeadCorpusStats::firstToken, &HeadCorpusStats::special, &HeadCorpusStats::punctuation,
    &HeadCorpusStats::previousToken, &HeadCorpusStats::entropy};

const QColor kColour[CorpusView::kStatisticCount] = {QColor(59, 82, 139), QColor(214, 110, 20), QColor(40, 140, 70),
                                                     QColor(150, 60, 160), QColor(60, 60, 60)};

constexpr double kSpread = 0.5;  // a layer's head dots share this much of the x axis around it
constexpr double kHitPixels = 7.0;

// Where head h of H sits on the x axis around its layer.
double headOffset(int h, int H) { return H <= 1 ? 0.0 : kSpread * (double(h) / (H - 1) - 0.5); }

int documentCount(const std::string& text)
{
    int n = 0;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        for (std::size_t i = start; i < end; ++i)
            if (!std::isspace(static_cast<unsigned char>(text[i]))) {
                ++n;
                break;
            }
        start = end + 1;
    }
    return n;
}

QCustomPlot* makePlot(QWidget* parent, const QString& yLabel)
{
    auto* plot = new QCustomPlot(parent);
    plot->setNoAntialiasingOnDrag(true);
    plot->yAxis->setLabel(yLabel);
    plot->xAxis->setLabel(QObject::tr("layer"));
    plot->plotLayout()->insertRow(0);
    plot->plotLayout()->addElement(0, 0, new QCPTextElement(plot, QString(), QFont(parent->font().family(), 9, QFont::Bold)));
    plot->setMinimumSize(140, 120);
    return plot;
}

void setTitle(QCustomPlot* plot, const QString& title)
{
    if (auto* element = qobject_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0))) element->setText(title);
}

} // namespace

AttentionSettings corpusSettings(const AttentionSettings& settings)
{
    AttentionSettings s = settings;
    s.blockedKeys.clear();
    return s;
}

QString CorpusView::statisticName(Statistic statistic)
{
    switch (statistic) {
    case Statistic::FirstToken: return tr("first token");
    case Statistic::Special: return tr("special tokens");
    case Statistic::Punctuation: return tr("punctuation");
    case Statistic::PreviousToken: return tr("previous token");
    case Statistic::Entropy: return tr("entropy");
    }
    return {};
}

CorpusView::CorpusView(Document* document, QWidget* parent)
    : ResearchView(document, parent), m_open(new QPushButton(tr("Open corpus…"))),
      m_shipped(new QPushButton(tr("Shipped corpus"))), m_documents(new QSpinBox), m_summary(new QLabel)
{
    setAlwaysOnPool(true);  // a whole corpus is never small enough to run between keystrokes
    m_weights = makePlot(this, tr("mean attention weight"));
    m_entropy = makePlot(this, tr("mean entropy (nats)"));
    for (int s = 0; s < kStatisticCount; ++s) {
        QCustomPlot* plot = Statistic(s) == Statistic::Entropy ? m_entropy : m_weights;
        QCPGraph* heads = plot->addGraph();
        QColor faint = kColour[s];
        faint.setAlpha(110);
        heads->setLineStyle(QCPGraph::lsNone);
        heads->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, faint, 5));
        heads->setPen(QPen(faint));
        heads->removeFromLegend();
        QCPGraph* layers = plot->addGraph();
        // A model whose first token is a special one draws both lines on one path: the first token's wider
        // beneath the special tokens' dashes keeps both in sight.
        const bool first = Statistic(s) == Statistic::FirstToken, special = Statistic(s) == Statistic::Special;
        layers->setPen(QPen(kColour[s], first ? 4.5 : 2.0, special ? Qt::DashLine : Qt::SolidLine));
        layers->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssSquare, kColour[s], kColour[s], 6));
        layers->setName(Statistic(s) == Statistic::Entropy ? tr("layer mean") : tr("%1, layer mean").arg(statisticName(Statistic(s))));
        m_headGraphs.push_back(heads);
        m_layerGraphs.push_back(layers);
    }
    // A legend entry for the dots themselves, drawn from no data.
    QCPGraph* key = m_weights->addGraph();
    key->setLineStyle(QCPGraph::lsNone);
    key->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, QColor(120, 120, 120, 150), 5));
    key->setName(tr("a dot: one head (hover it)"));
    m_weights->legend->setVisible(true);
    m_weights->legend->setFont(QFont(font().family(), 8));
    m_weights->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
    for (QCustomPlot* plot : {m_weights, m_entropy}) plot->installEventFilter(this);

    m_documents->setRange(1, kMaxCorpusDocuments);
    m_documents->setValue(1000);
    m_documents->setKeyboardTracking(false);  // one measurement for a typed number, not one per digit
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_summary->setWordWrap(true);
    m_summary->setToolTip(tr("Each line of the corpus is a document, run alone under the attention settings (blocked "
                             "keys aside) and cut to the token limit; every query row counts once. The typed "
                             "sentence is not used, so typing does not start the measurement again."));
    auto* top = new FlowLayout;  // more lines when the tab is narrow or the type large
    auto* most = new QLabel(tr("At most"));
    auto* lines = new QLabel(tr("lines"));
    auto* count = new QWidget;
    auto* countRow = new QHBoxLayout(count);
    countRow->setContentsMargins(0, 0, 0, 0);
    countRow->addWidget(most);
    countRow->addWidget(m_documents);
    countRow->addWidget(lines);
    top->addWidget(count);
    top->addWidget(m_open);
    top->addWidget(m_shipped);

    QSplitter* split = proportionalSplit(Qt::Horizontal, {m_weights, m_entropy}, {3, 2});
    auto* column = new QVBoxLayout(this);
    column->addWidget(m_summary);
    column->addLayout(top);
    column->addWidget(split, 1);
    column->addWidget(makeStatusLabel());

    m_open->setObjectName(QStringLiteral("corpus-open"));
    m_open->setToolTip(tr("A UTF-8 text file with one document per line (at most 16 MB)."));
    m_shipped->setObjectName(QStringLiteral("corpus-shipped"));
    m_shipped->setToolTip(tr("The small mixed-text corpus that ships inside AttnScope."));
    m_documents->setObjectName(QStringLiteral("corpus-documents"));
    m_documents->setToolTip(tr("Use at most this many non-empty lines, from the top."));
    m_weights->setObjectName(QStringLiteral("corpus-weights"));
    m_entropy->setObjectName(QStringLiteral("corpus-entropy"));
    connect(m_documents, &QSpinBox::valueChanged, this, &CorpusView::refresh);
    connect(m_shipped, &QPushButton::clicked, this, &CorpusView::useShippedCorpus);
    connect(m_open, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open a corpus"), QString(),
                                                          tr("Text files (*.txt);;All files (*)"));
        if (path.isEmpty()) return;
        if (const QString error = openCorpus(path); !error.isEmpty()) QMessageBox::warning(this, tr("Open a corpus"), error);
    });
    // The constructor sets the shipped corpus without measuring; the first showing measures it.
    QFile shipped(QStringLiteral(":/corpus-mixed.txt"));
    std::string text;
    if (shipped.open(QIODevice::ReadOnly)) text = shipped.readAll().toStdString();
    m_corpus = std::make_shared<const std::string>(std::move(text));
    m_name = tr("the shipped mixed text");
    m_shipped->setEnabled(false);
    m_summary->setText(tr("Corpus: %1, %2 lines.").arg(m_name).arg(documentCount(*m_corpus)));
}

void CorpusView::setCorpus(std::string text, const QString& name, bool shipped)
{
    const int lines = documentCount(text);
    m_corpus = std::make_shared<const std::string>(std::move(text));
    m_name = name;
    m_shipped->setEnabled(!shipped);
    m_summary->setText(tr("Corpus: %1, %2 lines.").arg(name).arg(lines));
    refresh();
}

void CorpusView::useShippedCorpus()
{
    QFile shipped(QStringLiteral(":/corpus-mixed.txt"));
    if (!shipped.open(QIODevice::ReadOnly)) return;  // compiled in: always there
    setCorpus(shipped.readAll().toStdString(), tr("the shipped mixed text"), true);
}

QString CorpusView::openCorpus(const QString& path)
{
    QFile file(path);
    const QString name = QFileInfo(path).fileName();
    if (!file.open(QIODevice::ReadOnly)) return tr("Cannot open the corpus '%1': %2.").arg(name, file.errorString());
    constexpr qint64 limit = qint64(kMaxTextFileBytes);
    const QString tooLarge = tr("The corpus '%1' is larger than %2 MB; use the first part of it.").arg(name).arg(limit >> 20);
    if (file.size() > limit) return tooLarge;
    const QByteArray bytes = file.read(limit + 1);
    if (bytes.size() > limit) return tooLarge;
    std::string text = bytes.toStdString();
    if (documentCount(text) == 0) return tr("The corpus '%1' has no documents: every line is empty.").arg(name);
    setCorpus(std::move(text), QStringLiteral("'%1'").arg(name), false);
    return {};
}

bool CorpusView::changesMeasurement(const Snapshot& measured, const Snapshot& latest) const
{
    return measured.model != latest.model || corpusSettings(measured.settings) != corpusSettings(latest.settings);
}

ResearchJob CorpusView::job(const SnapshotPtr& snapshot)
{
    const QString nothing = snapshot->model ? QString() : tr("No model is loaded.");
    const AttentionSettings settings = corpusSettings(snapshot->settings);
    const int maxDocuments = m_documents->value();
    return [snapshot, nothing, settings, maxDocuments, corpus = m_corpus, name = m_name](const JobContext& context) -> ResearchResultPtr {
        if (!nothing.isEmpty()) return errorResult(nothing);
        const Model& model = *snapshot->model;
        Result<CorpusStats> stats = corpusStats(model, *corpus, settings, maxDocuments, context.keepGoing());
        if (!stats) return errorResult(coreSentence(stats.error()));
        auto r = std::make_shared<CorpusResult>();
        r->stats = std::move(*stats);
        r->corpusName = name;
        r->tokenLimit = settings.effectiveTokenLimit(model.config.contextLength);
        return r;
    };
}

void CorpusView::clearPlots()
{
    for (QCPGraph* g : m_layerGraphs) g->data()->clear();
    for (QCPGraph* g : m_headGraphs) g->data()->clear();
    setTitle(m_weights, QString());
    setTitle(m_entropy, QString());
    m_summary->setText(tr("Corpus: %1.").arg(m_name));
    for (QCustomPlot* plot : {m_weights, m_entropy}) plot->replot(QCustomPlot::rpQueuedReplot);
}

void CorpusView::showResult(const SnapshotPtr&, const ResearchResultPtr& result)
{
    const auto* r = dynamic_cast<const CorpusResult*>(result.get());
    if (!r) {
        clearPlots();
        return;
    }
    const CorpusStats& s = r->stats;
    const QLocale locale;
    QString summary = tr("Corpus: %1, %2 documents, %3 tokens; each cut to %4 tokens")
                          .arg(r->corpusName, locale.toString(s.documents), locale.toString(s.tokens), locale.toString(r->tokenLimit));
    summary += s.truncated > 0 ? tr(" (%1 were longer).").arg(locale.toString(s.truncated)) : tr(" (none was longer).");
    m_summary->setText(summary);

    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    const int spacing = std::max(1, (s.layers + 12) / 13);  // at most about 13 labels
    for (int l = 0; l < s.layers; l += spacing) ticker->addTick(l, QStringLiteral("L%1").arg(l));
    double weightTop = 0.05, entropyTop = 0.05;
    for (int st = 0; st < kStatisticCount; ++st) {
        QVector<double> layerX, layerY, headX, headY;
        for (int l = 0; l < s.layers; ++l) {
            layerX << l;
            layerY << s.layerMean(l, kField[st]);
            for (int h = 0; h < s.heads; ++h) {
                headX << l + headOffset(h, s.heads);
                headY << s.at(l, h).*kField[st];
            }
        }
        double& top = Statistic(st) == Statistic::Entropy ? entropyTop : weightTop;
        for (double y : headY) top = std::max(top, y);
        m_layerGraphs[std::size_t(st)]->setData(layerX, layerY, true);
        m_headGraphs[std::size_t(st)]->setData(headX, headY, true);
    }
    for (QCustomPlot* plot : {m_weights, m_entropy}) {
        plot->xAxis->setTicker(ticker);
        plot->xAxis->setRange(-0.5, s.layers - 0.5);
    }
    m_weights->yAxis->setRange(0.0, std::min(1.0, weightTop * 1.1));
    m_entropy->yAxis->setRange(0.0, entropyTop * 1.1);
    setTitle(m_weights, tr("Where the heads look, by layer"));
    setTitle(m_entropy, tr("How spread out their attention is"));
    for (QCustomPlot* plot : {m_weights, m_entropy}) plot->replot(QCustomPlot::rpQueuedReplot);
}

QString CorpusView::tipAt(const QCustomPlot* plot, const QPointF& pixel) const
{
    const auto* r = dynamic_cast<const CorpusResult*>(result().get());
    if (!r || r->stats.heads == 0) return {};
    const CorpusStats& s = r->stats;
    double best = kHitPixels;
    QString tip;
    for (int st = 0; st < kStatisticCount; ++st) {
        for (const bool layerLine : {true, false}) {
            const QCPGraph* g = layerLine ? m_layerGraphs[std::size_t(st)] : m_headGraphs[std::size_t(st)];
            if (g->parentPlot() != plot) continue;
            int index = 0;
            for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it, ++index) {
                const QPointF at(g->keyAxis()->coordToPixel(it->key), g->valueAxis()->coordToPixel(it->value));
                const double d = std::hypot(at.x() - pixel.x(), at.y() - pixel.y());
                if (d >= best) continue;
                best = d;
                const QString name = statisticName(Statistic(st));
                const QString unit = Statistic(st) == Statistic::Entropy ? tr(" nats") : QString();
                if (layerLine) {
                    tip = tr("L%1, mean over %2 heads\n%3: %4%5").arg(index).arg(s.heads).arg(name).arg(it->value, 0, 'f', 4).arg(unit);
                } else {
                    const int l = index / s.heads, h = index % s.heads;
                    tip = tr("L%1 H%2\n%3: %4%5\nlayer mean: %6%5")
                              .arg(l).arg(h).arg(name).arg(it->value, 0, 'f', 4).arg(unit)
                              .arg(s.layerMean(l, kField[st]), 0, 'f', 4);
                }
            }
        }
    }
    return tip;
}

bool CorpusView::eventFilter(QObject* watched, QEvent* event)
{
    if (event->type() == QEvent::ToolTip) {
        auto* plot = qobject_cast<QCustomPlot*>(watched);
        auto* help = static_cast<QHelpEvent*>(event);
        const QString tip = plot ? tipAt(plot, help->pos()) : QString();
        if (tip.isEmpty()) QToolTip::hideText();
        else QToolTip::showText(help->globalPos(), tip, plot);
        return true;
    }
    return ResearchView::eventFilter(watched, event);
}

} // namespace attnscope
