#include "ui/attention/nexttokenview.h"

#include <QPainter>

#include "ui/common/matrixplot.h"

namespace attnscope {

NextTokenView::NextTokenView(QWidget* parent) : QWidget(parent)
{
    setMinimumHeight(sizeHint().height() / 2);
}

QSize NextTokenView::sizeHint() const
{
    // The title, the rows, and for encoders a line naming each [MASK] above its column.
    const int line = fontMetrics().height() + 4;
    return {360, (Snapshot::kNextTokens + (m_encoder ? 3 : 2)) * line + 8};
}

void NextTokenView::setSnapshot(const SnapshotPtr& snapshot)
{
    const ModelPtr model = snapshot ? snapshot->model : nullptr;
    m_shown = snapshot ? snapshot->nextTokens : std::vector<NextToken>{};
    m_masked = snapshot ? snapshot->maskedTokens : std::vector<MaskedPrediction>{};
    m_tokens = snapshot ? snapshot->tokens.tokens : std::vector<std::string>{};
    // A random model's word tokenizer hashes words one way, so its predictions can only be shown as ids,
    // and its untrained weights make them meaningless: say so rather than let them look like knowledge.
    m_randomModel = model && model->tokenizer->kind() == "word";
    m_encoder = model && !model->config.causal;
    // An encoder–decoder's encoder fills no [MASK]: its decoder writes, which other pages show.
    m_encoderDecoder = model && model->isEncoderDecoder();
    m_unavailable = m_encoderDecoder ? tr("This encoder feeds a decoder, which writes an answer rather than filling [MASK] "
                                          "tokens: Research > Generation writes it word by word, and Step by step > "
                                          "Cross-attention draws it against the sentence.")
                    : m_encoder      ? QString::fromStdString(canPredictMasked(*model).error())
                                     : QString();
    setEnabled(m_unavailable.isEmpty() || m_encoderDecoder);
    setToolTip(m_unavailable);
    // An encoder's list is a line taller; ask the splitter for all of it so the last filler is not cut.
    setMinimumHeight(m_encoder ? sizeHint().height() : sizeHint().height() / 2);
    update();
}

void NextTokenView::paintRows(QPainter& p, const std::vector<NextToken>& rows, int x, int y, int width)
{
    // Columns: token, probability, and a bar whose length is the probability.
    const QFontMetrics fm = fontMetrics();
    const int line = fm.height() + 4;
    const int tokenWidth = std::min(width / 3, 160), numberWidth = fm.horizontalAdvance(QStringLiteral("0.0000 "));
    const int barX = x + tokenWidth + numberWidth, barWidth = std::max(20, x + width - barX - 10);
    for (const NextToken& n : rows) {
        const QString token = fm.elidedText(QString::fromStdString(n.token), Qt::ElideRight, tokenWidth - 6);
        p.drawText(QRect(x, y, tokenWidth, line), Qt::AlignLeft | Qt::AlignVCenter, token);
        p.drawText(QRect(x + tokenWidth, y, numberWidth, line), Qt::AlignRight | Qt::AlignVCenter,
                   QString::number(n.p, 'f', 4) + QLatin1Char(' '));
        p.fillRect(QRect(barX, y + 3, std::max(1, int(n.p * barWidth + 0.5)), line - 6), QColor(0x3b, 0x52, 0x8b));
        y += line;
    }
}

void NextTokenView::paintMasked(QPainter& p, int y)
{
    const QFontMetrics fm = fontMetrics();
    const int line = fm.height() + 4;
    if (!m_unavailable.isEmpty()) {
        if (!m_encoderDecoder) p.setPen(palette().color(QPalette::Disabled, QPalette::WindowText));
        p.drawText(QRect(6, y, width() - 12, height() - y), Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, m_unavailable);
        return;
    }
    if (m_masked.empty()) {
        p.drawText(QRect(6, y, width() - 12, line * 2), Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap,
                   tr("type [MASK] in the sentence to see what the model would put there"));
        return;
    }
    // One column per mask, as many as fit at 170 px each; the rest are counted.
    const int fit = std::max(1, (width() - 12) / 170);
    const int shown = std::min<int>(fit, int(m_masked.size()));
    const int columnWidth = (width() - 12) / shown;
    for (int c = 0; c < shown; ++c) {
        const MaskedPrediction& m = m_masked[std::size_t(c)];
        const int x = 6 + c * columnWidth;
        QString where = tr("[MASK] at %1").arg(m.position);
        if (m.position > 0 && m.position - 1 < int(m_tokens.size()))
            where += tr(" after “%1”").arg(tokenLabel(m_tokens[std::size_t(m.position - 1)]));
        QFont bold = font();
        bold.setBold(true);
        p.setFont(bold);
        p.drawText(QRect(x, y, columnWidth - 8, line), Qt::AlignLeft | Qt::AlignVCenter,
                   QFontMetrics(bold).elidedText(where, Qt::ElideRight, columnWidth - 8));
        p.setFont(font());
        paintRows(p, m.top, x, y + line, columnWidth - 8);
    }
    if (shown < int(m_masked.size())) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(QRect(6, y + (Snapshot::kNextTokens + 1) * line, width() - 12, line), Qt::AlignLeft | Qt::AlignVCenter,
                   tr("%1 more [MASK] not shown: widen the panel").arg(int(m_masked.size()) - shown));
    }
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
    const QString title = m_encoderDecoder ? tr("Decoder") : m_encoder ? tr("Masked tokens") : tr("Next token");
    p.setPen(palette().color(QPalette::WindowText));
    p.drawText(QRect(6, y, width() - 12, line), Qt::AlignLeft | Qt::AlignVCenter, title);
    const int titleWidth = QFontMetrics(bold).horizontalAdvance(title + QLatin1Char(' ')) + 6;
    p.setFont(font());
    p.setPen(palette().color(QPalette::PlaceholderText));
    const QString subtitle = m_encoderDecoder ? tr("what the model writes from this sentence")
                             : m_encoder      ? tr("the model's top fillers for each [MASK]")
                             : m_randomModel ? tr("random weights: ids only, no meaning; open a GPT-2 folder for real ones")
                                             : tr("the model's prediction after the last token");
    // Cut with an ellipsis where the panel is narrow (or the type large, in presenter mode), not mid-word.
    const int room = width() - 12 - titleWidth;
    p.drawText(QRect(6 + titleWidth, y, room, line), Qt::AlignLeft | Qt::AlignVCenter, fm.elidedText(subtitle, Qt::ElideRight, room));
    y += line + 2;
    p.setPen(palette().color(QPalette::WindowText));
    if (m_encoder) {
        paintMasked(p, y);
        return;
    }
    if (m_shown.empty()) {
        p.drawText(QRect(6, y, width() - 12, line), Qt::AlignLeft | Qt::AlignVCenter, tr("nothing to predict from"));
        return;
    }
    paintRows(p, m_shown, 6, y, width() - 12);
}

} // namespace attnscope
