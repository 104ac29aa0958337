#pragma once
// View 7: why attention at all. The same held-out probe sentences (core/train/probes/recall.h) through the built-in
// transformer and the recurrent baseline builtin-rnn, with a controlled number of filler words between the
// clue and the prediction: accuracy and p(correct answer) against that distance for both (left). Beside it,
// for one probe sentence at one distance, the path the clue takes (core/train/probes/cluepath.h): the GRU's hidden
// state over the steps, the only thing that carries the clue forward, against every transformer head's
// attention from the last token straight back to the clue.
//
// The view compares two fixed models, whatever model the document holds. Both measurements run off the GUI
// thread (common/latesttask.h), and only once the view is first shown or a picture asks for it.
//
// Dimension letters: T tokens of the chosen prompt, Hd the GRU's hidden width, L layers and H heads.
#include <QWidget>
#include <memory>
#include <vector>

#include "ui/common/latesttask.h"
#include "ui/lab/whyattention/cluepathplot.h"
#include "ui/document/document.h"
#include "ui/lab/labplot.h"
#include "core/model/recurrentmodel.h"
#include "core/train/probes/cluepath.h"
#include "core/train/probes/recall.h"

class QBoxLayout;
class QComboBox;
class QLabel;
class QSpinBox;

namespace attnscope {

// What the recall plot draws: one measurement of each model on the same prompts.
struct RecallCurves {
    train::RecallResult transformer, recurrent;
    QString error;  // a sentence when the measurement could not be made
};

class WhyAttentionView : public QWidget {
    Q_OBJECT
public:
    explicit WhyAttentionView(Document* document, QWidget* parent = nullptr);

    static constexpr int kSentences = 100;  // probe sentences per distance, as the CLI's default
    static constexpr int kSideBySideWidth = 900;  // narrower pages put the path under the recall plot
    static const std::vector<int>& distances();  // 0, 1, 2, 4, 8, 16, 32 filler words

    // The probe plotted and traced; the probe sentence (0-based, of sentences()) and the distance traced.
    train::RecallProbe probe() const;
    void setProbe(train::RecallProbe probe);
    int sentence() const;
    void setSentence(int index);
    int distance() const;
    void setDistance(int distance);  // one of distances()
    int sentences() const { return m_sentences; }
    void setSentences(int count);  // fewer probe sentences per distance (tests)

    // The options of the recall measurement shown, and of the traced prompt's list (recallPrompts).
    train::RecallOptions recallOptions() const;
    // What is drawn: null until computed (or on failure, with the error in curves()->error / pathError()).
    std::shared_ptr<const RecallCurves> curves() const { return m_curves; }
    std::shared_ptr<const train::CluePath> path() const { return m_path; }
    const QString& pathError() const { return m_pathError; }
    QCustomPlot* recallPlot() const { return m_recallPlot; }
    CluePathPlot* pathPlot() const { return m_pathPlot; }
    // The four curves: transformer accuracy, transformer p(correct), GRU accuracy, GRU p(correct).
    QCPGraph* curve(int index) const { return m_graphs[std::size_t(index)]; }
    QString pathText() const;     // the path length sentences over the two heatmaps
    QString verdictText() const;  // what the curves say, in words

    // Starts what is not computed yet and blocks until both results are shown (pictures and tests).
    void waitForResults();

protected:
    void showEvent(QShowEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void buildRecallPlot();
    void start();          // both measurements, once the view is first needed
    void refreshCurves();  // the recall measurement for the probe
    void refreshPath();    // the traced prompt
    void showCurves(std::shared_ptr<const RecallCurves> curves);
    struct PathResult {
        std::shared_ptr<const train::CluePath> path;
        train::RecallPrompt prompt;
        QString transformerTop, recurrentTop;  // each model's most probable next token
        QString error;
    };
    void showPath(PathResult result);
    void moveDistanceMarker();

    Document* m_document;
    bool m_started = false;
    int m_sentences = kSentences;
    QComboBox* m_probeBox;
    QSpinBox* m_sentenceBox;
    QComboBox* m_distanceBox;
    QLabel* m_status;
    QLabel* m_verdict;
    QLabel* m_prompt;
    QLabel* m_caption;
    QBoxLayout* m_plots;  // the recall plot and the clue's path
    QCustomPlot* m_recallPlot;
    CluePathPlot* m_pathPlot;
    QCPTextElement* m_recallTitle;
    std::vector<QCPGraph*> m_graphs;
    labplot::Marker m_distanceMarker;
    std::shared_ptr<const RecallCurves> m_curves;
    std::shared_ptr<const train::CluePath> m_path;
    QString m_pathError;
    LatestTask<std::shared_ptr<const RecallCurves>> m_curveTask{this};
    LatestTask<PathResult> m_pathTask{this};
};

} // namespace attnscope
