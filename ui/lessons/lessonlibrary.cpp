#include "ui/lessons/lessonlibrary.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QWidget>
#include <algorithm>

#include "ui/document/document.h"
#include "ui/document/preferences.h"

namespace attnscope {

Result<Lesson> LessonLibrary::readLesson(const QString& path)
{
    QFile file(path);
    const QString where = path.startsWith(QLatin1Char(':')) ? QStringLiteral("the built-in lesson %1").arg(QFileInfo(path).fileName())
                                                             : QStringLiteral("'%1'").arg(QDir::toNativeSeparators(path));
    if (file.size() > qint64(Lesson::kMaxFileBytes))
        return Result<Lesson>::fail(where.toStdString() + " is larger than 1 MB, too large for a lesson.");
    if (!file.open(QIODevice::ReadOnly))
        return Result<Lesson>::fail("cannot open " + where.toStdString() + " (" + file.errorString().toStdString() + ").");
    const QByteArray bytes = file.read(qint64(Lesson::kMaxFileBytes) + 1);
    return parseLesson(std::string_view(bytes.constData(), std::size_t(bytes.size())), where.toStdString());
}

void LessonLibrary::addFolder(const QString& folder)
{
    const QDir dir(folder);
    for (const QFileInfo& info : dir.entryInfoList({QStringLiteral("*.json")}, QDir::Files, QDir::Name)) {
        Result<Lesson> lesson = readLesson(info.filePath());
        if (!lesson) {
            m_problems << QString::fromStdString(lesson.error());
            continue;
        }
        m_lessons.push_back({info.completeBaseName(), info.filePath(), std::move(*lesson)});
    }
}

void LessonLibrary::load()
{
    m_lessons.clear();
    m_problems.clear();
    addFolder(QStringLiteral(":/lessons"));
    addFolder(Preferences::lessonFolder());
    std::stable_sort(m_lessons.begin(), m_lessons.end(), [](const LessonEntry& a, const LessonEntry& b) {
        if (a.lesson.order != b.lesson.order) return a.lesson.order < b.lesson.order;
        return a.lesson.title < b.lesson.title;
    });
}

QStringList LessonLibrary::missingNames(const Lesson& lesson, QWidget* window, const Document& document)
{
    QStringList missing;
    const std::vector<TabPage>& pages = document.pages();
    for (std::size_t i = 0; i < lesson.steps.size(); ++i) {
        const LessonStep& step = lesson.steps[i];
        const QString where = QObject::tr("step %1").arg(i + 1);
        for (const std::string& name : step.highlight)
            if (!window->findChild<QWidget*>(QString::fromStdString(name)))
                missing << QObject::tr("%1 highlights '%2', which is no control's name").arg(where, QString::fromStdString(name));
        if (pages.empty() || !step.state.tab) continue;
        const QString tab = QString::fromStdString(*step.state.tab);
        const auto page = std::find_if(pages.begin(), pages.end(), [&](const TabPage& p) { return p.name == tab; });
        if (page == pages.end()) {
            missing << QObject::tr("%1 opens the tab '%2', which this window lacks").arg(where, tab);
            continue;
        }
        const QString view = step.state.view ? QString::fromStdString(*step.state.view) : QString();
        if (!view.isEmpty() && !page->views.contains(view))
            missing << QObject::tr("%1 opens the view '%2', which the tab '%3' lacks").arg(where, view, tab);
    }
    return missing;
}

} // namespace attnscope
