#include "ui/common/matrixplot.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ui/drawing/cellmap.h"
#include "ui/drawing/colorbar.h"
#include "ui/drawing/colormap.h"
#include "ui/common/plottitles.h"

namespace attnscope {

namespace {

// Labels rows or columns by token, or by index when there are no labels, leaving at least minCells rows
// or columns between two labels.
void setLabels(QCPAxis* axis, const QStringList& labels, int count, double minCells)
{
    if (labels.size() == count && count > 0) {
        const int stride = std::clamp(static_cast<int>(std::ceil(minCells)), 1, count);
        auto ticker = QSharedPointer<QCPAxisTickerText>::create();
        for (int i = 0; i < count; i += stride) ticker->addTick(i, labels[i]);
        axis->setTicker(ticker);
    } else {
        auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
        double step = count > 16 ? std::pow(2.0, std::ceil(std::log2(count / 8.0))) : 1.0;
        while (step < minCells && step < count) step *= 2.0;
        ticker->setTickStep(step);
        ticker->setScaleStrategy(QCPAxisTickerFixed::ssNone);
        axis->setTicker(ticker);
    }
}

// How many rows (or columns) apart two labels must be so that their text does not overlap: a label
// needs its font's height across the direction it is stacked in; the column labels lean at 60 degrees,
// so two of them dx pixels apart stand dx * sin(60) apart. Whole cells, so that a small change of size
// does not relabel the axis.
int labelSpacing(const QCPAxis* axis, int count, double lean)
{
    if (count <= 1) return 1;
    const double pixels = axis->orientation() == Qt::Vertical ? axis->axisRect()->height() : axis->axisRect()->width();
    const double perCell = pixels / count * lean;
    if (perCell <= 0) return 1;
    const double needed = QFontMetricsF(axis->tickLabelFont()).height();
    return std::clamp(static_cast<int>(std::ceil(needed / perCell)), 1, count);
}

} // namespace

QString tokenLabel(const std::string& token)
{
    // Only the characters that are kept are converted: the token may be very long.
    const std::size_t bytes = std::min(token.size(), std::size_t(4 * kTokenLabelChars + 4));
    QString label = QString::fromUtf8(token.data(), qsizetype(bytes));
    if (bytes == token.size() && label.size() <= kTokenLabelChars) return label;
    int keep = kTokenLabelChars - 1;
    if (label.at(keep - 1).isHighSurrogate()) --keep;  // never half a character
    return label.left(keep) + QChar(0x2026);
}

QStringList tokenLabels(const std::vector<std::string>& tokens)
{
    QStringList labels;
    for (const std::string& t : tokens) labels << tokenLabel(t);
    return labels;
}

MatrixPlot::MatrixPlot(QWidget* parent) : QCustomPlot(parent)
{
    setNoAntialiasingOnDrag(true);
    m_title = new QCPTextElement(this, QString(), QFont(font().family(), 9, QFont::Bold));
    plotLayout()->insertRow(0);
    plotLayout()->addElement(0, 0, m_title);
    m_map = new CellMap(xAxis, yAxis);
    m_map->setInterpolate(false);
    m_map->setTightBoundary(false);  // cells centred on integer coordinates, whole at the edges
    yAxis->setRangeReversed(true);  // row 0 at the top, as a matrix is written
    xAxis->grid()->setVisible(false);
    yAxis->grid()->setVisible(false);
    xAxis->setTickLabelRotation(60);
    QFont small = font();
    small.setPointSize(7);
    xAxis->setTickLabelFont(small);
    yAxis->setTickLabelFont(small);
    m_scale = new QCPColorScale(this);
    ColorBar::install(m_scale);  // a vector bar in SVG and PDF
    m_scale->setBarWidth(6);
    plotLayout()->addElement(1, 1, m_scale);
    m_map->setColorScale(m_scale);
    m_highlight = new QCPItemRect(this);
    m_highlight->setPen(QPen(QColor(255, 140, 0), 2.5));
    m_highlight->setBrush(Qt::NoBrush);
    m_highlight->setVisible(false);
    connect(this, &QCustomPlot::mousePress, this, &MatrixPlot::onPlotClick);
    connect(this, &QCustomPlot::afterLayout, this, &MatrixPlot::fitLabels);
}

void MatrixPlot::fitLabels()
{
    // A plot too small for its labels (a row of thumbnails at presenter mode's doubled type) drops them
    // and gives their margin to the cells; the title still names it. Decided on the widget's size and the
    // font alone, so showing or hiding labels cannot change the decision.
    const double fontHeight = QFontMetricsF(yAxis->tickLabelFont()).height();
    const bool room = height() >= kMinLabelledSize * fontHeight && width() >= kMinLabelledSize * fontHeight;
    bool retick = false;
    if (room != yAxis->tickLabels()) {
        xAxis->setTickLabels(room);
        yAxis->setTickLabels(room);
        replot(rpQueuedReplot);  // the margins follow in the next layout
        // The axes took their tick vectors before this, without labels when they had none; drawn now,
        // an axis would read a label for every tick from a list that holds none (QCPAxis::draw does not
        // check), so the vectors are taken again below, before anything is drawn.
        retick = true;
    }
    // The layout has just given the axes their size; the ticks were taken before it, so if the labels no
    // longer fit (or fit more densely than shown) they are set again and the tick vectors rebuilt now, in
    // this same replot, before anything is drawn.
    const int rowSpacing = labelSpacing(yAxis, m_rows, 1.0);
    const int colSpacing = labelSpacing(xAxis, m_cols, std::sin(xAxis->tickLabelRotation() * M_PI / 180.0));
    if (rowSpacing != m_rowSpacing || colSpacing != m_colSpacing) {
        m_rowSpacing = rowSpacing;
        m_colSpacing = colSpacing;
        setLabels(yAxis, m_rowLabels, m_rows, m_rowSpacing);
        setLabels(xAxis, m_colLabels, m_cols, m_colSpacing);
        retick = true;
    }
    if (retick) axisRect()->update(QCPLayoutElement::upPreparation);
}

void MatrixPlot::setTitle(const QString& title)
{
    m_title->setText(title);
}

void MatrixPlot::clear()
{
    setTitle(QString());
    setMatrix(Matrix(), Scale::Symmetric);
}

QString MatrixPlot::title() const { return m_title ? fullTitle(m_title) : QString(); }

void MatrixPlot::setKeepsReadableSize(bool on)
{
    m_readable = on;
    updateGeometry();
}

QSize MatrixPlot::minimumSizeHint() const
{
    // The title's width is left out: titles wrap to the width they are given (common/plottitles.h).
    if (!m_readable) return QCustomPlot::minimumSizeHint();
    const int title = QFontMetrics(m_title->font()).height();
    const int tick = QFontMetrics(yAxis->tickLabelFont()).height();
    return {6 * tick, 3 * title + 6 * tick};
}

void MatrixPlot::setShowColorScale(bool on)
{
    m_scale->setVisible(on);
    if (!on && plotLayout()->hasElement(1, 1)) plotLayout()->take(m_scale);
    else if (on && !plotLayout()->hasElement(1, 1)) plotLayout()->addElement(1, 1, m_scale);
    plotLayout()->simplify();
}

void MatrixPlot::setMatrix(const Matrix& m, Scale scale, const QStringList& rowLabels, const QStringList& colLabels)
{
    m_rows = static_cast<int>(m.rows());
    m_cols = static_cast<int>(m.cols());
    QCPColorMapData* data = m_map->data();
    // QCustomPlot sizes a cell from the distance between the first and last cell's centres, so a single row
    // or column would have no height or width and draw nothing: it is stored twice, centres ±0.25 apart.
    const bool twiceRow = m_rows == 1, twiceCol = m_cols == 1;
    data->setSize(twiceCol ? 2 : std::max(1, m_cols), twiceRow ? 2 : std::max(1, m_rows));
    data->setRange(twiceCol ? QCPRange(-0.25, 0.25) : QCPRange(0, std::max(0, m_cols - 1)),
                   twiceRow ? QCPRange(-0.25, 0.25) : QCPRange(0, std::max(0, m_rows - 1)));
    float extent = 0.0f;
    for (int i = 0; i < m_rows; ++i)
        for (int j = 0; j < m_cols; ++j) {
            const float v = m(i, j);
            // QCustomPlot has a colour for NaN only: masked -infinity travels as NaN and is read back as -inf.
            const double cell = std::isfinite(v) ? double(v) : std::numeric_limits<double>::quiet_NaN();
            data->setCell(j, i, cell);
            if (twiceRow) data->setCell(j, 1, cell);
            if (twiceCol) data->setCell(1, i, cell);
            if (twiceRow && twiceCol) data->setCell(1, 1, cell);
            if (std::isfinite(v)) extent = std::max(extent, std::abs(v));
        }
    if (scale == Scale::Probability) {
        m_map->setGradient(ColorMap::gradient());
        m_map->setDataRange(QCPRange(0.0, 1.0));
    } else if (scale == Scale::UnitSigned) {
        m_map->setGradient(ColorMap::divergingGradient());
        m_map->setDataRange(QCPRange(-1.0, 1.0));
    } else if (scale == Scale::Magnitude) {
        m_map->setGradient(ColorMap::gradient());
        m_map->setDataRange(QCPRange(0.0, extent > 0 ? extent : 1.0));
    } else {
        m_map->setGradient(ColorMap::divergingGradient());
        const double e = extent > 0 ? extent : 1.0;
        m_map->setDataRange(QCPRange(-e, e));
    }
    m_rowLabels = rowLabels;
    m_colLabels = colLabels;
    setLabels(yAxis, m_rowLabels, m_rows, m_rowSpacing);
    setLabels(xAxis, m_colLabels, m_cols, m_colSpacing);
    xAxis->setRange(-0.5, m_cols - 0.5);
    yAxis->setRange(-0.5, m_rows - 0.5);
    replot(rpQueuedReplot);
}

void MatrixPlot::setHighlight(const QRect& cells)
{
    m_highlight->setVisible(!cells.isEmpty());
    if (!cells.isEmpty()) {
        m_highlight->topLeft->setCoords(cells.left() - 0.5, cells.top() - 0.5);
        m_highlight->bottomRight->setCoords(cells.right() + 0.5, cells.bottom() + 0.5);
    }
    replot(rpQueuedReplot);
}

Matrix MatrixPlot::shown() const
{
    Matrix m(m_rows, m_cols);
    for (int i = 0; i < m_rows; ++i)
        for (int j = 0; j < m_cols; ++j) {
            const double v = m_map->data()->cell(j, i);
            m(i, j) = std::isnan(v) ? -std::numeric_limits<float>::infinity() : static_cast<float>(v);
        }
    return m;
}

void MatrixPlot::onPlotClick(QMouseEvent* event)
{
    if (m_rows == 0 || m_cols == 0) return;
    const int col = static_cast<int>(std::lround(xAxis->pixelToCoord(event->position().x())));
    const int row = static_cast<int>(std::lround(yAxis->pixelToCoord(event->position().y())));
    if (row >= 0 && row < m_rows && col >= 0 && col < m_cols) emit cellClicked(row, col);
}

} // namespace attnscope
