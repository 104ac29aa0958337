// The window is readable at the sizes classrooms have: every tab and every view inside it, with and without
// a lesson open, in presenter mode and out of it, drawn at the screen size this run was given (CTest runs
// it three times, on an offscreen screen of 1024 x 768, 1280 x 720 and 1920 x 1080). It checks rules that
// can fail, from font metrics against geometry (layoutaudit.h): the window fits the screen, the views keep
// their share of its width, no page scrolls sideways (down is allowed), no text is wider than its box, no
// tab bar scrolls, no plot's tick labels overprint, the heatmap's cells are square and at least as tall as
// its type, and the presenter strip's words fit. ATTNSCOPE_LAYOUT_SHOTS=DIR saves a picture of every combination for a person to look at.
//
// A problem accepted for now is listed in tests/data/layout-known-problems.txt (numbers written as N, since
// a pixel more or less is the same problem): the test fails on any problem not listed there, so no view
// gets worse, and names the listed ones that no longer occur, so the list only shrinks.
#include <QDir>
#include <QFile>
#include <QDockWidget>
#include <QGuiApplication>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScreen>
#include <QStandardPaths>
#include <QTabWidget>
#include <QToolBar>
#include <QToolButton>
#include <QtTest>

#include "ui/common/flowlayout.h"
#include "ui/document/tabnames.h"
#include "ui/lab/compareview.h"
#include "ui/lab/saturation/sweepviewbase.h"
#include "layoutaudit.h"
#include "ui/attention/linespanel.h"
#include "ui/attention/linesview.h"
#include "ui/lessons/lessonpanel.h"
#include "ui/presenter/presentermode.h"
#include "ui/research/researchview.h"
#include "ui/steps/costview.h"
#include "ui/window/controlpanel.h"
#include "ui/document/sentence.h"
#include "ui/window/mainwindow.h"
#include "ui/window/windowactions.h"
#include "waits.h"

using namespace attnscope;

namespace {

// Background work of the views on screen (sweeps, research instruments, Compare's B side, the Cost
// tab's timing sweep, whose status line changes with every length) has finished.
bool settled(const MainWindow& w)
{
    for (const SweepViewBase* v : w.findChildren<SweepViewBase*>())
        if (v->isVisible() && v->isComputing()) return false;
    for (const ResearchView* v : w.findChildren<ResearchView*>())
        if (v->isVisible() && v->isComputing()) return false;
    for (const CompareView* v : w.findChildren<CompareView*>())
        if (v->isVisible() && v->isComputingB()) return false;
    for (const CostView* v : w.findChildren<CostView*>())
        if (v->isVisible() && v->isMeasuring()) return false;
    return true;
}

// A problem without its pixel counts: "1280x720 presenter | Train: ... needs N px, has N".
QString normalized(const QString& problem)
{
    const qsizetype space = problem.indexOf(QLatin1Char(' '));
    QString rest = problem.mid(space);
    rest.replace(QRegularExpression(QStringLiteral("\\d+(\\.\\d+)?")), QStringLiteral("N"));
    return problem.left(space) + rest;
}

QStringList knownProblems(const QString& size)
{
    QFile file(QStringLiteral(ATTNSCOPE_LAYOUT_KNOWN));
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) return {};
    QStringList known;
    for (const QString& line : QString::fromUtf8(file.readAll()).split(QLatin1Char('\n')))
        if (line.startsWith(size + QLatin1Char(' '))) known << line;
    return known;
}

QString tabTitle(const QTabWidget* tabs, int i)
{
    QString t = tabs->tabText(i);
    t.remove(QLatin1Char('&'));
    return t;
}

} // namespace

class TestLayout : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        const QRect screen = QGuiApplication::primaryScreen()->geometry();
        qInfo("screen %dx%d", screen.width(), screen.height());
    }

    // A flow of controls: one line when there is room; otherwise more lines, every control at its
    // preferred width (or the row's), none overlapping another or leaving the row, a label beside its
    // control, a text box taking what its line leaves, and heightForWidth the height the lines take.
    void aFlowOfControlsBreaksIntoLines()
    {
        QWidget row;
        auto* flow = new FlowLayout(&row);
        flow->setContentsMargins(0, 0, 0, 0);
        auto* label = new QLabel(QStringLiteral("Corpus:"));
        auto* edit = new QLineEdit;
        flow->addPair(label, edit);
        QList<QWidget*> buttons;
        for (const char* text : {"Start", "Reset", "Use in every tab", "Add sentences from a file…"}) {
            buttons << new QPushButton(QString::fromUtf8(text));
            flow->addWidget(buttons.back());
        }
        auto placedAt = [&](int width) {
            row.resize(width, flow->heightForWidth(width));
            flow->setGeometry(row.rect());
        };
        placedAt(flow->sizeHint().width() + 200);
        for (QWidget* b : buttons) QCOMPARE(b->y(), buttons.front()->y() + (buttons.front()->height() - b->height()) / 2);
        QCOMPARE(label->y() + label->height() / 2, buttons.front()->y() + buttons.front()->height() / 2);
        QVERIFY2(edit->width() > edit->sizeHint().width(), "the text box takes what the line leaves");

        const int narrow = flow->minimumSize().width() + 10;
        placedAt(narrow);
        QList<QWidget*> all = buttons;
        all << label << edit;
        int bottom = 0;
        for (QWidget* w : all) {
            QVERIFY2(QRect(0, 0, narrow, row.height()).contains(w->geometry()), qPrintable(w->objectName() + QStringLiteral(" leaves the row")));
            bottom = std::max(bottom, w->geometry().bottom() + 1);
            for (QWidget* other : all)
                if (other != w) QVERIFY(!w->geometry().intersects(other->geometry()));
        }
        for (QWidget* b : buttons) QCOMPARE(b->width(), std::min(b->sizeHint().width(), narrow));
        QCOMPARE(label->width(), label->sizeHint().width());
        QVERIFY2(buttons.back()->y() > buttons.front()->y(), "more than one line");
        QCOMPARE(label->y() + label->height() / 2, edit->y() + edit->height() / 2);
        QCOMPARE(flow->heightForWidth(narrow), bottom);
        // Hidden controls take no room.
        for (QWidget* b : buttons) b->hide();
        QCOMPARE(flow->heightForWidth(narrow), std::max(label->sizeHint().height(), edit->sizeHint().height()));
    }

    // The lines picture in front of a class (presenter mode, full screen): its type and strokes doubled, every
    // label inside the view and no shorter than its type, the pinned query's numbers written, and on a
    // projector of 1024 x 768 (or taller) every token of a ten-token sentence drawn, not a window of them.
    // ATTNSCOPE_LAYOUT_SHOTS=DIR saves it.
    void theLinesPictureInPresenterMode()
    {
        MainWindow w;
        w.show();
        w.sentenceEdit()->setText(QStringLiteral("the dog chased the ball and then it ran"));
        w.document()->waitForIdle();
        w.actions()->presenter()->setActive(true);
        QTest::keyClick(&w, Qt::Key_H);
        QVERIFY(w.document()->attentionPicture() == AttentionPicture::Lines);
        LinesView* v = w.lines()->view();
        QTRY_VERIFY(v->isVisible());
        QTRY_COMPARE(w.size(), QGuiApplication::primaryScreen()->size());
        QTest::qWait(50);  // posted layouts
        v->pin({LinesView::Side::Query, 9});
        if (const QByteArray dir = qgetenv("ATTNSCOPE_LAYOUT_SHOTS"); !dir.isEmpty())
            w.grab().save(QStringLiteral("%1/lines-presenter-%2x%3.png").arg(QString::fromLocal8Bit(dir)).arg(w.width()).arg(w.height()));
        QVERIFY2(v->lineScale() >= 1.8, qPrintable(QString::number(v->lineScale())));
        QCOMPARE(v->input().queries(), 10);
        if (w.height() >= 768) QVERIFY2(!v->isWindowed(), qPrintable(v->windowSentence()));
        const QFontMetricsF type(v->font());
        const TokenSpan shown = v->shownQueries();
        QVERIFY(shown.count >= 1);
        for (int i = shown.first; i < shown.first + shown.count; ++i)
            for (const LinesView::Side side : {LinesView::Side::Query, LinesView::Side::Key}) {
                const QRectF r = v->labelRect({side, i});
                QVERIFY2(QRectF(v->rect()).contains(r), qPrintable(QStringLiteral("token %1 is outside the view").arg(i)));
                QVERIFY2(r.height() >= type.height(), qPrintable(QStringLiteral("rows of %1 px for type of %2 px").arg(r.height()).arg(type.height())));
                if (side == LinesView::Side::Key && i <= 9) QVERIFY(!v->numberShown(0, i).isEmpty());
            }
        QStringList problems;
        for (const QString& p : testing::auditLayout(&w))
            if (p.contains(QStringLiteral("lines"))) problems << p;
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QLatin1Char('\n'))));
        w.actions()->presenter()->setActive(false);
    }

    void everyTabFitsTheScreen_data()
    {
        QTest::addColumn<bool>("presenter");
        QTest::addColumn<bool>("lesson");
        QTest::newRow("normal") << false << false;
        QTest::newRow("normal with a lesson") << false << true;
        QTest::newRow("presenter") << true << false;
        QTest::newRow("presenter with a lesson") << true << true;
    }

    void everyTabFitsTheScreen()
    {
        QFETCH(bool, presenter);
        QFETCH(bool, lesson);
        const QRect screen = QGuiApplication::primaryScreen()->geometry();
        const QString size = QStringLiteral("%1x%2").arg(screen.width()).arg(screen.height());
        MainWindow w;
        w.resize(screen.size());
        w.move(screen.topLeft());
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.sentenceEdit()->setText(kDefaultSentence);
        LessonPanel* lessons = w.actions()->lessons();
        if (lesson) {
            lessons->show();
            lessons->startLesson(1);
        } else {
            lessons->hide();
        }
        if (presenter) w.actions()->presenter()->setActive(true);
        // The Cost tab's sweep is waited for on its page; up to 512 tokens its status line reads the same
        // as up to 2,048 and the wait is a sixteenth.
        for (CostView* v : w.findChildren<CostView*>()) v->setMaxTokens(512);
        QCoreApplication::processEvents();

        const QString shots = qEnvironmentVariable("ATTNSCOPE_LAYOUT_SHOTS");
        QStringList problems;
        QTabWidget* tabs = w.tabs();
        for (int t = 0; t < tabs->count(); ++t) {
            tabs->setCurrentIndex(t);
            QTabWidget* views = viewTabs(tabs->currentWidget());
            const int pages = views ? views->count() : 1;
            for (int v = 0; v < pages; ++v) {
                if (views) views->setCurrentIndex(v);
                QTest::qWait(50);  // layouts and posted resizes
                QTRY_VERIFY_WITH_TIMEOUT(settled(w), testing::kWorkTimeoutMs);
                QCoreApplication::processEvents();
                const QString where = QStringLiteral("%1 %2 | %3%4")
                                          .arg(size, QString::fromLatin1(QTest::currentDataTag()), tabTitle(tabs, t),
                                               views ? QStringLiteral(" / ") + tabTitle(views, v) : QString());

                // The window is the screen's size or smaller: no part of it is off the screen.
                if (w.width() > screen.width() || w.height() > screen.height())
                    problems << QStringLiteral("%1: the window is %2x%3, larger than the screen").arg(where).arg(w.width()).arg(w.height());
                // The views keep most of the width: 60 % in front of a class, 40 % with the controls and a lesson.
                const double share = double(tabs->width()) / w.width();
                const double least = presenter ? 0.60 : 0.40;
                if (share < least)
                    problems << QStringLiteral("%1: the views have %2 % of the width, less than %3 %").arg(where).arg(100 * share, 0, 'f', 0).arg(100 * least, 0, 'f', 0);
                // A page is judged once it stands still: a text set by the last queued result lays out on
                // a later pass, so the audit is repeated until two looks 50 ms apart agree (a loaded
                // machine runs those passes late; judging the first look made this test flaky).
                QStringList page = testing::auditLayout(&w);
                for (int look = 0; look < 20; ++look) {
                    QTest::qWait(50);
                    QTRY_VERIFY_WITH_TIMEOUT(settled(w), testing::kWorkTimeoutMs);
                    const QStringList again = testing::auditLayout(&w);
                    if (again == page) break;
                    page = again;
                }
                for (const QString& p : page) problems << where + QStringLiteral(": ") + p;
                // The picture is of the page as judged.
                if (!shots.isEmpty()) {
                    QString file = where;
                    file.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9]+")), QStringLiteral("-"));
                    w.grab().save(QDir(shots).filePath(file + QStringLiteral(".png")));
                }
            }
        }
        if (presenter) {
            // The control panel stays away in front of a class; the strip stands in for it.
            if (w.controls()->isVisible()) problems << size + QStringLiteral(": the control panel is shown in presenter mode");
            if (!w.actions()->presenter()->strip()->isVisible()) problems << size + QStringLiteral(": no presenter strip");
        }
        QStringList fresh;
        QStringList seen;
        for (const QString& p : problems) seen << normalized(p);
        seen.removeDuplicates();
        const QString tag = size + QLatin1Char(' ') + QString::fromLatin1(QTest::currentDataTag()) + QStringLiteral(" |");
        QStringList known;
        for (const QString& k : knownProblems(size))
            if (k.startsWith(tag)) known << k;
        for (const QString& p : seen)
            if (!known.contains(p)) fresh << p;
        for (const QString& k : known)
            if (!seen.contains(k)) qInfo("fixed, remove from the list: %s", qPrintable(k));
        for (const QString& p : fresh) qInfo("%s", qPrintable(p));
        QVERIFY2(fresh.isEmpty(), qPrintable(QStringLiteral("%1 layout problems not in %2, listed above").arg(fresh.size()).arg(QStringLiteral(ATTNSCOPE_LAYOUT_KNOWN))));
    }
};

QTEST_MAIN(TestLayout)
#include "tst_layout.moc"
