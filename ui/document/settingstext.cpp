#include "ui/document/settingstext.h"

#include <QObject>
#include <QStringList>

namespace attnscope {

QString maskSummary(const AttentionSettings& s)
{
    if (s.sparse.active()) {
        const QString pattern = QString::fromStdString(describePattern(s.sparse));
        return s.mask == MaskKind::Causal ? QObject::tr("causal, %1").arg(pattern) : QObject::tr("two-sided, %1").arg(pattern);
    }
    if (s.mask == MaskKind::None) return QObject::tr("no mask");
    if (!s.hasWindow()) return QObject::tr("causal mask");
    const QString window = QObject::tr("window of %1").arg(s.window);
    if (s.sinks == 0) return window;
    return s.sinks == 1 ? QObject::tr("%1 + 1 sink").arg(window) : QObject::tr("%1 + %2 sinks").arg(window).arg(s.sinks);
}

QString settingsSummary(const AttentionSettings& s, bool scaleFolded)
{
    QStringList parts;
    parts << maskSummary(s);
    if (scaleFolded) parts << (s.scaling == Scaling::SqrtDk ? QObject::tr("√dₖ as trained") : QObject::tr("×√dₖ"));
    else parts << (s.scaling == Scaling::SqrtDk ? QObject::tr("÷√dₖ") : QObject::tr("unscaled"));
    parts << QObject::tr("T = %1").arg(s.temperature, 0, 'f', 2);
    if (s.positional != PositionalOverride::Default)
        parts << QObject::tr("positions: %1").arg(QString::fromUtf8(toString(s.positional).data(), int(toString(s.positional).size())));
    if (!s.blockedKeys.empty()) {
        QStringList keys;
        for (int k : s.blockedKeys) keys << QString::number(k);
        parts << QObject::tr("blocked keys %1").arg(keys.join(QLatin1Char(',')));
    }
    if (!s.ablated.empty()) parts << QObject::tr("ablated %1").arg(QString::fromStdString(formatAblatedHeads(s.ablated)));
    return parts.join(QStringLiteral(" · "));
}

} // namespace attnscope
