#pragma once
// View 1: the focused head's mean row entropy and mean max weight against the score multiplier, with the
// uniform maximum (mean ln n) as a reference and the random unit-variance q, k baseline dashed.
#include "ui/lab/saturation/sweepviewbase.h"

namespace attnscope {

class SaturationView : public SweepViewBase {
    Q_OBJECT
public:
    explicit SaturationView(Document* document, QWidget* parent = nullptr);
    double uniformReference() const { return m_uniformValue; }  // the y of the ln(n) line

protected:
    void showSweep(const SaturationSweep& sweep) override;
    void clearCurves() override;
    QString titleText() const override { return QStringLiteral("Saturation sweep"); }
    double currentValue(const SaturationSweep& sweep, int index) const override;

private:
    QCPGraph *m_entropy, *m_baselineEntropy, *m_maxWeight, *m_baselineMaxWeight;
    QCPItemStraightLine* m_uniform;
    QCPItemText* m_uniformLabel;
    double m_uniformValue = 0.0;
};

} // namespace attnscope
