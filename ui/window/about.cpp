#include "ui/window/about.h"

#include <Eigen/Core>
#include <QObject>
#include <QtGlobal>
#include <qcustomplot.h>

namespace attnscope {

QString attnscopeVersion() { return QStringLiteral(ATTNSCOPE_VERSION); }

QString versionsText()
{
    const QString eigen = QStringLiteral("%1.%2.%3").arg(EIGEN_WORLD_VERSION).arg(EIGEN_MAJOR_VERSION).arg(EIGEN_MINOR_VERSION);
    const QString qtRuntime = QString::fromLatin1(qVersion()), qtBuilt = QStringLiteral(QT_VERSION_STR);
    const QString qt = qtRuntime == qtBuilt ? qtRuntime : QObject::tr("%1 (built with %2)").arg(qtRuntime, qtBuilt);
    return QObject::tr("AttnScope %1\nQt %2\nEigen %3\nQCustomPlot %4").arg(attnscopeVersion(), qt, eigen, QStringLiteral(QCUSTOMPLOT_VERSION_STR));
}

QString aboutText()
{
    QString versions = versionsText().toHtmlEscaped();
    versions.replace(QLatin1Char('\n'), QStringLiteral("<br>"));
    return QObject::tr("<h3>AttnScope</h3>"
                       "<p>Shows how a transformer's attention works on a sentence you type: every head as a heatmap, "
                       "the causal mask, the √dₖ scaling, the temperature and the positions as switches, and the "
                       "pipeline step by step. It runs offline; nothing is downloaded.</p>"
                       "<p>%1</p>")
        .arg(versions);
}

} // namespace attnscope
