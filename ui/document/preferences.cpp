#include "ui/document/preferences.h"

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
const QString kRecentModelsKey = QStringLiteral("models/recent");
const QString kGeometryKey = QStringLiteral("window/geometry");

} // namespace

ColorMap::Kind Preferences::colorMap()
{
    return ColorMap::fromName(settings().value(kColorMapKey).toString()).value_or(ColorMap::kDefault);
}

void Preferences::setColorMap(ColorMap::Kind kind) { settings().setValue(kColorMapKey, ColorMap::name(kind)); }

QByteArray Preferences::windowGeometry() { return settings().value(kGeometryKey).toByteArray(); }

void Preferences::setWindowGeometry(const QByteArray& geometry) { settings().setValue(kGeometryKey, geometry); }

namespace {

// A most-recent-first list of at most kMaxRecent distinct entries.
QStringList recentList(const QString& key)
{
    QStringList list = settings().value(key).toStringList();
    list.removeAll(QString());
    list.removeDuplicates();
    while (list.size() > Preferences::kMaxRecent) list.removeLast();
    return list;
}

void putFirst(const QString& key, const QString& entry)
{
    QStringList list = recentList(key);
    list.removeAll(entry);
    list.prepend(entry);
    while (list.size() > Preferences::kMaxRecent) list.removeLast();
    settings().setValue(key, list);
}

void removeFrom(const QString& key, const QString& entry)
{
    QStringList list = recentList(key);
    list.removeAll(entry);
    settings().setValue(key, list);
}

// A folder spec as an absolute path; anything else ("hf:...") as it is.
QString modelEntry(const QString& spec)
{
    return spec.startsWith(QStringLiteral("hf:")) ? spec : QFileInfo(spec).absoluteFilePath();
}

} // namespace

QStringList Preferences::recentScenes() { return recentList(kRecentKey); }

void Preferences::addRecentScene(const QString& path) { putFirst(kRecentKey, QFileInfo(path).absoluteFilePath()); }

void Preferences::removeRecentScene(const QString& path) { removeFrom(kRecentKey, QFileInfo(path).absoluteFilePath()); }

QStringList Preferences::recentModels() { return recentList(kRecentModelsKey); }

void Preferences::addRecentModel(const QString& spec) { putFirst(kRecentModelsKey, modelEntry(spec)); }

void Preferences::removeRecentModel(const QString& spec) { removeFrom(kRecentModelsKey, modelEntry(spec)); }

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
