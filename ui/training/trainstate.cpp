#include "ui/training/trainstate.h"

#include <QDir>
#include <QFile>
#include <QThread>
#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>

#include "core/io/formats/safetensors.h"
#include "core/train/trainer.h"

namespace attnscope {

namespace {

// The tab's keys beside the trainer's own (step, options, corpus_hash).
constexpr const char* kRunKey = "attnscope_train_tab";
constexpr const char* kLossesKey = "attnscope_losses";

QString statePath(const QString& folder) { return QDir(folder).filePath(QString::fromLatin1(train::Trainer::kStateFile)); }

} // namespace

Status saveTraining(const QString& folder, const train::Trainer& trainer, const TrainRunSettings& settings,
                    const std::vector<double>& losses)
{
    nlohmann::ordered_json run = {{"corpus_file", settings.corpusFile.toStdString()},
                                  {"corpus_documents", settings.corpusDocuments},
                                  {"snapshot_every", settings.snapshotEvery},
                                  {"save_every", settings.saveEvery}};
    const nlohmann::json lossList(losses);
    return trainer.writeState(QFile::encodeName(folder).toStdString(), {{kRunKey, run.dump()}, {kLossesKey, lossList.dump()}});
}

bool hasSavedTraining(const QString& folder) { return QFile::exists(statePath(folder)); }

Result<SavedTraining> readSavedTraining(const QString& folder)
{
    using R = Result<SavedTraining>;
    const QString path = statePath(folder);
    if (!QFile::exists(path)) return R::fail("there is no saved training in '" + QFile::encodeName(folder).toStdString() + "'.");
    Result<SafetensorsFile> file = SafetensorsFile::open(QFile::encodeName(path).toStdString());
    if (!file) return R::fail(file.error());
    const auto& meta = file->metadata();
    const auto field = [&](const char* key) -> const std::string* {
        const auto it = meta.find(key);
        return it == meta.end() ? nullptr : &it->second;
    };
    const std::string* options = field("options");
    const std::string* step = field("step");
    const std::string* runText = field(kRunKey);
    const std::string* lossText = field(kLossesKey);
    const std::string where = inQuotes(QFile::encodeName(path).toStdString());
    if (!options || !step || !runText || !lossText) return R::fail(where + " is not a training the Train tab saved.");

    SavedTraining saved;
    Result<train::TrainOptions> parsed = train::parseTrainOptions(*options);
    if (!parsed) return R::fail(where + ": " + parsed.error());
    saved.settings.options = *parsed;
    saved.settings.options.threads = std::max(1, QThread::idealThreadCount());
    const nlohmann::json run = nlohmann::json::parse(*runText, nullptr, false);
    const nlohmann::json losses = nlohmann::json::parse(*lossText, nullptr, false);
    const auto count = [&](const char* key, int lo, int hi, int& out) {
        const auto it = run.find(key);
        if (it == run.end() || !it->is_number_integer() || *it < lo || *it > hi) return false;
        out = it->get<int>();
        return true;
    };
    if (!run.is_object() || !run.contains("corpus_file") || !run["corpus_file"].is_string() ||
        !count("corpus_documents", 1, 10'000'000, saved.settings.corpusDocuments) ||
        !count("snapshot_every", 1, 10'000'000, saved.settings.snapshotEvery) ||
        !count("save_every", 1, 10'000'000, saved.settings.saveEvery))
        return R::fail(where + " does not say how its run was started.");
    saved.settings.corpusFile = QString::fromStdString(run["corpus_file"].get<std::string>());
    saved.settings.stateFolder = folder;
    saved.step = -1;
    if (const auto [end, ec] = std::from_chars(step->data(), step->data() + step->size(), saved.step);
        ec != std::errc() || end != step->data() + step->size())
        saved.step = -1;
    if (saved.step < 0 || saved.step > saved.settings.options.steps) return R::fail(where + " gives an impossible step count.");
    if (!losses.is_array() || losses.size() != std::size_t(saved.step)) return R::fail(where + " does not hold one loss per step.");
    for (const nlohmann::json& loss : losses) {
        if (!loss.is_number()) return R::fail(where + " does not hold one loss per step.");
        saved.losses.push_back(loss.get<double>());
    }
    return R::ok(std::move(saved));
}

void discardTraining(const QString& folder) { QFile::remove(statePath(folder)); }

} // namespace attnscope
