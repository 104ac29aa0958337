#pragma once
// A tab widget whose pages are views of one Document, built from a tab folder's list of views
// (document/viewregistry.h): the scaling lab, the step-by-step tab and the research tab.
#include <QScrollArea>
#include <QTabWidget>

#include "ui/document/noattentionpage.h"
#include "ui/document/tabnames.h"
#include "ui/document/viewregistry.h"

namespace attnscope {

class Document;

// The scroll area a view page sits in. QScrollArea resizes its view from inside its own event filter when
// the view resizes or asks for a new layout; with wrapped words (whose height depends on the width) and
// a scroll bar that comes and goes with that height, the resize it makes can start the next one, and
// the two can alternate until the stack runs out. A nested call is left out: the outer one finishes the
// layout, and any later request from the view still arrives as usual.
class PageScrollArea : public QScrollArea {
public:
    using QScrollArea::QScrollArea;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (m_inFilter) return false;
        m_inFilter = true;
        const bool handled = QScrollArea::eventFilter(watched, event);
        m_inFilter = false;
        return handled;
    }

private:
    bool m_inFilter = false;
};

class DocumentTabs : public QTabWidget {
public:
    DocumentTabs(Document* document, const ViewList& views, QWidget* parent = nullptr) : QTabWidget(parent)
    {
        // A page's object name is how scenes, lessons and the render command call it (document/tabnames.h).
        // Each view sits in a scroll area that gives it the room it needs and nothing less: on a small
        // screen, beside a lesson or at presenter mode's doubled type, a view whose plots and words no
        // longer fit scrolls instead of being squeezed until its labels are cut and its plots are gone.
        // With room to spare the view fills the page exactly as before.
        for (const ViewEntry& entry : views) {
            if (!entry.page) continue;
            auto* area = new PageScrollArea(this);
            area->setFrameShape(QFrame::NoFrame);
            area->setWidgetResizable(true);
            QWidget* view = entry.make(document, area);
            view->setObjectName(entry.name);
            area->setWidget(view);
            // A view of attention gives one sentence instead while the document holds a recurrent model.
            addTab(entry.withoutAttention ? static_cast<QWidget*>(area) : new NoAttentionPage(document, area, this), entry.title);
        }
    }

    // Shows the page that holds `view` (a view is inside its page's scroll area, so QTabWidget's
    // setCurrentWidget does not find it).
    void setCurrentView(const QWidget* view)
    {
        for (int i = 0; i < count(); ++i)
            if (pageView(this, i) == view) setCurrentIndex(i);
    }

    // The page that is a `View`, found by its class so no view's name is typed twice (the registry has it).
    template <class View>
    View* page() const
    {
        for (int i = 0; i < count(); ++i)
            if (auto* view = qobject_cast<View*>(pageView(this, i))) return view;
        return nullptr;
    }
};

} // namespace attnscope
