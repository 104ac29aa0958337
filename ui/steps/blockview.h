#pragma once
// The transformer block around the focused layer: the residual stream before and after attention, the
// second layer norm, the feed-forward network (expansion to d_ff, activation, projection back) and the
// second residual, with the per-token norm of each contribution so a learner sees what attention added.
//
// An encoder–decoder has a second kind of block: a choice above the plots switches to the decoder's, whose
// three sublayers (masked self-attention over the target, cross-attention to the encoder's output, the
// feed-forward) each add to the stream, here for the model's own answer to the sentence (the Cross-attention
// view's default target) at the focused layer, counted in the decoder's layers.
#include <QWidget>
#include <optional>

#include "ui/document/document.h"
#include "ui/common/latesttask.h"
#include "core/model/encoderdecoder.h"

class QComboBox;
class QCustomPlot;
class QLabel;
class QStackedWidget;

namespace attnscope {

class MatrixPlot;

class BlockView : public QWidget {
    Q_OBJECT
public:
    explicit BlockView(Document* document, QWidget* parent = nullptr);

    // Encoder (or decoder-only) steps: "residual_in", "attn_output", "residual_mid", "ln2", "ff_hidden",
    // "ff_output", "residual_out".
    // Decoder steps: "dec_residual_in", "dec_self_output", "dec_after_self", "dec_cross_output",
    // "dec_after_cross", "dec_ff_hidden", "dec_ff_output", "dec_residual_out".
    MatrixPlot* plot(const QString& step) const;
    // One graph per contribution of the block shown, in the order above minus ln2 and the FFN hidden layer.
    QCustomPlot* normsPlot() const;
    // An encoder–decoder's decoder block (true) or its encoder block (false); ignored for other models.
    void showDecoder(bool decoder);
    bool showsDecoder() const;
    // The decoder block's pass, once shown (tests).
    const std::optional<EncoderDecoderTrace>& decoderTrace() const { return m_decoderTrace; }
    void waitForDecoder() { m_task.wait(); }

    struct Page {
        QWidget* widget = nullptr;
        QList<QPair<QString, MatrixPlot*>> plots;
        QCustomPlot* norms = nullptr;
    };

private:
    struct DecoderOutcome {
        QString error;
        TokenizedText target;
        EncoderDecoderTrace trace;
    };
    void refresh();
    void refreshDecoder();

    Document* m_document;
    QComboBox* m_stack;
    QLabel* m_note;
    QStackedWidget* m_pages;
    Page m_encoder, m_decoder;
    std::optional<EncoderDecoderTrace> m_decoderTrace;
    LatestTask<DecoderOutcome> m_task{this};
};

} // namespace attnscope
