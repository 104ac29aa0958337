#pragma once
// What the core tests share: a model from a spec, a sentence's ids and settings from a mask's words (as
// --mask takes them), or a fatal test error.
#include <QString>
#include <QtGlobal>

#include "core/model/attentionsettings.h"
#include "core/model/model.h"

namespace attnscope::testing {

ModelPtr load(const char* spec);

std::vector<int> idsOf(const Model& model, const char* text);

AttentionSettings maskSettings(const QString& mask);

} // namespace attnscope::testing
