#pragma once
// The global query-key map of the focused head (after AttentionViz): every query and key of the sentence,
// and of sentences loaded from a text file, in one 2-D scatter. Hover a point for its token; click a query
// to mark the keys it attends to most.
#include <QStringList>
#include <vector>

#include "core/research/qkmap.h"
#include "ui/research/researchview.h"

class QCPGraph;
class QCPItemText;
class QCustomPlot;
class QPushButton;

namespace attnscope {

struct QkMapResult : ResearchResult {
    QueryKeyMap map;
    std::vector<QString> labels;  // (N) token text of every point
    int sentences = 0;            // how many sentences went in (the typed one first)
    int droppedLines = 0;         // file lines left out to stay within kQueryKeyMapMaxTokens
};

class QkMapView : public ResearchView {
    Q_OBJECT
public:
    static constexpr int kHighlightedKeys = 3;
    static constexpr qint64 kMaxFileBytes = 4 << 20;
    QkMapView(Document* document, QWidget* parent = nullptr);

    // Sentences besides the typed one, one per line; empty lines are skipped. Recomputes.
    void setExtraSentences(const QStringList& lines);
    // Reads one sentence per line from a UTF-8 text file; a sentence for a person when it cannot.
    QString loadSentences(const QString& path);
    // Marks query `point` (an index into the map's points) and the keys it attends to most; -1 clears.
    void selectQuery(int point);
    int selectedQuery() const { return m_selected; }
    std::vector<int> highlightedKeys() const { return m_highlighted; }
    // The point under a widget position of the plot (queries first, then keys), or -1; sets *isKey.
    int pointAt(const QPointF& pos, bool* isKey) const;

    QCustomPlot* plot() const { return m_plot; }
    QCPGraph* queryGraph() const { return m_queries; }

protected:
    ResearchJob job(const SnapshotPtr& snapshot) override;
    void showResult(const SnapshotPtr& snapshot, const ResearchResultPtr& result) override;

private:
    void hover(QMouseEvent* event);
    void click(QMouseEvent* event);

    QCustomPlot* m_plot;
    QCPGraph* m_queries;
    QCPGraph* m_keys;
    QCPGraph* m_selectedQuery;
    QCPGraph* m_selectedKeys;
    QPushButton* m_load;
    QPushButton* m_clear;
    QLabel* m_sources;
    std::vector<QCPItemText*> m_pointLabels;  // token text beside the chosen query and its keys
    QStringList m_extra;
    int m_selected = -1;
    std::vector<int> m_highlighted;
};

} // namespace attnscope
