#pragma once
// One matrix as a heatmap, the building block of the step-by-step views: row 0 at the top, no
// interpolation, -infinity (masked) drawn in ColorMap's masked grey, distinct from the colour of 0,
// tokens as tick labels where rows or columns are tokens, thinned to every second, third, ... row or
// column when the plot is too small to show them all without overlap. The drawn values can be read back,
// so tests check what is on screen against the core.
//
// Dimension letters: R rows, K columns.
#include <QStringList>
#include <qcustomplot.h>

#include "core/model/weights.h"

namespace attnscope {

class MatrixPlot : public QCustomPlot {
    Q_OBJECT
public:
    enum class Scale {
        Probability,  // fixed [0, 1], ColorMap::gradient(): attention weights
        Symmetric,    // [-max|v|, max|v|], ColorMap::divergingGradient(): activations, scores, weights of W
        Magnitude,    // [0, max v], ColorMap::gradient(): non-negative measures such as how far attention moved
        UnitSigned,   // fixed [-1, 1], ColorMap::divergingGradient(): scores of that range (a head's copying score)
    };

    explicit MatrixPlot(QWidget* parent = nullptr);

    void setTitle(const QString& title);
    QString title() const;
    // m (R, K); rowLabels and colLabels may be empty (indices) or have R and K entries.
    void setMatrix(const Matrix& m, Scale scale, const QStringList& rowLabels = {}, const QStringList& colLabels = {});
    // No title and no cells: for a view with nothing to show, so no matrix of an earlier text stays drawn.
    void clear();
    // Draws a frame around rows [row0, row0+rows) x columns [col0, col0+cols); an empty rect removes it.
    void setHighlight(const QRect& cells);
    void setShowColorScale(bool on);
    // A plot that keeps a readable size: its minimum holds a title of three lines (the most plot titles
    // wrap to) above a few rows of cells, in whatever type it has now (presenter mode doubles it), instead
    // of shrinking until the cells are gone. Off by default, so grids of thumbnails may stay small.
    void setKeepsReadableSize(bool on);
    QSize minimumSizeHint() const override;

    // The values the map holds, masked cells as -infinity. (R, K)
    Matrix shown() const;
    QCPColorMap* colorMap() const { return m_map; }

signals:
    void cellClicked(int row, int col);

private:
    void onPlotClick(QMouseEvent* event);
    void fitLabels();  // thins the tick labels to what the axes' length can show without overlap

    QCPTextElement* m_title = nullptr;
    QCPColorMap* m_map = nullptr;
    QCPColorScale* m_scale = nullptr;
    QCPItemRect* m_highlight = nullptr;
    int m_rows = 0, m_cols = 0;
    QStringList m_rowLabels, m_colLabels;  // (R) and (K), or empty for indices
    bool m_readable = false;
    int m_rowSpacing = 1, m_colSpacing = 1;  // at least this many rows (columns) between two labels
    static constexpr double kMinLabelledSize = 9.0;  // font heights a plot needs each way to keep its labels
};

// A token as an axis, a list or a caption shows it: at most kTokenLabelChars characters, a longer one cut with
// "…". Text can hold a token of 100,000 characters; drawn whole at an angle, its label would be a picture of
// gigabytes.
constexpr int kTokenLabelChars = 24;
QString tokenLabel(const std::string& token);
// tokenLabel of each of the snapshot's tokens.
QStringList tokenLabels(const std::vector<std::string>& tokens);

} // namespace attnscope
