#pragma once
// Draws a QCPColorScale's bar as one rectangle filled with a linear gradient: a vector in SVG and PDF
// (QCPColorScale paints a bitmap there), and the same picture on screen. install() takes the scale's own
// bar drawing off its layer (its axis and labels stay) and puts this in its place, under the axis.
#include <QPointer>
#include <qcustomplot.h>

namespace attnscope {

class ColorBar : public QCPLayerable {
    Q_OBJECT
public:
    static ColorBar* install(QCPColorScale* scale);

protected:
    void applyDefaultAntialiasingHint(QCPPainter* painter) const override;
    void draw(QCPPainter* painter) override;

private:
    explicit ColorBar(QCPColorScale* scale);
    QPointer<QCPColorScale> m_scale;
};

} // namespace attnscope
