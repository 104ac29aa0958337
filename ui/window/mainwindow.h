#pragma once
// The AttnScope window: a sentence box, its tokens, the focused head, every head, and the knobs.
// It owns the Document and wires the views to it; the views never talk to each other.
#include <QElapsedTimer>
#include <QMainWindow>

#include "ui/document/document.h"
#include "ui/document/recurrentrun.h"
#include "ui/common/latesttask.h"

class QLabel;
class QPushButton;
class QLineEdit;
class QScrollArea;
class QTabWidget;

namespace attnscope {

class ControlPanel;
class HeadGridView;
class HeatmapView;
class LinesPanel;
class ModelMenu;
class NextTokenView;
class TokenChips;
class WindowActions;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    // Leaves presenter mode first: closing hides the docks, and what presenter mode does when the Lessons
    // panel hides reads the window, which must still be a MainWindow then.
    ~MainWindow() override;

    Document* document() const { return m_document; }
    QLineEdit* sentenceEdit() const { return m_sentence; }
    TokenChips* tokenChips() const { return m_chips; }
    HeatmapView* heatmap() const { return m_heatmap; }
    LinesPanel* lines() const { return m_lines; }  // the focused head as lines, the heatmap's alternative
    HeadGridView* grid() const { return m_grid; }
    ControlPanel* controls() const { return m_controls; }
    QTabWidget* tabs() const { return m_tabs; }
    NextTokenView* nextTokens() const { return m_nextTokens; }
    QLabel* errorLabel() const { return m_error; }
    QPushButton* truncateButton() const { return m_truncate; }
    QLabel* statusLabel() const { return m_status; }
    // A notice across the top of the window that waits, without blocking anything, until it is closed (what
    // the last session could not bring back); an empty text hides it.
    void showNotice(const QString& text);
    QLabel* noticeLabel() const { return m_notice; }
    double lastRenderMs() const { return m_renderMs; }
    // The File, View and Help menus: scenes, export, presenter mode, lessons, colour map (windowactions.h).
    WindowActions* actions() const { return m_actions; }
    // The Model menu: built-in, random, folder, Hugging Face cache, recent models (ui/window/modelmenu.h).
    ModelMenu* modelMenu() const { return m_modelMenu; }

    // Loads a model spec or folder and makes it current; the error sentence when it cannot. It returns when
    // the model is current, but loads on a pool thread with the event loop running, so the window keeps
    // drawing (scenes and lesson steps open models this way). An open asked for while it waits wins: this
    // one then fails, saying so.
    Status openModel(const QString& spec);
    // What the Model menu and a dropped folder do: loads on a pool thread, so the window keeps answering
    // while a 500 MB checkpoint is read (about a second), then makes it current, or says in a dialog why
    // it cannot, and shows any load warnings once. A newer open replaces one still loading. Emits
    // modelOpenFinished either way.
    void openModelInBackground(const QString& spec);
    bool isOpeningModel() const { return m_opening.busy(); }

signals:
    void modelOpenFinished(const QString& spec, bool ok);

protected:
    void keyPressEvent(QKeyEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void nameAndExplainControls();
    void showSnapshot(const SnapshotPtr& snapshot);
    void showOpened(const OpenedModel& opened, const QString& spec);  // into the document, either kind
    void showError(const QString& error);
    void updateStatus();
    void fitChips(int needed);
    void moveFocus(int dLayer, int dHead);
    void followPlace();

    Document* m_document;
    LatestTask<Result<OpenedModel>> m_opening{this};  // the newest open, waited for or not; older ones are dropped
    QLineEdit* m_sentence;
    TokenChips* m_chips;
    QScrollArea* m_chipScroll;
    QLabel* m_error;
    QWidget* m_noticeBar;
    QLabel* m_notice;
    QPushButton* m_truncate;
    HeatmapView* m_heatmap;
    LinesPanel* m_lines;
    HeadGridView* m_grid;
    QTabWidget* m_tabs;
    NextTokenView* m_nextTokens;
    ControlPanel* m_controls;
    QLabel* m_status;
    QElapsedTimer m_renderClock;
    bool m_renderPending = false;
    double m_renderMs = 0.0;
    WindowActions* m_actions = nullptr;
    ModelMenu* m_modelMenu = nullptr;
};

} // namespace attnscope
