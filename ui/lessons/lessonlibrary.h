#pragma once
// The lessons the Lessons panel offers: those built into the program (resources/lessons/*.json, compiled in
// as Qt resources under :/lessons) and those a teacher drops into the lessons folder (see
// Preferences::lessonFolder) or opens from a file. A file that cannot be read is listed with its sentence,
// not silently left out.
#include <QString>
#include <QStringList>
#include <vector>

#include "core/scene/lesson.h"

class QWidget;

namespace attnscope {

class Document;

struct LessonEntry {
    QString id;      // the file's name without .json
    QString source;  // where it came from (":/lessons/causal-mask.json" or a path)
    Lesson lesson;
};

class LessonLibrary {
public:
    // Reads the built-in lessons and the lessons folder, sorted by order then title.
    void load();
    const std::vector<LessonEntry>& lessons() const { return m_lessons; }
    const QStringList& problems() const { return m_problems; }  // one sentence per file that failed

    // Reads one lesson file (from disk or a resource path).
    static Result<Lesson> readLesson(const QString& path);

    // What a lesson names that the window lacks: controls to highlight (found in `window` by object name),
    // and tabs and views (the document's pages). Empty when every name is there.
    static QStringList missingNames(const Lesson& lesson, QWidget* window, const Document& document);

private:
    void addFolder(const QString& folder);

    std::vector<LessonEntry> m_lessons;
    QStringList m_problems;
};

} // namespace attnscope
