#pragma once
// The Attention tab's split between the focused head and the overview (the heads grid over the next-token
// list) while a recurrent model is open: the grid is hidden, so the overview holds only the list; it gets
// the list's width and keeps it as the window grows, and the sentence in the focused head's place takes the
// rest. The split a person had comes back with a transformer. A splitter not laid out yet (the window or
// the tab not shown) has no sizes to share: the split is made after its first real resize.
#include <QList>
#include <QObject>

class QSplitter;

namespace attnscope {

class Document;
class NextTokenView;

class OverviewSplit : public QObject {
public:
    // `splitter` holds the focused head's page at 0 and the overview at 1; the object is its child.
    OverviewSplit(Document* document, QSplitter* splitter, NextTokenView* list);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void follow();     // the document's model changed kind, or not
    bool fitList();    // false while the splitter has no size to share
    Document* m_document;
    QSplitter* m_splitter;
    NextTokenView* m_list;
    QList<int> m_before;    // the split while a transformer was open
    bool m_recurrent = false;
    bool m_pending = false;  // a fit waits for the splitter's first size
    int m_overviewStretch;
};

} // namespace attnscope
