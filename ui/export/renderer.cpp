#include "ui/export/renderer.h"

#include <QCoreApplication>
#include <QHash>
#include <memory>
#include <qcustomplot.h>

#include "core/limits.h"
#include "ui/attention/attentionviews.h"
#include "ui/common/exportimage.h"
#include "ui/document/recurrentrun.h"
#include "ui/document/tabnames.h"
#include "ui/lab/labviews.h"
#include "ui/research/researchviews.h"
#include "ui/steps/stepsviews.h"

namespace attnscope {

const ViewList& allViews()
{
    static const ViewList views = [] {
        ViewList all;
        for (const ViewList* list : {&attentionViews(), &labViews(), &stepsViews(), &researchViews()})
            all.insert(all.end(), list->begin(), list->end());
        return all;
    }();
    return views;
}

const ViewEntry* findView(const QString& name)
{
    for (const ViewEntry& entry : allViews())
        if (entry.name == name) return &entry;
    return nullptr;
}

QStringList renderViewNames()
{
    QStringList names;
    for (const ViewEntry& entry : allViews()) names << entry.name;
    return names;
}

QString renderViewTitle(const QString& view)
{
    const ViewEntry* entry = findView(view);
    return entry ? tabTitle(entry->tab) + QStringLiteral(" · ") + entry->title : view;
}

Status checkRenderRequest(const QString& view, const RenderOptions& options)
{
    if (!findView(view))
        return Status::failure("there is no view '" + view.toStdString() + "'; the views are " +
                               renderViewNames().join(QStringLiteral(", ")).toStdString() + ".");
    if (exportFormat(options.outPath).isEmpty())
        return Status::failure("the output file must end in .png, .svg or .pdf: '" + options.outPath.toStdString() + "'.");
    if (options.dpi < kMinExportDpi || options.dpi > kMaxExportDpi)
        return Status::failure("the dpi must be between " + std::to_string(kMinExportDpi) + " and " + std::to_string(kMaxExportDpi) + ".");
    if (options.width < kMinRenderSide || options.height < kMinRenderSide || options.width > kMaxRenderSide || options.height > kMaxRenderSide)
        return Status::failure("the size must be between " + std::to_string(kMinRenderSide) + " and " + std::to_string(kMaxRenderSide) +
                               " on each side.");
    return {};
}

Status renderView(const QString& view, Document& document, const RenderOptions& options)
{
    if (Status request = checkRenderRequest(view, options); !request.ok()) return request;
    const ViewEntry& entry = *findView(view);
    // The window gives this sentence in the view's place (document/noattentionpage.h); a picture cannot.
    if (const RecurrentModelPtr& recurrent = document.recurrentModel(); recurrent && !entry.withoutAttention)
        return Status::failure(noAttentionText(*recurrent).toStdString());

    if (const ModelPtr& model = document.model(); model && (options.layer >= 0 || options.head >= 0)) {
        HeadSelection focus = document.focus();
        if (options.layer >= 0) focus.layer = options.layer;
        if (options.head >= 0) focus.head = options.head;
        if (focus.layer >= model->config.layers || focus.head >= model->config.heads)
            return Status::failure(QStringLiteral("layer %1, head %2 is not in this model (%3 layers, %4 heads).")
                                       .arg(focus.layer).arg(focus.head).arg(model->config.layers).arg(model->config.heads)
                                       .toStdString());
        document.setFocus(focus);
    }
    document.waitForIdle();
    if (!document.error().isEmpty()) return Status::failure(document.error().toStdString());

    // The widget class the window shows, laid out at the requested size without putting a window on any
    // screen, so label thinning sees the output size.
    const QSize size(options.width, options.height);
    std::unique_ptr<QWidget> widget(entry.make(&document, nullptr));
    widget->setAttribute(Qt::WA_DontShowOnScreen);
    widget->resize(size);
    if (entry.prepare)
        if (Status s = entry.prepare(widget.get(), document, options); !s.ok()) return s;
    widget->show();
    if (entry.settle)
        if (Status s = entry.settle(widget.get(), document, options); !s.ok()) return s;

    const auto paint = [&](QCPPainter& painter, bool vector) {
        if (!vector) painter.setRenderHint(QPainter::Antialiasing, true);
        paintWidgetTree(widget.get(), painter);
    };
    return exportImage(options.outPath, size, QStringLiteral("AttnScope: ") + view, paint, options.dpi);
}

} // namespace attnscope
