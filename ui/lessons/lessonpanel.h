#pragma once
// The Lessons panel (View → Lessons, Help → Lessons): pick a lesson, read a step, and the window is put in
// the step's state — model, sentence, settings, focused head, tab and view — with the control to touch
// outlined. A step may end with a check-yourself question; choosing an answer says at once whether it is
// right and why.
#include <QDockWidget>
#include <functional>
#include <optional>

#include "ui/lessons/lessonlibrary.h"
#include "ui/scenes/scenestate.h"

class QButtonGroup;
class QComboBox;
class QLabel;
class QPushButton;
class QTextBrowser;
class QMainWindow;
class QVBoxLayout;
class QWidget;

namespace attnscope {

class ControlHighlight;
class Document;

class LessonPanel : public QDockWidget {
    Q_OBJECT
public:
    // A step's state goes into the document; its outlines find the window's controls by name.
    LessonPanel(QMainWindow* window, Document* document, ModelOpener openModel);

    const LessonLibrary& library() const { return m_library; }
    // Adds a lesson read from a file and starts it; the sentence when the file is not a lesson.
    QString openLessonFile(const QString& path);
    void startLesson(int index);  // an index into library().lessons() plus any opened files
    int lessonCount() const { return int(m_entries.size()); }
    const LessonEntry* currentLesson() const;
    int currentStep() const { return m_step; }
    // Shows step `index`'s text and question and, while the panel is visible, puts the window in its state
    // and outlines its controls (a hidden panel does that when it is next shown).
    void showStep(int index);
    // Chooses answer `choice` of the current step's question, as a click on it does.
    void answer(int choice);

    ControlHighlight* highlight() const { return m_highlight; }
    // Outlines the current step's controls again, each through `standIn` when one is set: presenter mode
    // outlines the strip's cell for a control it has put away.
    void refreshHighlight();
    void setStandIn(std::function<QWidget*(QWidget*)> standIn) { m_standIn = std::move(standIn); }
    // The panel never takes more than this share of the window's width, so the views keep theirs.
    static constexpr double kWidestShare = 0.28;
    void setWidestShare(double share);
    // Presenter mode's sidebar: no file button or summary, a lesson list that can shrink (it elides).
    void setCompact(bool on);
    QString feedbackText() const;
    QString stepText() const;
    QString notice() const;  // what could not be applied, or a file that could not be read
    QPushButton* nextButton() const { return m_next; }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;  // a click on an answer's label chooses it

private:
    void rebuildList();
    void applyStep();  // the current step's state and outline
    QStringList outline();  // outlines the current step's controls; the names it could not find
    void setNotice(const QString& text);

    QMainWindow* m_window;
    Document* m_document;
    ModelOpener m_openModel;
    LessonLibrary m_library;
    std::vector<LessonEntry> m_entries;  // the library's lessons, then files opened in this run
    int m_lesson = -1;
    int m_step = -1;
    bool m_applied = false;
    bool m_compact = false;
    double m_widestShare = kWidestShare;
    void fitWidth();
    std::function<QWidget*(QWidget*)> m_standIn;  // the current step's state has been put into the window
    ControlHighlight* m_highlight;

    QComboBox* m_lessonBox;
    QPushButton* m_openFile;
    QLabel* m_summary;
    QLabel* m_stepTitle;
    QTextBrowser* m_text;
    QPushButton* m_showAgain;
    QWidget* m_questionBox;
    QLabel* m_prompt;
    QVBoxLayout* m_choices;
    QButtonGroup* m_choiceGroup;
    std::vector<QWidget*> m_choiceRows;  // one per answer: its radio button and its wrapped label
    QLabel* m_feedback;
    QLabel* m_notice;
    QPushButton* m_back;
    QPushButton* m_next;
};

} // namespace attnscope
