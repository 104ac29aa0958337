#include "ui/research/interventions/patchingview.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>
#include <algorithm>
#include <numeric>

#include "ui/common/matrixplot.h"
#include "core/model/forward.h"
#include "ui/research/readouts/logitlensview.h"

namespace attnscope {

namespace {

// The next-token logits after `ids` (V), empty when the run fails.
Eigen::RowVectorXf nextLogits(const Model& model, const std::vector<int>& ids, const AttentionSettings& settings)
{
    CaptureRequest capture;
    capture.allAttention = false;
    capture.nextTokenLogits = true;
    Result<ForwardTrace> t = forward(model, ids, settings, capture);
    return t ? t->nextLogits : Eigen::RowVectorXf();
}

// The wrong token when none is typed: what the corrupted prompt favours. Its most probable next token when
// that is not the answer; otherwise, of its ten most probable, the one the corruption raised most over the
// sentence. -1 when a run fails.
int favouredByCorruption(const Eigen::RowVectorXf& clean, const Eigen::RowVectorXf& corrupted, int answer)
{
    if (clean.size() == 0 || clean.size() != corrupted.size()) return -1;
    std::vector<int> order(std::size_t(corrupted.size()));
    std::iota(order.begin(), order.end(), 0);
    const std::size_t n = std::min<std::size_t>(10, order.size());
    std::partial_sort(order.begin(), order.begin() + std::ptrdiff_t(n), order.end(),
                      [&](int a, int b) { return corrupted(a) != corrupted(b) ? corrupted(a) > corrupted(b) : a < b; });
    if (order[0] != answer) return order[0];
    int best = -1;
    for (std::size_t i = 1; i < n; ++i)
        if (best < 0 || corrupted(order[i]) - clean(order[i]) > corrupted(best) - clean(best)) best = order[i];
    return best;
}

} // namespace

PatchingView::PatchingView(Document* document, QWidget* parent)
    : ResearchView(document, parent), m_corrupted(new QLineEdit), m_answer(new QLineEdit), m_wrong(new QLineEdit),
      m_copy(new QPushButton(tr("Copy the sentence"))), m_metric(new QLabel), m_residual(new MatrixPlot),
      m_heads(new MatrixPlot), m_groups(new MatrixPlot)
{
    m_corrupted->setPlaceholderText(tr("the sentence with a word changed, as many tokens long"));
    m_answer->setPlaceholderText(tr("the sentence's top next token"));
    m_wrong->setPlaceholderText(tr("what the corrupted prompt favours"));
    // Three short rows rather than one long one, so a narrow view (presenter mode beside a lesson) keeps every label.
    auto* corruptedRow = new QHBoxLayout;
    corruptedRow->addWidget(new QLabel(tr("Corrupted prompt")));
    corruptedRow->addWidget(m_corrupted, 1);
    auto* tokenRow = new QHBoxLayout;
    tokenRow->addWidget(new QLabel(tr("Answer")));
    tokenRow->addWidget(m_answer, 1);
    tokenRow->addWidget(new QLabel(tr("Wrong")));
    tokenRow->addWidget(m_wrong, 1);
    auto* inputs = new QVBoxLayout;
    inputs->addLayout(corruptedRow);
    inputs->addLayout(tokenRow);
    auto* copyRow = new QHBoxLayout;
    copyRow->addWidget(m_copy);
    copyRow->addWidget(m_metric, 1);
    inputs->addLayout(copyRow);
    m_metric->setWordWrap(true);

    auto* note = new QLabel(tr("The sentence is the clean prompt. 0 (white): the patch restores nothing; 1 (red): all "
                               "of the clean run's logit difference."));
    note->setWordWrap(true);
    QSplitter* split = proportionalSplit(Qt::Horizontal, {m_residual, m_heads, m_groups}, {3, 2, 1});
    m_groups->hide();  // shown for models whose query heads share keys and values
    auto* column = new QVBoxLayout(this);
    column->addLayout(inputs);
    column->addWidget(split, 1);
    column->addWidget(note);
    column->addWidget(makeStatusLabel());

    m_corrupted->setObjectName(QStringLiteral("patch-corrupted"));
    m_corrupted->setToolTip(tr("The prompt the clean run's activations are put into: the same number of tokens as the "
                               "sentence, changed where it matters (a name, a noun)."));
    m_answer->setObjectName(QStringLiteral("patch-answer"));
    m_answer->setToolTip(tr("The token the sentence should lead to, as the token strip shows it, or #id."));
    m_wrong->setObjectName(QStringLiteral("patch-wrong"));
    m_wrong->setToolTip(tr("The token it is compared against, as the token strip shows it, or #id."));
    m_copy->setToolTip(tr("Put the sentence in the corrupted prompt's box, to change a word of it."));
    for (QLineEdit* edit : {m_corrupted, m_answer, m_wrong}) connect(edit, &QLineEdit::textChanged, this, &PatchingView::refresh);
    connect(m_copy, &QPushButton::clicked, this, [this] {
        m_corrupted->setText(this->document()->text());
        m_corrupted->setFocus();
    });
}

ResearchJob PatchingView::job(const SnapshotPtr& snapshot)
{
    QString nothing = nothingToMeasure(*document(), *snapshot);
    if (nothing.isEmpty() && !snapshot->model->config.causal)
        nothing = tr("Activation patching compares next-token logits; this model is an encoder.");
    if (nothing.isEmpty() && m_corrupted->text().isEmpty())
        nothing = tr("Type a corrupted prompt: the sentence with a word changed, as many tokens long.");
    const std::string corruptedText = m_corrupted->text().toStdString();
    const std::string answerText = m_answer->text().trimmed().toStdString(), wrongText = m_wrong->text().trimmed().toStdString();
    return [snapshot, nothing, corruptedText, answerText, wrongText](const JobContext& context) -> ResearchResultPtr {
        if (!nothing.isEmpty()) return errorResult(nothing);
        const Model& model = *snapshot->model;
        Result<TokenizedText> corrupted = model.tokenizer->encode(corruptedText);
        if (!corrupted) return errorResult(tr("The corrupted prompt: %1").arg(QString::fromStdString(corrupted.error())));
        const std::vector<int>& clean = snapshot->tokens.ids;
        // Each empty token is its prompt's own most probable next token.
        int answer = -1, wrong = -1;
        const Eigen::RowVectorXf cleanLogits = answerText.empty() || wrongText.empty() ? nextLogits(model, clean, snapshot->settings)
                                                                                       : Eigen::RowVectorXf();
        if (answerText.empty() && cleanLogits.size() > 0) cleanLogits.maxCoeff(&answer);
        else if (!answerText.empty()) {
            Result<int> id = tokenIdOf(*model.tokenizer, answerText, "the answer token");
            if (!id) return errorResult(coreSentence(id.error()));
            answer = *id;
        }
        if (wrongText.empty())
            wrong = favouredByCorruption(cleanLogits, nextLogits(model, corrupted->ids, snapshot->settings), answer);
        else if (Result<int> id = tokenIdOf(*model.tokenizer, wrongText, "the wrong token")) wrong = *id;
        else return errorResult(coreSentence(id.error()));
        Result<ActivationPatching> p = activationPatching(model, clean, corrupted->ids, snapshot->settings, answer, wrong,
                                                          context.keepGoing());
        if (!p) return errorResult(coreSentence(p.error()));
        auto r = std::make_shared<PatchingResult>();
        for (std::size_t t = 0; t < clean.size(); ++t) {
            QString label = tokenLabel(snapshot->tokens.tokens[t]);
            if (clean[t] != corrupted->ids[t]) label += QLatin1Char('/') + tokenLabel(corrupted->tokens[t]);
            r->positions << label;
        }
        r->answer = tokenLabel(model.tokenizer->displayToken(answer));
        r->wrong = tokenLabel(model.tokenizer->displayToken(wrong));
        r->patching = std::move(*p);
        return r;
    };
}

void PatchingView::showResult(const SnapshotPtr&, const ResearchResultPtr& result)
{
    const auto* r = dynamic_cast<const PatchingResult*>(result.get());
    if (!r) {
        m_metric->clear();
        for (MatrixPlot* plot : {m_residual, m_heads, m_groups}) {
            plot->setMatrix(Matrix(), MatrixPlot::Scale::Symmetric);
            plot->setTitle(QString());
        }
        m_groups->hide();
        return;
    }
    const ActivationPatching& p = r->patching;
    m_metric->setText(tr("Metric: logit('%1') − logit('%2') after the last token: %3 for the sentence, %4 for the corrupted prompt.")
                          .arg(r->answer, r->wrong)
                          .arg(p.cleanDiff, 0, 'f', 3)
                          .arg(p.corruptedDiff, 0, 'f', 3));
    m_residual->setMatrix(p.residual.cast<float>(), MatrixPlot::Scale::Symmetric, lensRowLabels(p.layers + 1), r->positions);
    m_residual->setTitle(tr("The residual stream put back at one position, by layer"));
    m_heads->setMatrix(p.head.cast<float>(), MatrixPlot::Scale::Symmetric, layerLabels(p.layers), headLabels(p.heads));
    m_heads->setTitle(tr("One head's output put back at every position"));
    // A grouped-query model: the query heads of each key/value group put back together.
    m_groups->setVisible(p.group.size() > 0);
    if (p.group.size() > 0) {
        QStringList groups;
        for (int g = 0; g < p.group.cols(); ++g) groups << tr("KV %1").arg(g);
        m_groups->setMatrix(p.group.cast<float>(), MatrixPlot::Scale::Symmetric, layerLabels(p.layers), groups);
        m_groups->setTitle(tr("A key/value group's heads put back together"));
    }
    // One scale for the grids, reaching at least ±1, so a colour means the same recovery on every side.
    const double reach = std::max({1.0, p.residual.cwiseAbs().maxCoeff(), p.head.size() > 0 ? p.head.cwiseAbs().maxCoeff() : 0.0,
                                   p.group.size() > 0 ? p.group.cwiseAbs().maxCoeff() : 0.0});
    for (MatrixPlot* plot : {m_residual, m_heads, m_groups}) {
        plot->colorMap()->setDataRange(QCPRange(-reach, reach));
        plot->replot(QCustomPlot::rpQueuedReplot);
    }
}

} // namespace attnscope
