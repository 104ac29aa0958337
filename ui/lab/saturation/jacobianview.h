#pragma once
// View 3: the vanishing gradient. The mean Frobenius norm of the softmax Jacobian diag(p) - p p^T over the
// focused head's rows, against the score multiplier: as the rows saturate the norm, and with it the
// gradient that reaches the scores, collapses to 0.
#include "ui/lab/saturation/sweepviewbase.h"

namespace attnscope {

class JacobianView : public SweepViewBase {
    Q_OBJECT
public:
    explicit JacobianView(Document* document, QWidget* parent = nullptr);

protected:
    void showSweep(const SaturationSweep& sweep) override;
    void clearCurves() override;
    QString titleText() const override { return QStringLiteral("Softmax Jacobian norm"); }
    double currentValue(const SaturationSweep& sweep, int index) const override;

private:
    QCPGraph *m_norm, *m_baseline;
};

} // namespace attnscope
