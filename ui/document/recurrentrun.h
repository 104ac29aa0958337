#pragma once
// The window's way through a recurrent model (core/model/recurrentmodel.h): text -> the model's tokenizer ->
// runRecurrent -> the next tokens from the last row of its logits, with the same top-k the transformers' list
// uses. There is no attention to capture, so the snapshot has tokens and next tokens and an empty trace.
#include <QString>
#include <utility>

#include "core/model/recurrentmodel.h"
#include "core/result.h"
#include "ui/document/document.h"

namespace attnscope {

// What a model spec opens in the window: a transformer, or a recurrent model (then `model` is null).
struct OpenedModel {
    ModelPtr model;
    RecurrentModelPtr recurrent;
};

// loadModelSpec for any spec the window opens, "builtin-rnn" and folders of model_type "attnscope-gru" included.
Result<OpenedModel> openModelSpec(const QString& spec);

// The sentence every attention view gives while `model` is open (core/open/openmodel.h's noAttentionSentence).
QString noAttentionText(const RecurrentModel& model);

// Runs tokenize + runRecurrent for one request; safe on any thread. The snapshot's `recurrent` is the model,
// its `model` null and its trace empty; a text the model cannot read keeps its tokens and gives the sentence.
std::pair<SnapshotPtr, QString> computeRecurrentSnapshot(const RecurrentModelPtr& model, const QString& text, quint64 generation);

} // namespace attnscope
