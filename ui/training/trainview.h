#pragma once
// The Train tab: train a small model on the built-in corpus (or a text file) and watch its heads form.
// A live loss curve, the throughput, and the all-heads grid of a probe sentence redrawn from snapshots
// of the weights every hundred steps; a slider scrubs back through the snapshots; the trained model can
// be handed to every other tab. Training runs on a worker thread (TrainSession), so the window stays live.
// While the window holds a recurrent model the tab trains a GRU instead (trainpresets.h): the same corpus,
// loss curve, snapshots and "Use in every tab", and in the grid's place the sentence that it has no heads.
#include <QElapsedTimer>
#include <QWidget>
#include <vector>

#include "ui/document/document.h"
#include "ui/training/trainsession.h"

class QComboBox;
class QCustomPlot;
class QCPGraph;
class QLabel;
class QLineEdit;
class QPushButton;
class QSlider;
class QSpinBox;
class QSplitter;
class QStackedWidget;

namespace attnscope {

class HeadGridView;

class TrainView : public QWidget {
    Q_OBJECT
public:
    explicit TrainView(Document* document, QWidget* parent = nullptr);

    // The run's settings as the controls give them.
    TrainRunSettings runSettings() const;
    // Starts a run with these settings (Start uses runSettings(); tests pass smaller ones). The run is kept
    // in settings.stateFolder, which runSettings() sets to stateFolder().
    void startRun(const TrainRunSettings& settings);

    // Where runs are kept while they train (Preferences::trainingFolder(); tests set their own). When it
    // holds an unfinished run, the tab offers to continue it, or to discard it.
    const QString& stateFolder() const { return m_stateFolder; }
    void setStateFolder(const QString& folder);
    bool offersToContinue() const;
    QString continueOffer() const;  // the offer's sentence
    // Goes on with the saved run, as its Continue button does; the sentence when it cannot be read.
    Status continueSaved();
    void discardSaved();

    TrainSession* session() const { return m_session; }
    HeadGridView* grid() const { return m_grid; }
    QCustomPlot* lossPlot() const { return m_plot; }
    QSlider* snapshotSlider() const { return m_slider; }
    QPushButton* resetButton() const { return m_reset; }
    QLabel* rolesLabel() const { return m_roles; }
    QPushButton* useButton() const { return m_use; }
    QLabel* statusLabel() const { return m_status; }
    // True when Start trains a GRU: the window held a recurrent model when the tab was last idle.
    bool offersRecurrent() const { return m_offersRecurrent; }
    // True when the grid's place shows noHeadsText(): the snapshot shown (or, before one, the run Start
    // makes) is a GRU's.
    bool showsNoHeads() const;
    QString noHeadsText() const;
    int snapshotCount() const { return static_cast<int>(m_snapshots.size()); }
    int shownStep() const;  // the step of the snapshot the grid shows, -1 when none
    const SnapshotPtr& probeSnapshot() const { return m_probeSnapshot; }

    static constexpr int kMaxSnapshots = 120;
    static const char* defaultProbe();

private:
    struct Saved {
        int step;
        ModelPtr model;                // a decoder's snapshot, or
        RecurrentModelPtr recurrent;  // a GRU's
    };
    void offerModels();  // the sizes of the kind the window's model asks for
    void showNoHeads(bool on);  // the sentence in the grid's place, or the grid
    void startOrPause();
    void addStep(const train::StepReport& r);
    void addSnapshot(const Saved& saved);
    void showSnapshot(int index);
    void updateButtons();
    void updateStatus();
    void refreshOffer();
    void clearRun();

protected:
    void showEvent(QShowEvent* event) override;

private:

    Document* m_document;
    TrainSession* m_session;
    QComboBox* m_corpus;
    QComboBox* m_size;
    QSpinBox* m_steps;
    QPushButton* m_start;
    QPushButton* m_reset;
    QPushButton* m_use;
    QLabel* m_status;
    QCustomPlot* m_plot;
    QCPGraph* m_lossGraph;
    QLineEdit* m_probe;
    HeadGridView* m_grid;
    QSplitter* m_split;           // the loss curve | m_probeSide
    QList<int> m_gridSizes;       // the split while a grid was shown
    QStackedWidget* m_probeSide;  // the probe and its grid, or m_noHeads
    QLabel* m_noHeads;
    bool m_offersRecurrent = false;
    bool m_runIsRecurrent = false;
    QLabel* m_roles;
    QSlider* m_slider;
    QLabel* m_sliderLabel;
    QString m_corpusFile;
    QString m_stateFolder;
    QWidget* m_offer;
    QLabel* m_offerText;
    int m_savedStep = -1;
    QString m_saveProblem;

    std::vector<Saved> m_snapshots;
    SnapshotPtr m_probeSnapshot;
    int m_shown = -1;
    train::StepReport m_last;
    double m_smoothedLoss = 0.0;
    double m_smoothedSpeed = 0.0;
    QElapsedTimer m_clock;
    qint64 m_parameters = 0;
};

} // namespace attnscope
