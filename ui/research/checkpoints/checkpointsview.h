#pragma once
// Checkpoints: one model seen across its own training (EleutherAI's Pythia publishes 154 checkpoints of each
// size as hub revisions). Pick a cached repository with several revisions, or a folder of checkpoint folders;
// a slider walks through them in training order and redraws every head and the focused head on the window's
// text; beside it, a head-role score of every head against the training step. Each revision's weights hash
// is shown, and a revision whose weights equal an earlier one's is flagged. Revisions the cache lacks can be
// downloaded one after another from here.
//
// Each checkpoint is read on the thread pool (checkpointreading.h): the one the slider shows first, then the
// rest in order, each drawn as it arrives; a new text or setting starts over, keeping nothing stale. Only
// while the view is on screen: a hidden view reads nothing.
#include <QWidget>
#include <vector>

#include "ui/common/latesttask.h"
#include "ui/research/checkpoints/checkpointreading.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QSlider;
class QSpinBox;

namespace attnscope {

class CheckpointDownloads;
class CheckpointsPlot;
class HeadGridView;
class MatrixPlot;

class CheckpointsView : public QWidget {
    Q_OBJECT
public:
    explicit CheckpointsView(Document* document, QWidget* parent = nullptr);

    // Lists the cache's series again (after a download, or when the cache changed outside the window).
    void rescan();
    // Shows a folder's checkpoints as a series of its own, chosen; a sentence when the folder is not one.
    Status addFolder(const QString& folder);
    // Chooses the series named `name` (a repository or a folder's path); false when there is none such.
    bool chooseSeries(const QString& name);
    const CheckpointSeries* series() const;  // the chosen one, or null
    int seriesCount() const { return int(m_series.size()); }

    // The checkpoint the slider shows, and choosing it.
    int shownIndex() const;
    void showCheckpoint(int index);
    HeadSelection focusedHead() const { return m_focus; }
    void setFocusedHead(HeadSelection head);
    HeadRole role() const;
    void setRole(HeadRole role);

    // Every checkpoint's reading (null while not read), in the series' order.
    const std::vector<CheckpointReadingPtr>& readings() const { return m_readings; }
    // For each checkpoint, the index of an earlier one with the same weights, or -1.
    std::vector<int> identicalWeights() const;
    // Reads every checkpoint now, as a picture or a test needs (the event loop runs meanwhile); from then on
    // the view reads when hidden as well.
    void waitForAll();
    bool isReading() const { return m_task.busy(); }

    HeadGridView* grid() const { return m_grid; }
    MatrixPlot* headPlot() const { return m_head; }
    CheckpointsPlot* rolePlot() const { return m_plot; }
    QSlider* slider() const { return m_slider; }
    QComboBox* seriesBox() const { return m_seriesBox; }
    QCheckBox* logarithmicBox() const { return m_logBox; }
    QLabel* revisionLabel() const { return m_revision; }
    QLabel* statusLabel() const { return m_status; }
    CheckpointDownloads* downloads() const { return m_downloads; }

protected:
    void showEvent(QShowEvent* event) override;

private:
    void seriesChosen();
    void inputMayHaveChanged();
    void readNext();
    void readingArrived(quint64 generation, const CheckpointReadingPtr& reading);
    void redraw();
    void revisionDownloaded(const QString& repo, const QString& revision);
    CheckpointInput currentInput() const;

    Document* m_document;
    std::vector<CheckpointSeries> m_series;     // the cache's, then folders a person added
    std::vector<CheckpointSeries> m_folders;
    std::vector<CheckpointReadingPtr> m_readings;
    CheckpointInput m_input;  // what m_readings were made with
    bool m_inputSet = false;
    bool m_readHidden = false; // reads while hidden too: waitForAll was called (a picture, a test)
    quint64 m_generation = 0; // raised whenever m_readings are started over
    HeadSelection m_focus;
    LatestTask<CheckpointReadingPtr> m_task{this};

    QComboBox* m_seriesBox;
    QPushButton* m_folderButton;
    QPushButton* m_rescanButton;
    QComboBox* m_roleBox;
    QCheckBox* m_logBox;
    QSlider* m_slider;
    QLabel* m_revision;
    HeadGridView* m_grid;
    MatrixPlot* m_head;
    CheckpointsPlot* m_plot;
    CheckpointDownloads* m_downloads;
    QLabel* m_note;
    QLabel* m_status;
};

} // namespace attnscope
