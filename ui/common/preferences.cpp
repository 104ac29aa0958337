#include "common/preferences.h"

#include <QDir>
#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>

namespace attnscope {

namespace {

QSettings settings()
{
    // One INI file, whatever the platform would choose, so a person can read and delete it.
    const QString folder = QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation);
    return QSettings(folder + QStringLiteral("/attnscope.ini"), QSettings::IniFormat);
}

const QString kColorMapKey = QStringLiteral("view/colormap");
const QString kRecentKey = QStringLiteral("scenes/recent");
const QString kGeometryKey = QStringLiteral("window/geometry");

} // namespace

ColorMap::Kind Preferences::colorMap()
{
    return ColorMap::fromName(settings().value(kColorMapKey).toString()).value_or(ColorMap::kDefault);
}

void Preferences::setColorMap(ColorMap::Kind kind) { settings().setValue(kColorMapKey, ColorMap::name(kind)); }

QByteArray Preferences::windowGeometry() { return settings().value(kGeometryKey).toByteArray(); }

void Preferences::setWindowGeometry(const QByteArray& geometry) { settings().setValue(kGeometryKey, geometry); }

QStringList Preferences::recentScenes()
{
    QStringList list = settings().value(kRecentKey).toStringList();
    list.removeAll(QString());
    list.removeDuplicates();
    while (list.size() > kMaxRecent) list.removeLast();
    return list;
}

void Preferences::addRecentScene(const QString& path)
{
    const QString absolute = QFileInfo(path).absoluteFilePath();
    QStringList list = recentScenes();
    list.removeAll(absolute);
    list.prepend(absolute);
    while (list.size() > kMaxRecent) list.removeLast();
    settings().setValue(kRecentKey, list);
}

void Preferences::removeRecentScene(const QString& path)
{
    QStringList list = recentScenes();
    list.removeAll(QFileInfo(path).absoluteFilePath());
    settings().setValue(kRecentKey, list);
}

QString Preferences::lastSessionPath()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/last-session.attnscope");
}

QString Preferences::trainingFolder()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/training");
}

QString Preferences::lessonFolder()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/lessons");
}

} // namespace attnscope
