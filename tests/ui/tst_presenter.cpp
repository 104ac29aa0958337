// Presenter mode and the window's polish: F11 enters and Esc leaves; fonts, plots' fonts included, at least
// double; every single-key demonstration changes the document as the strip says; keys typed into a box stay
// text. Every control of the window explains itself in a tooltip, and About names the versions in use.
#include <QAbstractButton>
#include <QAbstractItemView>
#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QAction>
#include <QComboBox>
#include <QDockWidget>
#include <QLineEdit>
#include <QMenuBar>
#include <QScrollBar>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>
#include <QToolBar>
#include <QToolButton>
#include <QtTest>
#include <Eigen/Core>
#include <cmath>
#include <qcustomplot.h>

#include "ui/attention/heatmapview.h"
#include "ui/common/plottitles.h"
#include "ui/lessons/controlhighlight.h"
#include "ui/lessons/lessonpanel.h"
#include "ui/document/document.h"
#include "ui/presenter/presentermode.h"
#include "ui/window/about.h"
#include "ui/window/controlpanel.h"
#include "ui/window/mainwindow.h"
#include "ui/window/windowactions.h"
#include "waits.h"

using namespace attnscope;

namespace {

// A window shown and active, so application shortcuts (F11) reach it.
struct Shown {
    MainWindow window;
    Shown()
    {
        window.resize(1300, 850);
        window.show();
        window.activateWindow();
        window.sentenceEdit()->setText(QStringLiteral("the dog chased the ball and then it ran"));
    }
    PresenterMode* presenter() { return window.actions()->presenter(); }
    Document& doc() { return *window.document(); }
    // A key as the person presses it, delivered to whatever has the focus in the window.
    void press(int key, Qt::KeyboardModifiers mods = Qt::NoModifier)
    {
        QWidget* target = QApplication::focusWidget() && QApplication::focusWidget()->window() == &window ? QApplication::focusWidget()
                                                                                                      : static_cast<QWidget*>(&window);
        QTest::keyClick(target, Qt::Key(key), mods);
    }
};

} // namespace

class TestPresenter : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void f11EntersAndEscLeaves()
    {
        Shown s;
        QVERIFY(QTest::qWaitForWindowActive(&s.window));
        const double before = s.window.font().pointSizeF();
        const double tickBefore = s.window.heatmap()->wantedTickFont().pointSizeF();
        QTest::keyClick(&s.window, Qt::Key_F11);
        QVERIFY(s.presenter()->isActive());
        QVERIFY(s.window.windowState() & Qt::WindowFullScreen);
        QVERIFY(s.window.actions()->action(QStringLiteral("presenter"))->isChecked());
        // Twice the type, in the widgets and in the plots' own fonts, from the back of the room.
        QVERIFY2(s.window.font().pointSizeF() >= 2 * before - 1e-9, qPrintable(QString::number(s.window.font().pointSizeF())));
        QVERIFY(s.window.controls()->font().pointSizeF() >= 2 * before - 1e-9);
        QVERIFY(s.window.heatmap()->wantedTickFont().pointSizeF() >= 2 * tickBefore - 1e-9);
        // High contrast, the strip in place of the menu and status bars.
        QCOMPARE(s.window.palette().color(QPalette::Window), QColor(Qt::black));
        QCOMPARE(s.window.palette().color(QPalette::WindowText), QColor(Qt::white));
        QVERIFY(s.presenter()->strip()->isVisible());
        QVERIFY(!s.window.menuBar()->isVisible());
        // Twice the type still fits a 1280-pixel-wide projector on every tab.
        for (int tab = 0; tab < s.window.tabs()->count(); ++tab) {
            s.window.tabs()->setCurrentIndex(tab);
            QVERIFY2(s.window.minimumSizeHint().width() <= 1280, qPrintable(QString::number(s.window.minimumSizeHint().width())));
        }
        s.window.tabs()->setCurrentIndex(0);
        const QString strip = s.presenter()->stripText();
        for (const char* part : {"M mask: causal", "S ÷√dₖ: on", "T = 1.00", "P positions", "head 0", "layer 0", "C no key blocked",
                                 "L show lesson", "Attention", "Esc"})
            QVERIFY2(strip.contains(QString::fromUtf8(part)), qPrintable(strip));

        s.press(Qt::Key_Escape);
        QVERIFY(!s.presenter()->isActive());
        QVERIFY(!(s.window.windowState() & Qt::WindowFullScreen));
        QCOMPARE(s.window.font().pointSizeF(), before);
        QCOMPARE(s.window.heatmap()->wantedTickFont().pointSizeF(), tickBefore);
        QVERIFY(s.window.menuBar()->isVisible());
        QVERIFY(!s.presenter()->strip()->isVisible());
        QVERIFY(!s.window.actions()->action(QStringLiteral("presenter"))->isChecked());
    }

    // In front of a class the strip stands in for the control panel, whose width goes to the views, with a
    // lesson open too: the lesson's outline moves from the panel's control to the strip's cell for it, and
    // back when presenter mode ends. L shows and hides the lesson, C unblocks every key.
    void theStripStandsInForTheControlPanel()
    {
        Shown s;
        QVERIFY(QTest::qWaitForWindowActive(&s.window));
        QVERIFY(s.window.controls()->isVisible());
        LessonPanel* lessons = s.window.actions()->lessons();
        lessons->show();
        // Lesson 5, the causal mask: its second step outlines the "causal" check box.
        int step = -1;
        for (int l = 0; l < lessons->lessonCount() && step < 0; ++l) {
            lessons->startLesson(l);
            const Lesson& lesson = lessons->currentLesson()->lesson;
            for (std::size_t i = 0; i < lesson.steps.size() && step < 0; ++i)
                if (lesson.steps[i].highlight == std::vector<std::string>{"causal"}) step = int(i);
        }
        QVERIFY(step >= 0);
        lessons->showStep(step);
        QWidget* causal = s.window.findChild<QWidget*>(QStringLiteral("causal"));
        QCOMPARE(lessons->highlight()->targets(), std::vector<QWidget*>{causal});

        s.presenter()->setActive(true);
        QVERIFY(!s.window.controls()->isVisible());
        QVERIFY(lessons->isVisible());
        QWidget* maskCell = s.presenter()->strip()->findChild<QWidget*>(QStringLiteral("strip-mask"));
        QVERIFY(maskCell);
        QCOMPARE(lessons->highlight()->targets(), std::vector<QWidget*>{maskCell});
        // The lesson is a sidebar: the view keeps at least 60 % of the width.
        QTRY_VERIFY2_WITH_TIMEOUT(lessons->width() <= PresenterMode::kLessonShare * s.window.width() + 1, qPrintable(QString::number(lessons->width())),
                                  testing::kWorkTimeoutMs);
        QVERIFY(s.window.tabs()->width() >= 0.6 * s.window.width());

        s.press(Qt::Key_L);
        QVERIFY(!lessons->isVisible());
        QVERIFY(s.presenter()->stripText().contains(QStringLiteral("L show lesson")));
        s.press(Qt::Key_L);
        QVERIFY(lessons->isVisible());
        QVERIFY(s.presenter()->stripText().contains(QStringLiteral("L hide lesson")));

        s.doc().toggleBlockedKey(1);
        s.doc().toggleBlockedKey(2);
        QVERIFY(s.presenter()->stripText().contains(QStringLiteral("C unblock 2 keys")));
        s.press(Qt::Key_C);
        QVERIFY(s.doc().settings().blockedKeys.empty());

        s.presenter()->setActive(false);
        QVERIFY(s.window.controls()->isVisible());
        QCOMPARE(lessons->highlight()->targets(), std::vector<QWidget*>{causal});
    }

    void theSingleKeysChangeTheDocument()
    {
        Shown s;
        s.presenter()->setActive(true);
        Document& doc = s.doc();
        // M: the causal mask.
        s.press(Qt::Key_M);
        QVERIFY(doc.settings().mask == MaskKind::None);
        QVERIFY(s.presenter()->stripText().contains(QStringLiteral("mask: off")));
        s.press(Qt::Key_M);
        QVERIFY(doc.settings().mask == MaskKind::Causal);
        // S: the scaling.
        s.press(Qt::Key_S);
        QVERIFY(doc.settings().scaling == Scaling::None);
        s.press(Qt::Key_S);
        QVERIFY(doc.settings().scaling == Scaling::SqrtDk);
        // V: weights or value-weighted attention, and the panel's box follows.
        s.press(Qt::Key_V);
        QVERIFY(doc.attentionDisplay() == AttentionDisplay::ValueWeighted);
        QCOMPARE(s.window.controls()->displayBox()->currentData().toInt(), int(AttentionDisplay::ValueWeighted));
        s.press(Qt::Key_V);
        QVERIFY(doc.attentionDisplay() == AttentionDisplay::Weights);
        // H: the focused head as a heatmap or as lines, and the switch above it follows.
        s.press(Qt::Key_H);
        QVERIFY(doc.attentionPicture() == AttentionPicture::Lines);
        QVERIFY(s.window.findChild<QToolButton*>(QStringLiteral("picture-lines"))->isChecked());
        s.press(Qt::Key_H);
        QVERIFY(doc.attentionPicture() == AttentionPicture::Heatmap);
        // + and −: a step of √2 on the slider's grid, both ways, and never past the slider's ends.
        s.press(Qt::Key_Plus, Qt::ShiftModifier);
        const double up = doc.settings().temperature;
        QVERIFY2(std::abs(up - std::sqrt(2.0)) < 0.01, qPrintable(QString::number(up)));
        QCOMPARE(up, ControlPanel::temperatureForSlider(ControlPanel::sliderForTemperature(up)));
        s.press(Qt::Key_Equal);
        QVERIFY(std::abs(doc.settings().temperature - 2.0) < 0.02);
        s.press(Qt::Key_Minus);
        s.press(Qt::Key_Minus);
        s.press(Qt::Key_Minus);
        QVERIFY2(std::abs(doc.settings().temperature - std::sqrt(0.5)) < 0.01, qPrintable(QString::number(doc.settings().temperature)));
        for (int i = 0; i < 40; ++i) s.press(Qt::Key_Minus);
        QCOMPARE(doc.settings().temperature, ControlPanel::kSliderMinTemperature);
        // P: round the positional encodings the model offers, back to the model's own.
        QVERIFY(doc.settings().positional == PositionalOverride::Default);
        std::vector<PositionalOverride> seen;
        for (int i = 0; i < 4; ++i) {
            s.press(Qt::Key_P);
            seen.push_back(doc.settings().positional);
            if (doc.settings().positional == PositionalOverride::Default) break;
        }
        QVERIFY(seen.front() == PositionalOverride::Sinusoidal);
        QVERIFY(seen.back() == PositionalOverride::Default);
        QVERIFY(std::find(seen.begin(), seen.end(), PositionalOverride::None) != seen.end());
        // Arrows: heads across, layers down, clamped to the model.
        s.press(Qt::Key_Right);
        QVERIFY(doc.focus() == (HeadSelection{0, 1}));
        s.press(Qt::Key_Down);
        QVERIFY(doc.focus() == (HeadSelection{1, 1}));
        s.press(Qt::Key_Left);
        s.press(Qt::Key_Left);
        QVERIFY(doc.focus() == (HeadSelection{1, 0}));
        s.press(Qt::Key_Up);
        s.press(Qt::Key_Up);
        QVERIFY(doc.focus() == (HeadSelection{0, 0}));
        QVERIFY(s.presenter()->stripText().contains(QStringLiteral("layer 0 of %1").arg(doc.model()->config.layers)));
        // Digits: the tabs by their place.
        for (int tab = 0; tab < s.window.tabs()->count(); ++tab) {
            s.press(Qt::Key_1 + tab);
            QCOMPARE(s.window.tabs()->currentIndex(), tab);
        }
        s.press(Qt::Key_9);  // no ninth tab: nothing happens
        QCOMPARE(s.window.tabs()->currentIndex(), s.window.tabs()->count() - 1);
    }

    void keysTypedIntoABoxStayText()
    {
        Shown s;
        s.presenter()->setActive(true);
        s.window.sentenceEdit()->setFocus();
        s.window.sentenceEdit()->end(false);
        QTest::keyClicks(s.window.sentenceEdit(), QStringLiteral(" mps"));
        QVERIFY(s.doc().text().endsWith(QStringLiteral(" mps")));
        QVERIFY(s.doc().settings().mask == MaskKind::Causal);
        QVERIFY(s.doc().settings().scaling == Scaling::SqrtDk);
        // The first Esc leaves the box, the second leaves presenter mode.
        QTest::keyClick(s.window.sentenceEdit(), Qt::Key_Escape);
        QVERIFY(s.presenter()->isActive());
        QVERIFY(!s.window.sentenceEdit()->hasFocus());
        s.press(Qt::Key_M);
        QVERIFY(s.doc().settings().mask == MaskKind::None);
        s.press(Qt::Key_Escape);
        QVERIFY(!s.presenter()->isActive());
        // Outside presenter mode the letters do nothing to the settings.
        s.press(Qt::Key_M);
        QVERIFY(s.doc().settings().mask == MaskKind::None);
    }

    // Every control of the window says in one sentence what it changes.
    void everyControlHasATooltip()
    {
        MainWindow w;
        w.show();
        QStringList missing;
        const auto check = [&](QWidget* control) {
            for (QWidget* p = control->parentWidget(); p; p = p->parentWidget())
                if (qobject_cast<QAbstractSpinBox*>(p) || qobject_cast<QComboBox*>(p) || qobject_cast<QTabBar*>(p) || qobject_cast<QLineEdit*>(p) ||
                    qobject_cast<QScrollBar*>(p) || qobject_cast<QToolBar*>(p) || qobject_cast<QAbstractItemView*>(p))
                    return;  // a part of a bigger control (a line edit's clear button), or the tab bar's own arrows
            if (qobject_cast<QScrollBar*>(control) || control->objectName().startsWith(QStringLiteral("qt_"))) return;
            if (control->parentWidget() && qobject_cast<QDockWidget*>(control->parentWidget()) && control->objectName().isEmpty()) return;
            const QString tip = control->toolTip();
            const QString label = control->objectName().isEmpty() ? QString::fromLatin1(control->metaObject()->className()) : control->objectName();
            if (tip.isEmpty()) missing << label;
            else if (!tip.endsWith(QLatin1Char('.')) || tip.count(QStringLiteral(". ")) > 0) missing << label + QStringLiteral(" (not one sentence: ") + tip + QLatin1Char(')');
        };
        for (QAbstractButton* b : w.findChildren<QAbstractButton*>()) check(b);
        for (QComboBox* c : w.findChildren<QComboBox*>()) check(c);
        for (QAbstractSlider* s : w.findChildren<QAbstractSlider*>()) check(s);
        for (QAbstractSpinBox* s : w.findChildren<QAbstractSpinBox*>()) check(s);
        for (QLineEdit* e : w.findChildren<QLineEdit*>()) check(e);
        QVERIFY2(missing.isEmpty(), qPrintable(missing.join(QStringLiteral("\n"))));
        // The menus' entries say what they do in the status bar.
        for (const char* name : {"open-scene", "save-scene", "export-view", "copy-view", "export-data", "presenter", "about"})
            QVERIFY2(!w.actions()->action(QString::fromLatin1(name))->statusTip().isEmpty(), name);
    }

    // Twice the type in a narrow panel: the heatmap's title goes on one line per part instead of being cut.
    void aTitleTooWideForThePlotBreaksIntoLines()
    {
        Document doc;
        doc.setText(QStringLiteral("the dog chased the ball"));
        doc.setMask(MaskKind::None);
        doc.waitForIdle();
        HeatmapView view;
        view.resize(1400, 600);
        view.show();
        view.setSnapshot(doc.snapshot());
        QCPTextElement* drawn = view.findChild<QCPTextElement*>();
        QVERIFY(drawn);
        QVERIFY2(view.title().contains(QStringLiteral("counterfactual")), qPrintable(view.title()));
        QCOMPARE(drawn->text(), view.title());
        view.resize(260, 600);
        view.replot();
        view.replot();  // the second one lays the title out in its column as the first measured it
        // At least one line per part (head, settings, counterfactual), every line within the title's place
        // in the plot, and no word lost (the " · " between parts become line breaks).
        QVERIFY(drawn->text().count(QLatin1Char('\n')) >= 2);
        const QFontMetrics metrics(drawn->font());
        for (const QString& line : drawn->text().split(QLatin1Char('\n')))
            QVERIFY2(metrics.horizontalAdvance(line) <= drawn->outerRect().width(), qPrintable(line));
        const auto words = [](const QString& text) {
            QStringList w = text.split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts);
            w.removeAll(QStringLiteral("·"));
            return w;
        };
        QCOMPARE(words(drawn->text()), words(view.title()));
        view.resize(1400, 600);
        view.replot();
        view.replot();
        QCOMPARE(drawn->text(), view.title());
    }

    // wrapToWidth: unchanged when it fits; otherwise broken at spaces into lines no wider than asked, every
    // word kept while the lines allowed suffice, the last line elided when they do not.
    void wrappingKeepsEveryLineWithinTheWidth()
    {
        const QFontMetrics metrics(QFont(QStringLiteral("DejaVu Sans"), 12));
        const QString text = QStringLiteral("q·k after rotating q to position m and k to position n");
        QCOMPARE(wrapToWidth(text, metrics, metrics.horizontalAdvance(text)), text);
        const int width = metrics.horizontalAdvance(text) / 2;
        const QString two = wrapToWidth(text, metrics, width, 3);
        QVERIFY(two.count(QLatin1Char('\n')) >= 1);
        for (const QString& line : two.split(QLatin1Char('\n'))) QVERIFY2(metrics.horizontalAdvance(line) <= width, qPrintable(line));
        QCOMPARE(QString(two).replace(QLatin1Char('\n'), QLatin1Char(' ')), text);
        const QString one = wrapToWidth(text, metrics, width, 1);
        QVERIFY(!one.contains(QLatin1Char('\n')));
        QVERIFY(one.endsWith(QChar(0x2026)));
        QVERIFY(metrics.horizontalAdvance(one) <= width);
    }

    // A plot's axis label longer than its axis breaks into lines; the view's full label stays readable.
    void axisLabelsBreakIntoLines()
    {
        QCustomPlot plot;
        const QString label = QStringLiteral("memory of scores + weights + output (bytes)");
        plot.xAxis->setLabel(label);
        fitPlotTitles(&plot);
        plot.resize(800, 400);
        plot.setViewport(plot.rect());
        plot.replot();
        plot.replot();
        QCOMPARE(plot.xAxis->label(), label);
        plot.resize(200, 400);
        plot.setViewport(plot.rect());
        plot.replot();
        plot.replot();
        QVERIFY2(plot.xAxis->label().contains(QLatin1Char('\n')), qPrintable(plot.xAxis->label()));
        const QFontMetrics metrics(plot.xAxis->labelFont());
        for (const QString& line : plot.xAxis->label().split(QLatin1Char('\n')))
            QVERIFY2(metrics.horizontalAdvance(line) <= plot.axisRect()->width(), qPrintable(line));
        QCOMPARE(fullAxisLabel(plot.xAxis), label);
        QVERIFY(plot.toolTip().contains(label));
        // A label the view sets anew is taken as the full one.
        plot.xAxis->setLabel(QStringLiteral("tokens"));
        plot.replot();
        QCOMPARE(plot.xAxis->label(), QStringLiteral("tokens"));
        QCOMPARE(fullAxisLabel(plot.xAxis), QStringLiteral("tokens"));
    }

    // A token axis too short for all its labels keeps every k-th one, so no two overprint, and shows all
    // of them again when the plot grows; an axis of numbers too short for two labels shows none. Every
    // axis is drawn with one label per tick, whichever way the labels changed after the layout.
    void tickLabelsThinOutOnShortAxesAndComeBack()
    {
        QCustomPlot plot;
        plot.yAxis->setRangeReversed(true);
        plot.yAxis->setRange(-0.5, 39.5);
        plot.xAxis->setRange(0, 1);
        auto tokens = QSharedPointer<QCPAxisTickerText>::create();
        for (int i = 0; i < 40; ++i) tokens->addTick(i, QStringLiteral("token%1").arg(i));
        plot.yAxis->setTicker(tokens);
        QStringList mismatched;
        connect(&plot, &QCustomPlot::afterLayout, &plot, [&] {
            for (QCPAxis* axis : {plot.xAxis, plot.yAxis})
                if (axis->tickLabels() && axis->tickVectorLabels().size() != axis->tickVector().size())
                    mismatched << QStringLiteral("%1 ticks, %2 labels").arg(axis->tickVector().size()).arg(axis->tickVectorLabels().size());
        });
        fitPlotTitles(&plot);
        const int line = QFontMetrics(plot.yAxis->tickLabelFont()).height();
        auto show = [&](int w, int h) {
            plot.resize(w, h);
            plot.setViewport(plot.rect());
            for (int i = 0; i < 3; ++i) plot.replot(QCustomPlot::rpImmediateRefresh);
        };
        auto labelled = [&] {
            QList<double> at;
            const QVector<QString> labels = plot.yAxis->tickVectorLabels();
            for (int i = 0; i < labels.size(); ++i)
                if (!labels[i].isEmpty()) at << plot.yAxis->coordToPixel(plot.yAxis->tickVector()[i]);
            return at;
        };
        show(400, 50 * line);
        QCOMPARE(labelled().size(), 40);
        show(400, 12 * line);  // room for about ten labels
        const QList<double> few = labelled();
        QVERIFY2(few.size() >= 4 && few.size() < 40, qPrintable(QString::number(few.size())));
        for (int i = 1; i < few.size(); ++i) QVERIFY2(std::abs(few[i] - few[i - 1]) >= line, qPrintable(QString::number(few[i] - few[i - 1])));
        // The view's labels stay the full set: a new set is taken as it is, and a larger plot shows them all.
        show(400, 50 * line);
        QCOMPARE(labelled().size(), 40);
        QCOMPARE(plot.yAxis->tickVectorLabels().first(), QStringLiteral("token0"));

        // Numbers: an axis shorter than two lines of type hides them, and shows them again when it grows.
        plot.yAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
        plot.yAxis->setRange(0, 1);
        show(400, 2 * line + plot.axisRect()->margins().top() + plot.axisRect()->margins().bottom());
        QVERIFY(!plot.yAxis->tickLabels());
        show(400, 20 * line);
        QVERIFY(plot.yAxis->tickLabels());
        QVERIFY(plot.yAxis->tickVectorLabels().size() >= 2);
        QVERIFY2(mismatched.isEmpty(), qPrintable(mismatched.join(QStringLiteral("; "))));
    }

    // A legend over a plot too small for it is put away, its entries read from the plot's tooltip, and comes
    // back when the plot grows; one its view hid stays hidden.
    void aLegendLargerThanThePlotGoesToTheTooltip()
    {
        QCustomPlot plot;
        for (const QString& name : {QStringLiteral("residual stream in"), QStringLiteral("+ attention"), QStringLiteral("= residual stream out")}) {
            QCPGraph* graph = plot.addGraph();
            graph->setName(name);
            graph->setPen(QPen(QColor(200, 30, 30)));
        }
        plot.legend->setVisible(true);
        fitPlotTitles(&plot);
        auto show = [&](int w, int h) {
            plot.resize(w, h);
            plot.setViewport(plot.rect());
            for (int i = 0; i < 3; ++i) plot.replot(QCustomPlot::rpImmediateRefresh);
        };
        show(800, 600);
        QVERIFY(plot.legend->visible());
        QVERIFY(!plot.toolTip().contains(QStringLiteral("residual stream in")));
        show(120, 300);
        QVERIFY(!plot.legend->visible());
        QVERIFY2(plot.toolTip().contains(QStringLiteral("= residual stream out")), qPrintable(plot.toolTip()));
        QVERIFY2(plot.toolTip().contains(QStringLiteral("#c81e1e")), qPrintable(plot.toolTip()));
        show(800, 600);
        QVERIFY(plot.legend->visible());
        plot.legend->setVisible(false);  // the view's own choice
        show(800, 600);
        QVERIFY(!plot.legend->visible());
    }

    void aboutNamesTheVersionsInUse()
    {
        const QString v = versionsText();
        QVERIFY2(v.contains(QStringLiteral("AttnScope ") + QStringLiteral(ATTNSCOPE_VERSION)), qPrintable(v));
        QVERIFY(v.contains(QStringLiteral("Qt ") + QString::fromLatin1(qVersion())));
        QVERIFY(v.contains(QStringLiteral("Eigen %1.%2.%3").arg(EIGEN_WORLD_VERSION).arg(EIGEN_MAJOR_VERSION).arg(EIGEN_MINOR_VERSION)));
        QVERIFY(v.contains(QStringLiteral("QCustomPlot ") + QStringLiteral(QCUSTOMPLOT_VERSION_STR)));
        QVERIFY(aboutText().contains(QStringLiteral("AttnScope")));
    }
};

QTEST_MAIN(TestPresenter)
#include "tst_presenter.moc"
