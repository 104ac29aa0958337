#pragma once
// Rotary positions (RoPE): where a Llama-family model's positions enter. Left, how fast each dimension
// pair of a head turns per position (log scale; with the base frequencies beside when the model rescales
// them, as Llama 3's "llama3" scaling does). Right, the score q.k of two fixed vectors as the distance
// between query and key grows: the score depends on that distance alone, and for q = k = ones it decays
// with oscillations. The numbers come from core/analysis/ropeprofile.h.
#include <QWidget>

#include "core/analysis/ropeprofile.h"
#include "ui/document/document.h"

class QCPItemStraightLine;
class QCPItemText;
class QCustomPlot;
class QLabel;

namespace attnscope {

class RopeView : public QWidget {
    Q_OBJECT
public:
    explicit RopeView(Document* document, QWidget* parent = nullptr);

    static constexpr int kMaxDistance = 1024;  // or the model's context, when shorter

    const RopeProfile& profile() const { return m_profile; }
    QCustomPlot* frequencyPlot() const { return m_frequencies; }
    QCustomPlot* scorePlot() const { return m_scores; }
    QString caption() const;

private:
    void refresh();

    Document* m_document;
    QCustomPlot* m_frequencies;
    QCustomPlot* m_scores;
    QLabel* m_caption;
    QCPItemStraightLine* m_originalContext;
    QCPItemText* m_originalContextLabel;
    RopeProfile m_profile;
};

} // namespace attnscope
