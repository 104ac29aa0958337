#include "scenes/scenestate.h"

#include <QTabWidget>

#include "common/tabnames.h"
#include "lab/compareview.h"
#include "window/mainwindow.h"

namespace attnscope {

namespace {

CompareView* compareView(const MainWindow& window) { return window.tabs()->findChild<CompareView*>(); }

} // namespace

Scene captureScene(const MainWindow& window)
{
    const Document& doc = *window.document();
    Scene scene;
    if (!doc.modelSpec().isEmpty()) scene.model = doc.modelSpec().toStdString();
    scene.text = doc.text().toStdString();
    AttentionSettings settings = doc.settings();
    settings.multiplierOverride.reset();  // a sweep's internal knob, never a setting a person made
    scene.settings = settings;
    scene.focus = SceneFocus{doc.focus().layer, doc.focus().head};
    const QTabWidget* tabs = window.tabs();
    scene.tab = pageName(tabs, tabs->currentIndex()).toStdString();
    if (const QTabWidget* views = viewTabs(tabs->currentWidget())) scene.view = pageName(views, views->currentIndex()).toStdString();
    if (const CompareView* compare = compareView(window)) scene.compareB = compare->bSide();
    return scene;
}

Result<QStringList> applyScene(MainWindow& window, const Scene& scene)
{
    using R = Result<QStringList>;
    QStringList warnings;
    Document& doc = *window.document();
    // 1. The model first: everything after it is read against it, and a failure changes nothing.
    if (scene.model && QString::fromStdString(*scene.model) != doc.modelSpec()) {
        const Status opened = window.openModel(QString::fromStdString(*scene.model));
        if (!opened.ok()) {
            return R::fail(QObject::tr("The scene's model '%1' cannot be opened: %2")
                               .arg(QString::fromStdString(*scene.model), QString::fromStdString(opened.error))
                               .toStdString());
        }
    }
    if (scene.text) doc.setText(QString::fromStdString(*scene.text));
    if (scene.settings) doc.setSettings(*scene.settings);
    if (scene.focus) doc.setFocus({scene.focus->layer, scene.focus->head});
    if (scene.compareB) {
        if (CompareView* compare = compareView(window)) compare->setBSide(*scene.compareB);
    }
    // 2. Tab and view by name, so a scene saved before a tab was added still finds its tab.
    QTabWidget* tabs = window.tabs();
    if (scene.tab) {
        const int index = pageIndex(tabs, QString::fromStdString(*scene.tab));
        if (index >= 0) tabs->setCurrentIndex(index);
        else warnings << QObject::tr("This AttnScope has no tab '%1'.").arg(QString::fromStdString(*scene.tab));
    }
    if (scene.view && !scene.view->empty()) {
        QTabWidget* views = viewTabs(tabs->currentWidget());
        const int index = pageIndex(views, QString::fromStdString(*scene.view));
        if (index >= 0) views->setCurrentIndex(index);
        else
            warnings << QObject::tr("The tab '%1' has no view '%2'.")
                                   .arg(pageName(tabs, tabs->currentIndex()), QString::fromStdString(*scene.view));
    }
    return R::ok(warnings);
}

} // namespace attnscope
