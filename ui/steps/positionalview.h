#pragma once
// Positional encoding: the sinusoidal table (position x dimension), the model's learned table when it has
// one, and the permutation demo: "dog bites man" vs "man bites dog" with positions off (the weights are
// the same matrix with rows and columns reordered) and on (they are not).
#include <QWidget>

#include "ui/document/document.h"

class QLabel;

namespace attnscope {

class MatrixPlot;

class PositionalView : public QWidget {
    Q_OBJECT
public:
    static constexpr int kShownPositions = 64;  // rows of each table drawn

    explicit PositionalView(Document* document, QWidget* parent = nullptr);

    // Computes the four forward passes of the demo for the focused head (mask none, so only positions matter).
    void runPermutationDemo();
    bool demoReady() const { return m_ready; }
    // max |P A P^T - B| over the focused head's weights; -1 before the demo has run.
    double permutationDifference(bool positionsOn) const { return positionsOn ? m_diffOn : m_diffOff; }
    MatrixPlot* demoPlot(bool positionsOn, bool second) const { return m_demo[(positionsOn ? 2 : 0) + (second ? 1 : 0)]; }
    MatrixPlot* sinusoidalPlot() const { return m_sinusoidal; }
    MatrixPlot* learnedPlot() const { return m_learned; }

    static constexpr const char* kFirst = "dog bites man";
    static constexpr const char* kSecond = "man bites dog";

private:
    void refreshTables();

    Document* m_document;
    MatrixPlot* m_sinusoidal;
    MatrixPlot* m_learned;
    MatrixPlot* m_demo[4];
    QLabel* m_verdictOff;
    QLabel* m_verdictOn;
    bool m_ready = false;
    double m_diffOff = -1, m_diffOn = -1;
};

} // namespace attnscope
