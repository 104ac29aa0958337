#pragma once
// A page of a view that only makes sense for attention (ViewEntry::withoutAttention false): it shows the
// view while the document holds a transformer, and in its place the one sentence of core/open/openmodel.h's
// noAttentionSentence while it holds a recurrent model, or still shows a snapshot of one (so a view comes
// back only with a transformer's snapshot to draw). One mechanism for every such view, so no view has
// to know recurrent models exist; document/tabnames.h's pageView looks through it to the view.
#include <QStackedWidget>

class QLabel;

namespace attnscope {

class Document;

class NoAttentionPage : public QStackedWidget {
    Q_OBJECT
public:
    NoAttentionPage(Document* document, QWidget* content, QWidget* parent = nullptr);
    QWidget* content() const { return m_content; }
    bool showsSentence() const;
    // True when `view` is inside a page that shows the sentence (document/refreshgate.h waits for it).
    static bool covers(const QWidget* view);
    QString sentence() const;

private:
    void follow();

    Document* m_document;
    QWidget* m_content;
    QLabel* m_sentence;
};

} // namespace attnscope
