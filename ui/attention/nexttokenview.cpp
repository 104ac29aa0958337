#include "attention/nexttokenview.h"

#include <QPainter>

namespace attnscope {

NextTokenView::NextTokenView(QWidget* parent) : QWidget(parent)
{
    setMinimumHeight(sizeHint().height() / 2);
}

QSize NextTokenView::sizeHint() const
{
    const int line = fontMetrics().height() + 4;
    return {360, (Snapshot::kNextTokens + 2) * line + 8};
}

void NextTokenView::setSnapshot(const SnapshotPtr& snapshot)
{
    m_shown = snapshot ? snapshot->nextTokens : std::vector<NextToken>{};
    // A random model's word tokenizer hashes words one way, so its predictions can only be shown as ids,
    // and its untrained weights make them meaningless: say so rather than let them look like knowledge.
    m_randomModel = snapshot && snapshot->model && snapshot->model->tokenizer->kind() == "word";
    update();
}

void NextTokenView::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    const QFontMetrics fm = fontMetrics();
    const int line = fm.height() + 4;
    int y = 4;
    QFont bold = font();
    bold.setBold(true);
    p.setFont(bold);
    p.drawText(QRect(6, y, width() - 12, line), Qt::AlignLeft | Qt::AlignVCenter, tr("Next token"));
    const int titleWidth = QFontMetrics(bold).horizontalAdvance(tr("Next token ")) + 6;
    p.setFont(font());
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(QRect(6 + titleWidth, y, width() - 12 - titleWidth, line), Qt::AlignLeft | Qt::AlignVCenter,
               m_randomModel ? tr("random weights: ids only, no meaning; open a GPT-2 folder for real ones")
                             : tr("the model's prediction after the last token"));
    y += line + 2;
    p.setPen(palette().color(QPalette::WindowText));
    if (m_shown.empty()) {
        p.drawText(QRect(6, y, width() - 12, line), Qt::AlignLeft | Qt::AlignVCenter, tr("nothing to predict from"));
        return;
    }
    // Columns: token, probability, and a bar whose length is the probability.
    const int tokenWidth = std::min(width() / 3, 160), numberWidth = fm.horizontalAdvance(QStringLiteral("0.0000 "));
    const int barX = 6 + tokenWidth + numberWidth, barWidth = std::max(20, width() - barX - 10);
    for (const NextToken& n : m_shown) {
        const QString token = fm.elidedText(QString::fromStdString(n.token), Qt::ElideRight, tokenWidth - 6);
        p.drawText(QRect(6, y, tokenWidth, line), Qt::AlignLeft | Qt::AlignVCenter, token);
        p.drawText(QRect(6 + tokenWidth, y, numberWidth, line), Qt::AlignRight | Qt::AlignVCenter,
                   QString::number(n.p, 'f', 4) + QLatin1Char(' '));
        p.fillRect(QRect(barX, y + 3, std::max(1, int(n.p * barWidth + 0.5)), line - 6), QColor(0x3b, 0x52, 0x8b));
        y += line;
    }
}

} // namespace attnscope
