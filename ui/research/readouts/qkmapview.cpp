#include "ui/research/readouts/qkmapview.h"

#include <QFile>
#include <QFileDialog>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <numeric>
#include <qcustomplot.h>

#include "ui/common/flowlayout.h"
#include "ui/common/matrixplot.h"

namespace attnscope {

namespace {

const QColor kQueryColor(33, 102, 172);  // blue
const QColor kKeyColor(224, 130, 20);    // orange: the two stay apart for colour-blind readers too
constexpr double kPickRadius = 10.0;     // pixels

QCPGraph* scatter(QCustomPlot* plot, const QCPScatterStyle& style, const QString& name)
{
    QCPGraph* g = plot->addGraph();
    g->setLineStyle(QCPGraph::lsNone);
    g->setScatterStyle(style);
    g->setName(name);
    return g;
}

} // namespace

QkMapView::QkMapView(Document* document, QWidget* parent)
    : ResearchView(document, parent), m_plot(new QCustomPlot), m_load(new QPushButton(tr("Add sentences from a file…"))),
      m_clear(new QPushButton(tr("Only the typed sentence"))), m_sources(new QLabel)
{
    auto* top = new FlowLayout;  // a second line when the tab is narrow or the type large
    top->addWidget(m_load);
    top->addWidget(m_clear);
    top->addWidget(m_sources);

    m_plot->setNoAntialiasingOnDrag(true);
    m_plot->plotLayout()->insertRow(0);
    m_plot->plotLayout()->addElement(0, 0, new QCPTextElement(m_plot, QString(), QFont(font().family(), 9, QFont::Bold)));
    m_queries = scatter(m_plot, QCPScatterStyle(QCPScatterStyle::ssDisc, kQueryColor, 6), tr("queries"));
    m_keys = scatter(m_plot, QCPScatterStyle(QCPScatterStyle::ssTriangle, kKeyColor, kKeyColor, 7), tr("keys"));
    m_selectedKeys = scatter(m_plot, QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(Qt::black, 2), Qt::NoBrush, 15),
                             tr("its strongest keys"));
    m_selectedQuery = scatter(m_plot, QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(kQueryColor.darker(), 3), Qt::NoBrush, 17),
                              tr("chosen query"));
    m_plot->legend->setVisible(true);
    m_selectedKeys->removeFromLegend();  // listed only while a query is chosen
    m_selectedQuery->removeFromLegend();
    m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
    m_plot->xAxis->setLabel(tr("first principal component"));
    m_plot->yAxis->setLabel(tr("second principal component"));
    m_plot->setMouseTracking(true);

    auto* note = new QLabel(tr("Keys are moved so their mean is the mean query (each query's ranking of the keys is kept), "
                               "then queries and keys are scaled to the same mean length (every dot product is kept), as "
                               "AttentionViz does; the picture is their two principal components. Near is not the same as "
                               "attended: the scatter loses what the other components hold."));
    note->setWordWrap(true);
    auto* column = new QVBoxLayout(this);
    column->addLayout(top);
    column->addWidget(m_plot, 1);
    column->addWidget(note);
    column->addWidget(makeStatusLabel());

    m_load->setToolTip(tr("Add sentences from a text file (one per line) so the map shows how this head's queries and keys cluster across many."));
    m_clear->setToolTip(tr("Map only the sentence in the window."));
    connect(m_load, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Sentences, one per line"), QString(), tr("Text (*.txt);;All files (*)"));
        if (path.isEmpty()) return;
        const QString error = loadSentences(path);
        if (!error.isEmpty()) QMessageBox::warning(this, tr("Cannot read the sentences"), error);
    });
    connect(m_clear, &QPushButton::clicked, this, [this] { setExtraSentences({}); });
    connect(m_plot, &QCustomPlot::mouseMove, this, &QkMapView::hover);
    connect(m_plot, &QCustomPlot::mousePress, this, &QkMapView::click);
}

void QkMapView::setExtraSentences(const QStringList& lines)
{
    m_extra.clear();
    for (const QString& line : lines)
        if (!line.trimmed().isEmpty()) m_extra << line;
    m_selected = -1;
    refresh();
}

QString QkMapView::loadSentences(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return tr("Cannot open '%1'.").arg(path);
    if (file.size() > kMaxFileBytes) return tr("'%1' is larger than 4 MB; the map takes at most 2,000 tokens.").arg(path);
    const QByteArray bytes = file.readAll();
    QString text = QString::fromUtf8(bytes);
    if (text.toUtf8() != bytes) return tr("'%1' is not UTF-8 text.").arg(path);
    setExtraSentences(text.split(QLatin1Char('\n')));
    return {};
}

ResearchJob QkMapView::job(const SnapshotPtr& snapshot)
{
    const QString nothing = nothingToMeasure(*document(), *snapshot);
    return [snapshot, nothing, extra = m_extra](const JobContext&) -> ResearchResultPtr {
        if (!nothing.isEmpty()) return errorResult(nothing);
        const Model& model = *snapshot->model;
        auto r = std::make_shared<QkMapResult>();
        std::vector<std::vector<int>> sentences = {snapshot->tokens.ids};
        for (const std::string& t : snapshot->tokens.tokens) r->labels.push_back(tokenLabel(t));
        std::size_t total = snapshot->tokens.ids.size();
        // 1. File sentences in order while the total stays within the map's limit; the rest are counted.
        for (const QString& line : extra) {
            const QByteArray utf8 = line.toUtf8();
            Result<TokenizedText> t = model.tokenizer->encode(std::string_view(utf8.constData(), std::size_t(utf8.size())));
            if (!t || t->ids.empty() || int(t->ids.size()) > model.config.contextLength ||
                total + t->ids.size() > std::size_t(kQueryKeyMapMaxTokens)) {
                ++r->droppedLines;
                continue;
            }
            total += t->ids.size();
            sentences.push_back(t->ids);
            for (const std::string& s : t->tokens) r->labels.push_back(tokenLabel(s));
        }
        r->sentences = int(sentences.size());
        Result<QueryKeyMap> map = queryKeyMap(model, sentences, snapshot->settings, snapshot->focus);
        if (!map) return errorResult(QString::fromStdString(map.error()));
        r->map = std::move(*map);
        return r;
    };
}

void QkMapView::showResult(const SnapshotPtr&, const ResearchResultPtr& result)
{
    const auto* r = dynamic_cast<const QkMapResult*>(result.get());
    auto* title = qobject_cast<QCPTextElement*>(m_plot->plotLayout()->element(0, 0));
    m_queries->data()->clear();
    m_keys->data()->clear();
    m_selected = -1;
    m_highlighted.clear();
    m_selectedQuery->data()->clear();
    m_selectedKeys->data()->clear();
    m_selectedQuery->removeFromLegend();
    m_selectedKeys->removeFromLegend();
    for (QCPItemText* item : m_pointLabels) m_plot->removeItem(item);
    m_pointLabels.clear();
    if (!r) {
        if (title) title->setText(QString());
        m_sources->clear();
        m_plot->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    const QueryKeyMap& m = r->map;
    for (Eigen::Index i = 0; i < m.queries.rows(); ++i) {
        m_queries->addData(m.queries(i, 0), m.queries(i, 1));
        m_keys->addData(m.keys(i, 0), m.keys(i, 1));
    }
    m_queries->rescaleAxes();
    m_keys->rescaleAxes(true);
    // Room around the cloud for the labels of a chosen query and its keys.
    m_plot->xAxis->scaleRange(1.25);
    m_plot->yAxis->scaleRange(1.15);
    if (title)
        title->setText(tr("Queries and keys of layer %1, head %2: the two components keep %3% of the variance")
                           .arg(m.head.layer)
                           .arg(m.head.head)
                           .arg(100.0 * m.varianceKept, 0, 'f', 1));
    m_sources->setText(tr("%1 sentence(s), %2 tokens").arg(r->sentences).arg(m.queries.rows()) +
                       (r->droppedLines > 0 ? tr("; %1 file line(s) left out to stay within 2,000 tokens or the context").arg(r->droppedLines)
                                            : QString()));
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

int QkMapView::pointAt(const QPointF& pos, bool* isKey) const
{
    const auto* r = dynamic_cast<const QkMapResult*>(result().get());
    if (!r) return -1;
    const QueryKeyMap& m = r->map;
    double best = kPickRadius;
    int found = -1;
    for (int kind = 0; kind < 2; ++kind) {
        const Matrix& points = kind == 0 ? m.queries : m.keys;
        for (Eigen::Index i = 0; i < points.rows(); ++i) {
            const QPointF p(m_plot->xAxis->coordToPixel(points(i, 0)), m_plot->yAxis->coordToPixel(points(i, 1)));
            const double d = std::hypot(p.x() - pos.x(), p.y() - pos.y());
            if (d < best) {
                best = d;
                found = int(i);
                if (isKey) *isKey = kind == 1;
            }
        }
    }
    return found;
}

void QkMapView::hover(QMouseEvent* event)
{
    const auto* r = dynamic_cast<const QkMapResult*>(result().get());
    bool isKey = false;
    const int point = pointAt(event->position(), &isKey);
    if (!r || point < 0) {
        QToolTip::hideText();
        return;
    }
    QToolTip::showText(event->globalPosition().toPoint(),
                       tr("%1 '%2' — token %3 of sentence %4")
                           .arg(isKey ? tr("key") : tr("query"), r->labels[std::size_t(point)])
                           .arg(r->map.position[std::size_t(point)])
                           .arg(r->map.sentence[std::size_t(point)]),
                       m_plot);
}

void QkMapView::click(QMouseEvent* event)
{
    bool isKey = false;
    const int point = pointAt(event->position(), &isKey);
    selectQuery(point >= 0 && !isKey ? point : -1);
}

void QkMapView::selectQuery(int point)
{
    const auto* r = dynamic_cast<const QkMapResult*>(result().get());
    for (QCPItemText* label : m_pointLabels) m_plot->removeItem(label);
    m_pointLabels.clear();
    auto label = [this](double x, double y, const QString& text, const QColor& colour) {
        auto* item = new QCPItemText(m_plot);
        item->position->setCoords(x, y);
        item->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
        item->setPadding(QMargins(9, 0, 0, 6));
        item->setColor(colour);
        item->setText(text);
        m_pointLabels.push_back(item);
    };
    m_selectedQuery->data()->clear();
    m_selectedKeys->data()->clear();
    m_highlighted.clear();
    m_selected = r && point >= 0 && point < int(r->map.queries.rows()) ? point : -1;
    m_selectedKeys->removeFromLegend();
    m_selectedQuery->removeFromLegend();
    if (m_selected >= 0) {
        m_selectedQuery->setName(tr("query '%1'").arg(r->labels[std::size_t(m_selected)]));
        m_selectedQuery->addToLegend();
        m_selectedKeys->addToLegend();
        const QueryKeyMap& m = r->map;
        m_selectedQuery->addData(m.queries(m_selected, 0), m.queries(m_selected, 1));
        label(m.queries(m_selected, 0), m.queries(m_selected, 1), r->labels[std::size_t(m_selected)], kQueryColor.darker());
        // 1. The query's attention row within its own sentence; 2. its strongest keys with non-zero weight.
        const int sentence = m.sentence[std::size_t(m_selected)], position = m.position[std::size_t(m_selected)];
        const Matrix& A = m.attention[std::size_t(sentence)];  // (T_s, T_s)
        const int first = m_selected - position;               // the sentence's first point
        std::vector<int> keys(std::size_t(A.cols()));
        std::iota(keys.begin(), keys.end(), 0);
        std::stable_sort(keys.begin(), keys.end(), [&](int a, int b) { return A(position, a) > A(position, b); });
        for (int k : keys) {
            if (int(m_highlighted.size()) == kHighlightedKeys || A(position, k) <= 0.0f) break;
            m_highlighted.push_back(first + k);
            m_selectedKeys->addData(m.keys(first + k, 0), m.keys(first + k, 1));
            label(m.keys(first + k, 0), m.keys(first + k, 1),
                  QStringLiteral("%1 (%2)").arg(r->labels[std::size_t(first + k)]).arg(A(position, k), 0, 'f', 2), kKeyColor.darker());
        }
    }
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace attnscope
