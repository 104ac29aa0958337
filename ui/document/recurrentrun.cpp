#include "ui/document/recurrentrun.h"

#include <chrono>
#include <new>
#include <string_view>

#include "core/model/nexttokens.h"
#include "core/open/openmodel.h"
#include "core/text/words.h"
#include "ui/document/sentence.h"

namespace attnscope {

Result<OpenedModel> openModelSpec(const QString& spec)
{
    const QByteArray utf8 = spec.toUtf8();
    const std::string_view name(utf8.constData(), std::size_t(utf8.size()));
    if (!isRecurrentSpec(name)) {
        Result<ModelPtr> model = loadModelSpec(spec);
        if (!model) return Result<OpenedModel>::fail(model.error());
        return Result<OpenedModel>::ok(OpenedModel{*model, nullptr});
    }
    try {
        Result<RecurrentModelPtr> recurrent = loadRecurrentModelSpec(name);
        if (!recurrent) return Result<OpenedModel>::fail(recurrent.error());
        return Result<OpenedModel>::ok(OpenedModel{nullptr, *recurrent});
    } catch (const std::bad_alloc&) {
        return Result<OpenedModel>::fail("there is not enough memory to load '" + utf8.toStdString() + "'.");
    }
}

QString noAttentionText(const RecurrentModel& model)
{
    return QString::fromStdString(noAttentionSentence(model.config.name.empty() ? "this model" : model.config.name));
}

std::pair<SnapshotPtr, QString> computeRecurrentSnapshot(const RecurrentModelPtr& model, const QString& text, quint64 generation)
{
    const auto start = std::chrono::steady_clock::now();
    auto snap = std::make_shared<Snapshot>();
    snap->recurrent = model;
    snap->generation = generation;
    if (!model) return {snap, QStringLiteral("No model is loaded.")};
    const QByteArray utf8 = text.toUtf8();
    const std::string_view bytes(utf8.constData(), std::size_t(utf8.size()));
    Result<TokenizedText> tokens = model->tokenizer->encode(bytes);
    if (!tokens) return {snap, QString::fromStdString(tokens.error())};
    snap->tokens = std::move(*tokens);
    snap->words = wordsOf(bytes, snap->tokens);
    if (snap->tokens.ids.empty()) return {snap, QString()};  // nothing typed: nothing to predict from
    try {
        Result<RecurrentTrace> run = runRecurrent(*model, snap->tokens.ids);
        if (!run) return {snap, coreSentence(run.error())};
        // 1. The last row predicts the token after the text; the list's softmax and order are the core's.
        const Eigen::RowVectorXf last = run->logits.row(run->tokens - 1);  // (V)
        snap->nextTokens = topKOfLogits(last, *model->tokenizer, Snapshot::kNextTokens);
    } catch (const std::bad_alloc&) {
        return {snap, QStringLiteral("There is not enough memory to run the model over this text.")};
    }
    snap->computeMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return {snap, QString()};
}

// Document's side of a recurrent model, kept beside the pass it requests rather than in document.cpp.
void Document::setRecurrentModel(RecurrentModelPtr model, const QString& spec)
{
    if (!model) return;
    m_modelSpec = spec;
    if (model == m_recurrent) return;
    m_recurrent = std::move(model);  // the transformer stays in m_model, for the Train tab and for setModel
    emit recurrentModelChanged(m_recurrent);
    request();
}

} // namespace attnscope
