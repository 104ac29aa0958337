#pragma once
// A tab widget whose pages are views of one Document: the scaling lab and the step-by-step tab are
// both built from it, one addView() line per page.
#include <QTabWidget>

#include "common/tabnames.h"

namespace attnscope {

class Document;

class DocumentTabs : public QTabWidget {
public:
    explicit DocumentTabs(Document* document, QWidget* parent = nullptr) : QTabWidget(parent), m_document(document) {}

protected:
    // Makes a View(document, this), adds it as the next tab under `title` and returns it. `name` is how
    // scenes, lessons and the render command call it (common/tabnames.h); by default, the title's.
    template <class View>
    View* addView(const QString& title, const QString& name = QString())
    {
        auto* view = new View(m_document, this);
        view->setObjectName(name.isEmpty() ? nameFromTitle(title) : name);
        addTab(view, title);
        return view;
    }

private:
    Document* m_document;
};

} // namespace attnscope
