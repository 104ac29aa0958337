#pragma once
// What the core tests share: a model from a spec, a sentence's ids and settings from a mask's words (as
// --mask takes them), or a fatal test error.
#include <QString>
#include <QtGlobal>

#include "model/attentionsettings.h"
#include "model/model.h"

namespace attnscope::testing {

inline ModelPtr load(const char* spec)
{
    Result<ModelPtr> m = loadModel(spec);
    if (!m) qFatal("%s", m.error().c_str());
    return *m;
}

inline std::vector<int> idsOf(const Model& model, const char* text)
{
    Result<TokenizedText> t = model.tokenizer->encode(text);
    if (!t) qFatal("%s", t.error().c_str());
    return t->ids;
}

inline AttentionSettings maskSettings(const QString& mask)
{
    AttentionSettings s;
    Result<MaskSetting> m = parseMaskSetting(mask.toStdString());
    if (!m) qFatal("%s", m.error().c_str());
    applyMask(s, *m);
    return s;
}

} // namespace attnscope::testing
