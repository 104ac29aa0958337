#include "ui/scenes/scenestate.h"

#include <QObject>

#include "ui/document/document.h"

namespace attnscope {

Scene captureScene(const Document& doc)
{
    Scene scene;
    if (!doc.modelSpec().isEmpty()) scene.model = doc.modelSpec().toStdString();
    scene.text = doc.text().toStdString();
    AttentionSettings settings = doc.settings();
    settings.multiplierOverride.reset();  // a sweep's internal knob, never a setting a person made
    scene.settings = settings;
    scene.focus = SceneFocus{doc.focus().layer, doc.focus().head};
    if (!doc.tab().isEmpty()) scene.tab = doc.tab().toStdString();
    if (!doc.view().isEmpty()) scene.view = doc.view().toStdString();
    if (doc.hasOwnCompareB()) scene.compareB = doc.compareB();  // otherwise B follows A, and will again
    scene.display = displayName(doc.attentionDisplay()).toStdString();
    scene.words = doc.wordLevel();
    scene.zoom = doc.heatmapZoom();
    scene.picture = pictureName(doc.attentionPicture()).toStdString();
    scene.lines = doc.lines();
    return scene;
}

Result<QStringList> applyScene(Document& doc, const ModelOpener& openModel, const Scene& scene)
{
    using R = Result<QStringList>;
    QStringList warnings;
    // 1. The model first: everything after it is read against it, and a failure changes nothing.
    if (scene.model && QString::fromStdString(*scene.model) != doc.modelSpec()) {
        const Status opened = openModel(QString::fromStdString(*scene.model));
        if (!opened.ok()) {
            return R::fail(QObject::tr("The scene's model '%1' cannot be opened: %2")
                               .arg(QString::fromStdString(*scene.model), QString::fromStdString(opened.error()))
                               .toStdString());
        }
    }
    if (scene.text) doc.setText(QString::fromStdString(*scene.text));
    if (scene.settings) doc.setSettings(*scene.settings);
    if (scene.focus) doc.setFocus({scene.focus->layer, scene.focus->head});
    if (scene.compareB) doc.setCompareB(*scene.compareB);
    if (scene.display)
        doc.setAttentionDisplay(*scene.display == Scene::kDisplayValueWeighted ? AttentionDisplay::ValueWeighted : AttentionDisplay::Weights);
    if (scene.words) doc.setWordLevel(*scene.words);
    if (scene.zoom) doc.setHeatmapZoom(*scene.zoom);  // after the sentence: a span longer than the last text is kept for it
    if (scene.picture) doc.setAttentionPicture(*scene.picture == Scene::kPictureLines ? AttentionPicture::Lines : AttentionPicture::Heatmap);
    if (scene.lines) doc.setLines(*scene.lines);
    // 2. Tab and view by name, so a scene saved before a tab was added still finds its tab. A view is looked
    // for in the tab it ends up in, the scene's or, when the window lacks that one, the current tab.
    const QString view = scene.view ? QString::fromStdString(*scene.view) : QString();
    if (scene.tab && !doc.setPlace(QString::fromStdString(*scene.tab)))
        warnings << QObject::tr("This AttnScope has no tab '%1'.").arg(QString::fromStdString(*scene.tab));
    if (!view.isEmpty() && !doc.setPlace(doc.tab(), view))
        warnings << QObject::tr("The tab '%1' has no view '%2'.").arg(doc.tab(), view);
    return R::ok(warnings);
}

} // namespace attnscope
