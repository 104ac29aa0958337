#pragma once
// A tab widget whose pages are views of one Document, built from a tab folder's list of views
// (common/viewregistry.h): the scaling lab, the step-by-step tab and the research tab.
#include <QTabWidget>

#include "common/tabnames.h"
#include "common/viewregistry.h"

namespace attnscope {

class Document;

class DocumentTabs : public QTabWidget {
public:
    DocumentTabs(Document* document, const ViewList& views, QWidget* parent = nullptr) : QTabWidget(parent)
    {
        // A page's object name is how scenes, lessons and the render command call it (common/tabnames.h).
        for (const ViewEntry& entry : views) {
            if (!entry.page) continue;
            QWidget* view = entry.make(document, this);
            view->setObjectName(entry.name);
            addTab(view, entry.title);
        }
    }

    // The page called `name`, as its class.
    template <class View>
    View* page(const QString& name) const
    {
        const int index = pageIndex(this, name);
        return index < 0 ? nullptr : qobject_cast<View*>(widget(index));
    }
};

} // namespace attnscope
