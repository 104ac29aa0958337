#include "ui/models/randommodeldialog.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QSpinBox>

namespace attnscope {

RandomModelDialog::RandomModelDialog(QWidget* parent) : QDialog(parent)
{
    setWindowTitle(tr("Random model"));
    auto spin = [this](int lo, int hi, int value) {
        auto* s = new QSpinBox(this);
        s->setRange(lo, hi);
        s->setValue(value);
        return s;
    };
    m_layers = spin(1, 48, 2);
    m_heads = spin(1, 64, 4);
    m_dModel = spin(1, 4096, 64);
    m_seed = spin(0, 2'000'000'000, 1);
    m_layers->setToolTip(tr("How many transformer blocks the model stacks; each has its own attention heads."));
    m_heads->setToolTip(tr("How many heads each layer splits its attention into, each with its own queries, keys and values."));
    m_dModel->setToolTip(tr("The width of every token's vector; each head gets d_model / heads of it, so it must divide evenly."));
    m_seed->setToolTip(tr("The random seed: the same seed gives the same weights, so a picture can be made again."));
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    auto* form = new QFormLayout(this);
    form->addRow(tr("Layers"), m_layers);
    form->addRow(tr("Heads"), m_heads);
    form->addRow(tr("d_model"), m_dModel);
    form->addRow(tr("Seed"), m_seed);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

QString RandomModelDialog::spec() const
{
    return QStringLiteral("random:layers=%1,heads=%2,d_model=%3,seed=%4")
        .arg(m_layers->value()).arg(m_heads->value()).arg(m_dModel->value()).arg(m_seed->value());
}

} // namespace attnscope
