#include "ui/training/trainsession.h"

#include <QFile>
#include <QMetaObject>
#include <sys/resource.h>

#include "core/text/filetext.h"
#include "core/limits.h"
#include "core/train/trainer.h"
#include "core/train/corpus/corpus.h"
#include "core/train/recurrent/grutrainer.h"
#include "ui/training/trainstate.h"

namespace attnscope {

TrainSession::TrainSession(QObject* parent) : QObject(parent)
{
    qRegisterMetaType<train::StepReport>();
    qRegisterMetaType<RecurrentModelPtr>();
}

TrainSession::~TrainSession() { stopWorker(); }

void TrainSession::setState(State state)
{
    if (m_state == state) return;
    m_state = state;
    emit stateChanged(state);
}

void TrainSession::stopWorker()
{
    if (!m_thread) return;
    m_stop = true;
    {
        std::lock_guard lock(m_pauseMutex);
        m_paused = false;
    }
    m_pauseChanged.notify_all();
    // A step takes a fraction of a second; the worker checks the flag between steps.
    m_thread->wait();
    delete m_thread;
    m_thread = nullptr;
    m_stop = false;
}

void TrainSession::start(const TrainRunSettings& settings) { launch(settings, {}, false); }

void TrainSession::continueSaved(const TrainRunSettings& settings, std::vector<double> losses)
{
    launch(settings, std::move(losses), true);
}

void TrainSession::launch(TrainRunSettings settings, std::vector<double> losses, bool resume)
{
    stopWorker();
    const quint64 generation = ++m_generation;
    m_paused = false;
    setState(State::Preparing);
    m_thread = QThread::create([this, settings = std::move(settings), losses = std::move(losses), resume, generation]() mutable {
        run(std::move(settings), std::move(losses), resume, generation);
    });
    m_thread->start();
}

void TrainSession::pause()
{
    if (m_state != State::Running) return;
    m_paused = true;
    setState(State::Paused);
}

void TrainSession::resume()
{
    if (m_state != State::Paused) return;
    {
        std::lock_guard lock(m_pauseMutex);
        m_paused = false;
    }
    m_pauseChanged.notify_all();
    setState(State::Running);
}

void TrainSession::reset()
{
    ++m_generation;
    stopWorker();
    setState(State::Idle);
}

void TrainSession::wait()
{
    if (m_thread) m_thread->wait();
}

void TrainSession::run(TrainRunSettings settings, std::vector<double> losses, bool resume, quint64 generation)
{
    // 1. Yield to the GUI: a nice value of 10 on this thread, inherited by the trainer's threads.
    setpriority(PRIO_PROCESS, 0, 10);
    auto post = [this, generation](auto&& f) {
        QMetaObject::invokeMethod(
            this,
            [this, generation, f = std::forward<decltype(f)>(f)]() mutable {
                if (generation == m_generation) f();
            },
            Qt::QueuedConnection);
    };
    auto fail = [&](const std::string& error) {
        post([this, e = QString::fromStdString(error)] {
            setState(State::Failed);
            emit failed(e);
        });
    };

    // 2. The corpus: generated, or read from the person's file; then its vocabulary and tokens.
    std::string corpus;
    if (settings.corpusFile.isEmpty()) {
        corpus = train::generateCorpus({settings.corpusDocuments, settings.options.seed});
    } else {
        Result<std::string> text = readSmallFile(settings.corpusFile.toStdString(), kMaxCorpusBytes);
        if (!text) return fail(text.error());
        corpus = std::move(*text);
    }
    if (m_stop) return;
    Result<train::PreparedCorpus> ready = train::prepareCorpus(corpus, train::kDefaultVocabularySize, settings.options.sequenceLength);
    if (!ready) return fail(ready.error());
    corpus = std::string();
    const std::shared_ptr<const VocabTokenizer> tokenizer = ready->tokenizer;
    const std::shared_ptr<const train::TrainingData> shared = ready->data;
    const auto announce = [&](qint64 parameters) {
        post([this, tokens = int(shared->tokens.size()), v = tokenizer->vocabSize(), parameters] {
            setState(State::Running);
            emit prepared(tokens, v, parameters);
        });
    };
    const auto name = [](int step) { return "training, step " + std::to_string(step); };

    // 3. Steps until done, stopped or reset; a pause waits here between steps. The same loop for both
    //    trainers: `save` keeps the run on disk, `snapshot` hands the weights to the view.
    const auto train = [&](auto& trainer, const auto& save, const auto& snapshot) {
        while (!trainer.finished() && !m_stop) {
            if (m_paused) {
                save();  // a paused run is on disk, in case the program is ended while it waits
                std::unique_lock lock(m_pauseMutex);
                m_pauseChanged.wait(lock, [this] { return !m_paused || m_stop; });
                if (m_stop) break;
            }
            const train::StepReport r = trainer.step();
            losses.push_back(r.loss);
            post([this, r] { emit stepDone(r); });
            if (r.step % settings.saveEvery == 0 || trainer.finished()) save();
            if (r.step % settings.snapshotEvery == 0 || trainer.finished()) snapshot(r.step);
        }
        if (trainer.finished() && !m_stop) post([this] { setState(State::Finished); });
    };

    if (settings.gru) {
        // A GRU run: fresh weights only (there is no state to resume), never on disk.
        Q_ASSERT(!resume && settings.stateFolder.isEmpty());
        Result<std::unique_ptr<train::GruTrainer>> made = train::GruTrainer::create({*settings.gru, settings.options}, tokenizer, shared);
        if (!made) return fail(made.error());
        train::GruTrainer& trainer = **made;
        const auto snapshot = [&](int step) {
            post([this, step, m = trainer.toModel(name(step))] { emit recurrentSnapshotReady(step, m); });
        };
        announce(qint64(trainer.parameters().size()));
        snapshot(0);
        return train(trainer, [] {}, snapshot);
    }

    // The same corpus gives the same vocabulary and tokens, so a saved run goes on exactly where it was.
    Result<std::unique_ptr<train::Trainer>> made =
        resume ? train::Trainer::resume(QFile::encodeName(settings.stateFolder).toStdString(), settings.options, tokenizer, shared)
               : train::Trainer::create(settings.options, tokenizer, shared);
    if (!made) return fail(made.error());
    train::Trainer& trainer = **made;
    if (std::ptrdiff_t(losses.size()) > trainer.stepsDone()) losses.resize(std::size_t(trainer.stepsDone()));
    // A state that cannot be written (a full disk) is said once; the training goes on, unsaved.
    bool keep = !settings.stateFolder.isEmpty();
    auto save = [&] {
        if (!keep) return;
        if (const Status s = saveTraining(settings.stateFolder, trainer, settings, losses); !s.ok()) {
            keep = false;
            post([this, e = QString::fromStdString(s.error())] { emit saveFailed(e); });
            return;
        }
        post([this, step = trainer.stepsDone()] { emit saved(step); });
    };
    const auto snapshot = [&](int step) {
        post([this, step, m = trainer.toModel(name(step))] { emit snapshotReady(step, m); });
    };
    announce(qint64(trainer.parameters().size()));
    if (resume) post([this, step = trainer.stepsDone(), losses] { emit continued(step, losses); });
    snapshot(trainer.stepsDone());
    if (!resume) save();  // a new run replaces whatever was saved before at once
    train(trainer, save, snapshot);
}

} // namespace attnscope
