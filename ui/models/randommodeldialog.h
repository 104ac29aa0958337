#pragma once
// Asks for the sizes and seed of a random model and turns them into a "random:..." spec.
#include <QDialog>

class QSpinBox;

namespace attnscope {

class RandomModelDialog : public QDialog {
    Q_OBJECT
public:
    explicit RandomModelDialog(QWidget* parent = nullptr);
    QString spec() const;  // e.g. "random:layers=2,heads=4,d_model=64,seed=1"

private:
    QSpinBox* m_layers;
    QSpinBox* m_heads;
    QSpinBox* m_dModel;
    QSpinBox* m_seed;
};

} // namespace attnscope
