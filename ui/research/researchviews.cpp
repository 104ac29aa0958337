#include "ui/document/tabnames.h"
#include "ui/research/researchviews.h"

#include <QApplication>
#include <QObject>

#include "ui/document/document.h"
#include "ui/research/interventions/ablationview.h"
#include "ui/research/readouts/attributionview.h"
#include "ui/research/checkpoints/checkpointsview.h"
#include "ui/research/corpus/corpusview.h"
#include "ui/research/generationview.h"
#include "ui/research/corpus/headrolesview.h"
#include "ui/research/interventions/importanceview.h"
#include "ui/research/readouts/logitlensview.h"
#include "ui/research/interventions/patchingview.h"
#include "ui/research/readouts/qkmapview.h"
#include "ui/research/readouts/rolloutview.h"
#include "ui/research/weights/circuitsview.h"

namespace attnscope {

namespace {

int tokenCount(const Document& document) { return int(document.snapshot()->tokens.ids.size()); }

// `query` picks a token (-1: the last): the rollout's row, the query marked on the query-key map.
Status checkToken(QWidget*, Document& document, const RenderOptions& options)
{
    const int T = tokenCount(document);
    if (options.query >= T)
        return Status::failure(QStringLiteral("token %1 is past the last token (the text has %2 tokens, numbered from 0).")
                                   .arg(options.query).arg(T).toStdString());
    return {};
}

// Waits for the measurement, then puts the chosen token in; a measurement that could not be made is an
// input error, not a picture of an error.
Status waitForResult(QWidget* view, Document& document, const RenderOptions& options)
{
    auto* research = qobject_cast<ResearchView*>(view);
    research->waitForResultInBackground();
    // What the result posted (layout requests, queued updates) is delivered; no input is read, since this
    // also runs during a live File > Export View, where a click must not reach the window mid-render.
    QCoreApplication::sendPostedEvents();
    research->resize(options.width, options.height);
    const int token = options.query >= 0 ? options.query : tokenCount(document) - 1;
    if (auto* rollout = qobject_cast<RolloutView*>(view)) rollout->setToken(token);
    if (auto* map = qobject_cast<QkMapView*>(view)) map->selectQuery(token);  // the typed sentence comes first
    if (research->result() && !research->result()->error.isEmpty()) {
        QString message = research->result()->error;
        message[0] = message[0].toLower();
        return Status::failure(message.toStdString());
    }
    return {};
}

// The corrupted prompt is the options' source text (the second text a picture compares against).
Status preparePatching(QWidget* view, Document& document, const RenderOptions& options)
{
    if (Status s = checkToken(view, document, options); !s.ok()) return s;
    qobject_cast<PatchingView*>(view)->corruptedEdit()->setText(options.source.isEmpty() ? QStringLiteral("The cat sat on the mat")
                                                                                         : options.source);
    return {};
}

void capturePatching(const QWidget* tabs, RenderOptions& options)
{
    if (const PatchingView* patching = tabs->findChild<PatchingView*>()) options.source = patching->corruptedEdit()->text();
}

void captureRolloutToken(const QWidget* tabs, RenderOptions& options)
{
    if (const RolloutView* rollout = tabs->findChild<RolloutView*>()) options.query = rollout->token();
}

void captureMapQuery(const QWidget* tabs, RenderOptions& options)
{
    if (const QkMapView* map = tabs->findChild<QkMapView*>()) options.query = map->selectedQuery();
}

// Reads every checkpoint of the chosen series; a cache without a series is nothing to draw.
Status waitForCheckpoints(QWidget* view, Document&, const RenderOptions&)
{
    auto* checkpoints = qobject_cast<CheckpointsView*>(view);
    if (!checkpoints->series())
        return Status::failure("the Hugging Face cache has no repository with two or more revisions to show as checkpoints.");
    checkpoints->waitForAll();
    return {};
}

} // namespace

const ViewList& researchViews()
{
    const QString tab = tabName(WindowTab::Research);
    static const ViewList views = {
        {QStringLiteral("heads-roles"), QObject::tr("Head roles"), tab, true, makeView<HeadRolesView>, checkToken, waitForResult, {}},
        {QStringLiteral("ablation"), QObject::tr("Ablation"), tab, true, makeView<AblationView>, checkToken, waitForResult, {}},
        {QStringLiteral("importance"), QObject::tr("Importance"), tab, true, makeView<ImportanceView>, checkToken, waitForResult, {}},
        {QStringLiteral("rollout"), QObject::tr("Rollout"), tab, true, makeView<RolloutView>, checkToken, waitForResult, captureRolloutToken},
        {QStringLiteral("attribution"), QObject::tr("Attribution"), tab, true, makeView<AttributionView>, checkToken, waitForResult, {}},
        {QStringLiteral("qk-map"), QObject::tr("QK map"), tab, true, makeView<QkMapView>, checkToken, waitForResult, captureMapQuery},
        {QStringLiteral("circuits"), QObject::tr("Circuits"), tab, true, makeView<CircuitsView>, {}, waitForResult, {}},
        {QStringLiteral("logit-lens"), QObject::tr("Logit lens"), tab, true, makeView<LogitLensView>, checkToken, waitForResult, {}},
        {QStringLiteral("patching"), QObject::tr("Patching"), tab, true, makeView<PatchingView>, preparePatching, waitForResult, capturePatching},
        {QStringLiteral("generation"), QObject::tr("Generation"), tab, true, makeView<GenerationView>, checkToken, waitForResult, {}},
        {QStringLiteral("corpus"), QObject::tr("Corpus"), tab, true, makeView<CorpusView>, {}, waitForResult, {}},
        {QStringLiteral("checkpoints"), QObject::tr("Checkpoints"), tab, true, makeView<CheckpointsView>, {}, waitForCheckpoints, {}},
    };
    return views;
}

} // namespace attnscope
