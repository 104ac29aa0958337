#pragma once
// What the window remembers between runs: the colour map and the recently used scenes and models. Stored with
// QSettings in AttnScope's configuration folder (QSettings writes through a temporary file and a rename,
// so a crash never leaves half a file). The window reads them at start (app/main.cpp) and writes them
// when a person changes them; nothing else does, so tests and the command-line tool never depend on them.
#include <QByteArray>
#include <QString>
#include <QStringList>

#include "ui/drawing/colormap.h"

namespace attnscope {

class Preferences {
public:
    static constexpr int kMaxRecent = 8;

    static ColorMap::Kind colorMap();
    static void setColorMap(ColorMap::Kind kind);

    // Most recent first, at most kMaxRecent, no duplicates.
    static QStringList recentScenes();
    static void addRecentScene(const QString& path);
    static void removeRecentScene(const QString& path);

    // Models opened from a folder or the Hugging Face cache (their specs), most recent first, at most
    // kMaxRecent. A folder is kept as its absolute path.
    static QStringList recentModels();
    static void addRecentModel(const QString& spec);
    static void removeRecentModel(const QString& spec);

    // The window's position and size, as QWidget::saveGeometry() gives them; empty before the first run.
    static QByteArray windowGeometry();
    static void setWindowGeometry(const QByteArray& geometry);

    // Where the last session is kept: last-session.attnscope in AttnScope's data folder.
    static QString lastSessionPath();
    // Where a teacher can drop lesson files to see them in the Lessons panel: the "lessons" folder there.
    static QString lessonFolder();
    // Where the Train tab keeps its run while it trains, to continue it after the program ended: "training".
    static QString trainingFolder();
};

} // namespace attnscope
