#pragma once
// The heatmap layer every view uses instead of a plain QCPColorMap. Two things on top of it:
//   1. On SVG and PDF it draws one vector rectangle per cell (QCPColorMap embeds a bitmap there), up to
//      kMaxVectorCells cells; larger maps fall back to the bitmap.
//   2. It follows the chosen colour map (ui/drawing/colormap.h): a weights ramp is swapped for the new one,
//      the right way round, and the diverging ramp takes the new masked colour; a plot background or legend
//      swatch painted in the old masked colour takes the new one.
#include <qcustomplot.h>

namespace attnscope {

class CellMap : public QCPColorMap {
    Q_OBJECT
public:
    CellMap(QCPAxis* keyAxis, QCPAxis* valueAxis);

protected:
    void draw(QCPPainter* painter) override;

private:
    void followColorMap(const QColor& oldMasked, const QColor& newMasked);
};

} // namespace attnscope
