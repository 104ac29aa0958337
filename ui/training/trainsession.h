#pragma once
// One training run for the Train tab: the core's Trainer (or, for a recurrent run, its GruTrainer) on a worker
// thread, started, paused, resumed and reset from the GUI thread. The worker reports every step's numbers
// and, every few hundred steps, a snapshot of the weights as a model the views can run; both arrive on the
// GUI thread as signals.
//
// The worker lowers its own scheduling priority (and the trainer's threads inherit it), so the window
// stays responsive while training uses every core.
#include <QObject>
#include <QString>
#include <QThread>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>

#include "core/model/model.h"
#include "core/model/recurrentmodel.h"
#include "core/train/recurrent/grunetwork.h"
#include "core/train/trainer.h"
#include "ui/common/modelmetatype.h"

namespace attnscope {

struct TrainRunSettings {
    train::TrainOptions options;
    // Set: the run trains this GRU (core/train/recurrent/grutrainer.h) with `options` as its schedule, batch and
    // optimiser (their `network` unused). Such a run is not kept on disk: the GRU trainer has no state file,
    // so `stateFolder` must be empty.
    std::optional<train::GruConfig> gru;
    QString corpusFile;        // empty: the built-in corpus, generated from the grammar
    int corpusDocuments = 60000;
    int snapshotEvery = 100;   // steps between snapshots
    // Where the run is kept on disk (training/trainstate.h) every saveEvery steps, when it pauses and when it
    // ends; empty: nowhere.
    QString stateFolder;
    int saveEvery = 100;
};

class TrainSession : public QObject {
    Q_OBJECT
public:
    explicit TrainSession(QObject* parent = nullptr);
    ~TrainSession() override;  // stops the worker and waits for it

    enum class State { Idle, Preparing, Running, Paused, Finished, Failed };
    State state() const { return m_state; }

    // Starts a new run (stopping any current one). Reading and tokenising the corpus happen on the worker.
    void start(const TrainRunSettings& settings);
    // Goes on with the run saved in settings.stateFolder from its last saved step (stopping any current
    // one): the same corpus is made again, and the trainer resumes from the saved weights and moments.
    // `losses` are the saved steps' losses; they are reported again with `continued`.
    void continueSaved(const TrainRunSettings& settings, std::vector<double> losses);
    void pause();
    void resume();
    // Stops the run and forgets it; the next start begins from fresh weights.
    void reset();
    // Blocks until the worker has stopped (tests).
    void wait();

signals:
    void stateChanged(attnscope::TrainSession::State state);
    void prepared(int corpusTokens, int vocabulary, qint64 parameters);
    void stepDone(const attnscope::train::StepReport& report);
    void snapshotReady(int step, const attnscope::ModelPtr& model);
    void recurrentSnapshotReady(int step, const attnscope::RecurrentModelPtr& model);  // a GRU run's snapshots
    // A continued run starts at `step`, after these losses (one per step done).
    void continued(int step, const std::vector<double>& losses);
    // The run's state reached the disk at `step` (every saveEvery steps, on pause, at the end).
    void saved(int step);
    void saveFailed(const QString& error);  // once per run; the run goes on unsaved
    void failed(const QString& error);

private:
    void launch(TrainRunSettings settings, std::vector<double> losses, bool resume);
    void run(TrainRunSettings settings, std::vector<double> losses, bool resume, quint64 generation);
    void setState(State state);
    void stopWorker();

    QThread* m_thread = nullptr;
    std::atomic<bool> m_stop{false};
    std::atomic<bool> m_paused{false};
    std::mutex m_pauseMutex;
    std::condition_variable m_pauseChanged;
    std::atomic<quint64> m_generation{0};  // results of an older run are dropped
    State m_state = State::Idle;
};

} // namespace attnscope

Q_DECLARE_METATYPE(attnscope::train::StepReport)
