// The Lessons panel against the real window: every shipped lesson names only controls, tabs and views the
// window has; every step, shown, puts the window in exactly its state and outlines exactly its controls;
// answers get their feedback at once; a closed panel changes nothing; a teacher's own file is picked up.
#include <QDir>
#include <QFile>
#include <QLineEdit>
#include <QPushButton>
#include <QLabel>
#include <QRadioButton>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "ui/document/preferences.h"
#include "ui/document/tabnames.h"
#include "ui/lab/compareview.h"
#include "ui/lessons/controlhighlight.h"
#include "ui/lessons/lessonpanel.h"
#include "ui/window/mainwindow.h"
#include "ui/window/windowactions.h"
#include "waits.h"

using namespace attnscope;

namespace {

// The window's state against what a step asks for; an empty string when they agree.
QString mismatch(const MainWindow& w, const Scene& state)
{
    const Document& doc = *w.document();
    if (state.model && doc.modelSpec() != QString::fromStdString(*state.model)) return QStringLiteral("model ") + doc.modelSpec();
    if (state.text && doc.text() != QString::fromStdString(*state.text)) return QStringLiteral("text ") + doc.text();
    if (state.text && w.sentenceEdit()->text() != QString::fromStdString(*state.text)) return QStringLiteral("sentence box");
    if (state.settings && !(doc.settings() == *state.settings)) return QStringLiteral("settings");
    if (state.focus) {
        const ModelConfig& c = doc.model()->config;
        const HeadSelection want{std::min(state.focus->layer, c.layers - 1), std::min(state.focus->head, c.heads - 1)};
        if (!(doc.focus() == want)) return QStringLiteral("focus L%1 H%2").arg(doc.focus().layer).arg(doc.focus().head);
    }
    if (state.tab && pageName(w.tabs(), w.tabs()->currentIndex()) != QString::fromStdString(*state.tab))
        return QStringLiteral("tab ") + pageName(w.tabs(), w.tabs()->currentIndex());
    if (state.view) {
        const QTabWidget* views = viewTabs(w.tabs()->currentWidget());
        if (!views || pageName(views, views->currentIndex()) != QString::fromStdString(*state.view)) return QStringLiteral("view");
    }
    if (state.compareB) {
        const CompareView* c = w.tabs()->findChild<CompareView*>();
        const AttentionSettings b = c->bSettings();
        if (b.mask != state.compareB->mask || b.scaling != state.compareB->scaling || b.temperature != state.compareB->temperature ||
            c->bOwnText() != QString::fromStdString(state.compareB->text))
            return QStringLiteral("compare B");
    }
    return {};
}

} // namespace

class TestLessons : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setApplicationName(QStringLiteral("AttnScopeLessonTests"));
        QDir(Preferences::lessonFolder()).removeRecursively();
    }

    void theBuiltInLessonsAreAllThereAndNameOnlyWhatTheWindowHas()
    {
        MainWindow w;
        const LessonLibrary& library = w.actions()->lessons()->library();
        QVERIFY2(library.problems().isEmpty(), qPrintable(library.problems().join(QLatin1Char('\n'))));
        QVERIFY(library.lessons().size() >= 9);
        for (const LessonEntry& entry : library.lessons()) {
            QVERIFY2(entry.source.startsWith(QStringLiteral(":/lessons/")), qPrintable(entry.source));
            const QStringList missing = LessonLibrary::missingNames(entry.lesson, &w, *w.document());
            QVERIFY2(missing.isEmpty(), qPrintable(entry.id + ": " + missing.join(QStringLiteral("; "))));
        }
        // Sorted by their order: the first one is about Q, K and V.
        QVERIFY(QString::fromStdString(library.lessons().front().lesson.title).contains(QStringLiteral("Q, K and V")));
    }

    // Each step of each lesson, shown, sets the window's state and outlines its controls.
    void eachStepAppliesItsState()
    {
        MainWindow w;
        w.resize(1500, 950);
        w.show();
        LessonPanel* panel = w.actions()->lessons();
        panel->show();
        QVERIFY(panel->isVisible());
        int steps = 0;
        for (int l = 0; l < panel->lessonCount(); ++l) {
            panel->startLesson(l);
            const Lesson& lesson = panel->currentLesson()->lesson;
            for (int s = 0; s < int(lesson.steps.size()); ++s) {
                // Disturb the window first, so the step has something to put right.
                w.document()->setTemperature(7.0);
                w.document()->setFocus({0, 1});
                w.tabs()->setCurrentIndex(w.tabs()->count() - 1);
                panel->showStep(s);
                const LessonStep& step = lesson.steps[std::size_t(s)];
                const QString where = QStringLiteral("%1, step %2").arg(QString::fromStdString(lesson.title)).arg(s + 1);
                const QString wrong = mismatch(w, step.state);
                QVERIFY2(wrong.isEmpty(), qPrintable(where + ": " + wrong));
                QVERIFY2(panel->notice().isEmpty(), qPrintable(where + ": " + panel->notice()));
                std::vector<QWidget*> expected;
                for (const std::string& name : step.highlight) expected.push_back(w.findChild<QWidget*>(QString::fromStdString(name)));
                QVERIFY2(panel->highlight()->targets() == expected, qPrintable(where));
                for (QWidget* target : expected) QVERIFY2(target->isVisible(), qPrintable(where + ": a highlighted control is hidden"));
                QVERIFY(panel->stepText().contains(QString::fromStdString(step.text).left(20).simplified().left(10)));
                ++steps;
            }
        }
        QVERIFY(steps >= 25);
    }

    void answersGetFeedbackAtOnce()
    {
        MainWindow w;
        w.show();
        LessonPanel* panel = w.actions()->lessons();
        panel->show();
        panel->startLesson(0);
        const Lesson& lesson = panel->currentLesson()->lesson;
        const int last = int(lesson.steps.size()) - 1;
        panel->showStep(last);
        const LessonQuestion& q = *lesson.steps.back().question;
        const int right = q.correctIndex();
        const int wrong = right == 0 ? 1 : 0;
        panel->answer(wrong);
        QVERIFY2(panel->feedbackText().startsWith(QStringLiteral("Not quite.")), qPrintable(panel->feedbackText()));
        QVERIFY(panel->feedbackText().contains(QString::fromStdString(q.choices[std::size_t(wrong)].feedback)));
        panel->answer(right);
        QVERIFY2(panel->feedbackText().startsWith(QStringLiteral("Right.")), qPrintable(panel->feedbackText()));
        // Clicking a choice does the same as answer().
        QList<QRadioButton*> choices = panel->findChildren<QRadioButton*>();
        QCOMPARE(choices.size(), int(q.choices.size()));
        choices[wrong]->click();
        QVERIFY(panel->feedbackText().startsWith(QStringLiteral("Not quite.")));
        // The answer's text is a label beside its button that wraps in a narrow panel; a click on it chooses too.
        QLabel* rightText = choices[right]->parentWidget()->findChild<QLabel*>();
        QVERIFY(rightText && rightText->wordWrap());
        QCOMPARE(rightText->text(), QString::fromStdString(q.choices[std::size_t(right)].text));
        QTest::mouseClick(rightText, Qt::LeftButton);
        QVERIFY2(panel->feedbackText().startsWith(QStringLiteral("Right.")), qPrintable(panel->feedbackText()));
        QVERIFY(choices[right]->isChecked());
        // The last step offers the next lesson.
        QVERIFY(panel->nextButton()->isEnabled());
        panel->nextButton()->click();
        QCOMPARE(panel->currentLesson()->id, panel->library().lessons()[1].id);
        QCOMPARE(panel->currentStep(), 0);
    }

    void aClosedPanelChangesNothing()
    {
        MainWindow w;
        w.show();
        w.sentenceEdit()->setText(QStringLiteral("my own sentence"));
        LessonPanel* panel = w.actions()->lessons();
        QVERIFY(!panel->isVisible());
        panel->startLesson(4);
        panel->showStep(1);
        QCOMPARE(w.document()->text(), QStringLiteral("my own sentence"));
        QVERIFY(panel->highlight()->targets().empty());
        panel->show();  // opening it sets the step up
        QTRY_VERIFY_WITH_TIMEOUT(w.document()->text() != QStringLiteral("my own sentence"), testing::kWorkTimeoutMs);
        panel->hide();
        QVERIFY(panel->highlight()->targets().empty());
    }

    void clickingAHighlightedControlEndsItsOutline()
    {
        MainWindow w;
        w.show();
        LessonPanel* panel = w.actions()->lessons();
        panel->show();
        panel->startLesson(4);  // causal masking
        panel->showStep(1);     // points at the Causal checkbox
        QWidget* causal = w.findChild<QWidget*>(QStringLiteral("causal"));
        QCOMPARE(panel->highlight()->targets(), std::vector<QWidget*>{causal});
        QVERIFY(panel->highlight()->isVisible());
        QTest::mouseClick(causal, Qt::LeftButton);
        QVERIFY(panel->highlight()->targets().empty());
        QVERIFY(!panel->highlight()->isVisible());
    }

    void aTeachersFileIsPickedUpAndABrokenOneIsNamed()
    {
        QDir().mkpath(Preferences::lessonFolder());
        {
            QFile good(QDir(Preferences::lessonFolder()).filePath(QStringLiteral("zz-mine.json")));
            QVERIFY(good.open(QIODevice::WriteOnly));
            good.write(R"({"format":"attnscope-lesson","version":1,"title":"My own lesson","order":99,
              "steps":[{"title":"Look","text":"Look at the grid.","state":{"tab":"attention"},"highlight":"grid",
              "question":{"prompt":"Seen it?","choices":[{"text":"yes","correct":true,"feedback":"good"},{"text":"no","feedback":"look again"}]}}]})");
            QFile bad(QDir(Preferences::lessonFolder()).filePath(QStringLiteral("broken.json")));
            QVERIFY(bad.open(QIODevice::WriteOnly));
            bad.write(R"({"format":"attnscope-lesson","version":1,"title":"x","steps":[{"title":"a","text":"b"}]})");
        }
        MainWindow w;
        const LessonLibrary& library = w.actions()->lessons()->library();
        QCOMPARE(library.lessons().back().lesson.title, std::string("My own lesson"));
        QCOMPARE(library.problems().size(), 1);
        QVERIFY2(library.problems().front().contains(QStringLiteral("broken.json")), qPrintable(library.problems().front()));
        QVERIFY(w.actions()->lessons()->notice().isEmpty() || w.actions()->lessons()->notice().contains(QStringLiteral("broken.json")));
        QDir(Preferences::lessonFolder()).removeRecursively();
    }
};

QTEST_MAIN(TestLessons)
#include "tst_lessons.moc"
