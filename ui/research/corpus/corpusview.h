#pragma once
// Statistics over a corpus: what each head usually does, measured over many documents rather than the one
// sentence typed (Clark et al. 2019, "What does BERT look at?", Figure 2). Two plots by layer: the mean
// weight on the first token, on special tokens, on punctuation and on the previous token (a line through
// each layer's mean, a dot per head), and the mean entropy. The corpus is the mixed text that ships inside
// the program until a file is opened; the measurement follows the model and the settings, never the typed
// sentence, so typing does not start it again.
#include <QString>
#include <memory>
#include <string>
#include <vector>

#include "core/research/corpusstats.h"
#include "ui/research/researchview.h"

class QCPGraph;
class QCustomPlot;
class QPushButton;
class QSpinBox;

namespace attnscope {

struct CorpusResult : ResearchResult {
    CorpusStats stats;
    QString corpusName;
    int tokenLimit = 0;  // each document was cut to this many tokens
};

class CorpusView : public ResearchView {
    Q_OBJECT
public:
    // The statistics on the weight plot, in the order of its legend.
    enum class Statistic { FirstToken = 0, Special, Punctuation, PreviousToken, Entropy };
    static constexpr int kStatisticCount = 5;

    CorpusView(Document* document, QWidget* parent = nullptr);

    QCustomPlot* entropyPlot() const { return m_entropy; }
    QPushButton* openButton() const { return m_open; }
    QPushButton* shippedButton() const { return m_shipped; }
    QSpinBox* documentsBox() const { return m_documents; }
    QLabel* summaryLabel() const { return m_summary; }  // the corpus, and what was measured of it
    QString corpusName() const { return m_name; }
    // The line through each layer's mean of one statistic, and the dots of every head.
    QCPGraph* layerGraph(Statistic statistic) const { return m_layerGraphs[std::size_t(statistic)]; }
    QCPGraph* headGraph(Statistic statistic) const { return m_headGraphs[std::size_t(statistic)]; }

    // Reads a corpus file (UTF-8, one document per line) and measures it; an empty string on success, else
    // the sentence the window shows in a dialog (the corpus in use stays).
    QString openCorpus(const QString& path);
    // Back to the corpus that ships inside the program.
    void useShippedCorpus();
    // The tooltip for the point of `plot` nearest `pixel` (within a few pixels), or empty.
    QString tipAt(const QCustomPlot* plot, const QPointF& pixel) const;

    static QString statisticName(Statistic statistic);

protected:
    ResearchJob job(const SnapshotPtr& snapshot) override;
    void showResult(const SnapshotPtr& snapshot, const ResearchResultPtr& result) override;
    bool changesMeasurement(const Snapshot& measured, const Snapshot& latest) const override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void setCorpus(std::string text, const QString& name, bool shipped);
    void clearPlots();

    QPushButton* m_open;
    QPushButton* m_shipped;
    QSpinBox* m_documents;
    QLabel* m_summary;
    QCustomPlot* m_weights;
    QCustomPlot* m_entropy;
    std::vector<QCPGraph*> m_layerGraphs, m_headGraphs;  // (kStatisticCount)
    std::shared_ptr<const std::string> m_corpus;
    QString m_name;
};

// The settings a corpus is measured under: the sentence's, less what names positions of the sentence (its
// blocked keys).
AttentionSettings corpusSettings(const AttentionSettings& settings);

} // namespace attnscope
