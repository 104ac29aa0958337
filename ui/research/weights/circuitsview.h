#pragma once
// What a head computes for any input, read from its weights (core/research/circuits.h): the focused head's
// QK and OV singular values, its QK circuit between the first positions' embeddings (models with a table of
// absolute positions), every head coloured by its OV circuit's copying score, the composition of the
// focused head with every head before it (its queries, keys or values reading their output), and the
// tokens that feed the top directions of its full OV circuit and the tokens they raise. Nothing here
// depends on the typed text: the view recomputes when the model or the focused head changes.
#include <map>
#include <vector>

#include "core/research/circuits.h"
#include "ui/research/researchview.h"

class QComboBox;
class QCPGraph;
class QCustomPlot;
class QTableWidget;

namespace attnscope {

class MatrixPlot;

struct CircuitsResult : ResearchResult {
    HeadSelection focus;
    std::vector<CircuitStack> stacks;  // Self, or Encoder, Decoder, Cross
    Circuits heads;                     // every head's spectra and copying score, no composition
    Circuits into;                      // the focused head's rows and the composition into it, every stack
    struct Readout {
        std::vector<OvDirection> directions;
        std::vector<std::string> inputText, outputText;  // per direction, its tokens joined for display
        QString error;
    };
    std::map<CircuitStack, Readout> readouts;
    Matrix positional;        // (N, N) the focused head's P W_QK Pᵀ; empty without a position table
    QString positionalNote;   // why there is none
    int layers(CircuitStack stack) const;
};

class CircuitsView : public ResearchView {
    Q_OBJECT
public:
    enum class Kind { Query, Key, Value };
    static constexpr int kDirections = 3, kTokens = 6, kPositions = 24;

    CircuitsView(Document* document, QWidget* parent = nullptr);

    QComboBox* stackBox() const { return m_stack; }
    QComboBox* kindBox() const { return m_kind; }
    QCustomPlot* spectraPlot() const { return m_spectra; }
    QCPGraph* qkGraph() const { return m_qk; }
    QCPGraph* ovGraph() const { return m_ov; }
    MatrixPlot* copyingPlot() const { return m_copying; }
    MatrixPlot* compositionPlot() const { return m_composition; }
    MatrixPlot* positionalPlot() const { return m_positional; }
    QTableWidget* readoutTable() const { return m_readout; }
    CircuitStack stack() const;
    Kind kind() const;

protected:
    ResearchJob job(const SnapshotPtr& snapshot) override;
    void showResult(const SnapshotPtr& snapshot, const ResearchResultPtr& result) override;
    bool changesMeasurement(const Snapshot& measured, const Snapshot& latest) const override;

private:
    void showSelection();

    QComboBox* m_stack;
    QComboBox* m_kind;
    QCustomPlot* m_spectra;
    QCPGraph* m_qk;
    QCPGraph* m_ov;
    MatrixPlot* m_copying;
    MatrixPlot* m_composition;
    MatrixPlot* m_positional;
    QTableWidget* m_readout;
    QLabel* m_notes;
};

} // namespace attnscope
