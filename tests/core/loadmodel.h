#pragma once
// What the research tests share: a model from a spec and a sentence's ids, or a fatal test error.
#include <QtGlobal>

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

} // namespace attnscope::testing
