#include "ui/research/readouts/logitlensview.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cmath>
#include <qcustomplot.h>

#include "ui/drawing/colormap.h"
#include "ui/common/matrixplot.h"
#include "ui/document/settingstext.h"

namespace attnscope {

namespace {

// Small probabilities keep their size visible: 0.012, then 3.4e-05 rather than 0.000.
QString probabilityText(double p) { return p >= 1e-3 ? QString::number(p, 'f', 3) : QString::number(p, 'e', 1); }

// Black or white, whichever reads better on `background`.
QColor inkOn(const QColor& background)
{
    const double luminance = 0.299 * background.red() + 0.587 * background.green() + 0.114 * background.blue();
    return luminance > 140.0 ? Qt::black : Qt::white;
}

constexpr int kCellChars = 10;  // a cell shows at most this many characters of its token

} // namespace

QStringList lensRowLabels(int rows)
{
    QStringList labels;
    for (int r = 0; r < rows; ++r) labels << (r == 0 ? QObject::tr("embeddings") : QObject::tr("after L%1").arg(r - 1));
    return labels;
}

LogitLensView::LogitLensView(Document* document, QWidget* parent)
    : ResearchView(document, parent), m_colour(new QComboBox), m_table(new QTableWidget), m_plot(new QCustomPlot)
{
    m_colour->addItem(tr("top token's probability"), int(Colour::TopProbability));
    m_colour->addItem(tr("next token's probability"), int(Colour::TargetProbability));
    m_colour->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);  // may shrink in a narrow view
    m_colour->setMinimumContentsLength(14);
    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Colour by")));
    top->addWidget(m_colour, 1);
    top->addStretch(1);

    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionMode(QAbstractItemView::NoSelection);  // a selection colour would hide the cells' own
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    // Rows share the height there is (a few layers fill the view, in large type for a class) and never get
    // shorter than their two lines; more rows than fit scroll.
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_table->verticalHeader()->setMinimumSectionSize(2 * fontMetrics().height() + 6);

    m_plot->setNoAntialiasingOnDrag(true);
    m_position = m_plot->addGraph();
    m_position->setPen(QPen(QColor(59, 82, 139), 2));
    m_position->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 6));
    m_mean = m_plot->addGraph();
    m_mean->setPen(QPen(QColor(140, 140, 140), 1.5, Qt::DashLine));
    m_mean->setName(tr("mean over the text"));
    m_plot->yAxis->setRange(0.0, 1.0);
    m_plot->yAxis->setLabel(tr("probability"));
    m_plot->xAxis->setTickLabelRotation(45);
    m_plot->legend->setVisible(true);
    m_plot->legend->setFont(QFont(font().family(), 8));
    m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
    m_plot->plotLayout()->insertRow(0);
    m_plot->plotLayout()->addElement(0, 0, new QCPTextElement(m_plot, QString(), QFont(font().family(), 9, QFont::Bold)));
    m_plot->setMinimumSize(220, 160);

    auto* note = new QLabel(tr("Each row reads the residual stream through the model's own final norm and head: from "
                               "the top, the embeddings, then the stream after each block; the last row is the model's "
                               "real prediction. Click a column to follow its position."));
    note->setWordWrap(true);
    QSplitter* split = proportionalSplit(Qt::Horizontal, {m_table, m_plot}, {3, 2});
    auto* column = new QVBoxLayout(this);
    column->addLayout(top);
    column->addWidget(split, 1);
    column->addWidget(note);
    column->addWidget(makeStatusLabel());

    m_colour->setObjectName(QStringLiteral("lens-colour"));
    m_colour->setToolTip(tr("What a cell's colour shows: how sure the row is of its top token, or how much it "
                            "already gives the token that really follows."));
    m_table->setObjectName(QStringLiteral("lens-table"));
    m_table->setToolTip(tr("Each cell: the most probable token after that block, and its probability."));
    connect(m_colour, &QComboBox::currentIndexChanged, this, &LogitLensView::fillTable);
    connect(m_table, &QTableWidget::cellClicked, this, [this](int, int col) { setPosition(col); });
    connect(m_table->horizontalHeader(), &QHeaderView::sectionClicked, this, &LogitLensView::setPosition);
    connect(ColorMapNotifier::instance(), &ColorMapNotifier::changed, this, &LogitLensView::fillTable);
}

const LogitLensResult* LogitLensView::lensResult() const { return dynamic_cast<const LogitLensResult*>(result().get()); }

void LogitLensView::setPosition(int position)
{
    m_selected = position;
    showPosition();
}

ResearchJob LogitLensView::job(const SnapshotPtr& snapshot)
{
    QString nothing = nothingToMeasure(*document(), *snapshot);
    if (nothing.isEmpty()) {
        if (Status s = canReadLens(*snapshot->model); !s.ok()) nothing = coreSentence(s.error());
    }
    return [snapshot, nothing](const JobContext& context) -> ResearchResultPtr {
        if (!nothing.isEmpty()) return errorResult(nothing);
        Result<LogitLens> lens = logitLens(*snapshot->model, snapshot->tokens.ids, snapshot->settings, kTopCount, context.keepGoing());
        if (!lens) return errorResult(coreSentence(lens.error()));
        auto r = std::make_shared<LogitLensResult>();
        r->lens = std::move(*lens);
        r->tokens = snapshot->tokens.tokens;
        return r;
    };
}

void LogitLensView::showResult(const SnapshotPtr&, const ResearchResultPtr& result)
{
    const auto* r = dynamic_cast<const LogitLensResult*>(result.get());
    m_colour->setItemText(int(Colour::TargetProbability), r && r->lens.maskedHead
                                                              ? tr("own token's probability")
                                                              : tr("next token's probability"));
    // A first result, or a text now too short: a decoder's last position has no next token to follow, so the
    // one before it; an encoder's last.
    const int T = r ? r->lens.tokens : 0;
    if (m_selected < 0 || m_selected >= T) m_selected = r && !r->lens.maskedHead && T >= 2 ? T - 2 : T - 1;
    fillTable();
}

void LogitLensView::fillTable()
{
    const LogitLensResult* r = lensResult();
    m_table->clear();
    if (!r) {
        m_table->setRowCount(0);
        m_table->setColumnCount(0);
        showPosition();
        return;
    }
    const LogitLens& lens = r->lens;
    const bool byTarget = Colour(m_colour->currentData().toInt()) == Colour::TargetProbability;
    m_table->setRowCount(lens.rows);
    m_table->setColumnCount(lens.tokens);
    m_table->setVerticalHeaderLabels(lensRowLabels(lens.rows));
    m_table->setHorizontalHeaderLabels(tokenLabels(r->tokens));
    const QString what = lens.maskedHead ? tr("its own token") : tr("the next token");
    for (int row = 0; row < lens.rows; ++row)
        for (int t = 0; t < lens.tokens; ++t) {
            const std::vector<NextToken>& top = lens.at(row, t);
            const NextToken& best = top.front();
            QString token = QString::fromStdString(best.token);
            if (token.size() > kCellChars) token = token.left(kCellChars - 1) + QChar(0x2026);
            auto* item = new QTableWidgetItem(token + QLatin1Char('\n') + probabilityText(best.p));
            item->setTextAlignment(Qt::AlignCenter);
            const double target = lens.target(row, t);
            // A position with nothing to predict (a decoder's last) has no target colour: the masked grey.
            const QColor background = byTarget && std::isnan(target) ? ColorMap::maskedColor()
                                                                     : QColor(ColorMap::weightColor(byTarget ? target : best.p));
            item->setBackground(background);
            item->setForeground(inkOn(background));
            QStringList tip;
            tip << tr("%1 · position %2 '%3'").arg(lensRowLabels(lens.rows)[row]).arg(t).arg(tokenLabel(r->tokens[std::size_t(t)]));
            for (const NextToken& n : top) tip << QStringLiteral("%1  %2").arg(tokenLabel(n.token), probabilityText(n.p));
            tip << (std::isnan(target) ? tr("no next token at the last position")
                                       : tr("p(%1) = %2").arg(what, probabilityText(target)));
            item->setToolTip(tip.join(QLatin1Char('\n')));
            m_table->setItem(row, t, item);
        }
    showPosition();
}

void LogitLensView::showPosition()
{
    const LogitLensResult* r = lensResult();
    auto* title = qobject_cast<QCPTextElement*>(m_plot->plotLayout()->element(0, 0));
    m_position->data()->clear();
    m_mean->data()->clear();
    if (!r || m_selected < 0 || m_selected >= r->lens.tokens) {
        if (title) title->setText(QString());
        m_plot->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    const LogitLens& lens = r->lens;
    const int t = m_selected;
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    const QStringList rowLabels = lensRowLabels(lens.rows);
    const int spacing = std::max(1, (lens.rows + 12) / 13);  // at most about 13 labels
    QVector<double> x, own, mean;
    for (int row = 0; row < lens.rows; ++row) {
        x << row;
        own << lens.target(row, t);
        double sum = 0.0;
        int n = 0;
        for (int p = 0; p < lens.tokens; ++p)
            if (!std::isnan(lens.target(row, p))) sum += lens.target(row, p), ++n;
        mean << (n > 0 ? sum / n : std::nan(""));
        if (row % spacing == 0) ticker->addTick(row, row == 0 ? tr("emb") : QStringLiteral("L%1").arg(row - 1));
    }
    m_position->setData(x, own, true);
    m_mean->setData(x, mean, true);
    m_plot->xAxis->setTicker(ticker);
    m_plot->xAxis->setRange(-0.3, lens.rows - 0.7);
    const QString token = tokenLabel(r->tokens[std::size_t(t)]);
    if (lens.maskedHead) {
        m_position->setName(tr("p(own token '%1')").arg(token));
        if (title) title->setText(tr("Position %1 '%2': its own token by layer").arg(t).arg(token));
    } else if (t + 1 < lens.tokens) {
        const QString next = tokenLabel(r->tokens[std::size_t(t + 1)]);
        m_position->setName(tr("p('%1' after '%2')").arg(next, token));
        if (title) title->setText(tr("Position %1 '%2': the next token '%3' by layer").arg(t).arg(token, next));
    } else {
        m_position->setName(tr("position %1 (the last: no next token)").arg(t));
        if (title) title->setText(tr("Position %1 '%2' is the last: click an earlier column").arg(t).arg(token));
    }
    m_plot->replot(QCustomPlot::rpQueuedReplot);
    // The followed position's header in bold and marked, the others plain.
    for (int c = 0; c < m_table->columnCount(); ++c) {
        QTableWidgetItem* header = m_table->horizontalHeaderItem(c);
        if (!header) continue;
        QFont f = header->font();
        f.setBold(c == t);
        header->setFont(f);
        const QString label = tokenLabel(r->tokens[std::size_t(c)]);
        header->setText(c == t ? QStringLiteral("▸%1").arg(label) : label);
    }
    if (QTableWidgetItem* cell = m_table->item(0, t)) m_table->scrollToItem(cell, QAbstractItemView::PositionAtCenter);
}

} // namespace attnscope
