// The bodies of loadmodel.h's functions, compiled once into the tests' fixture library.
#include "loadmodel.h"
#include "core/open/openmodel.h"

namespace attnscope::testing {

ModelPtr load(const char* spec)
{
    Result<ModelPtr> m = loadModel(spec);
    if (!m) qFatal("%s", m.error().c_str());
    return *m;
}

std::vector<int> idsOf(const Model& model, const char* text)
{
    Result<TokenizedText> t = model.tokenizer->encode(text);
    if (!t) qFatal("%s", t.error().c_str());
    return t->ids;
}

AttentionSettings maskSettings(const QString& mask)
{
    AttentionSettings s;
    Result<MaskSetting> m = parseMaskSetting(mask.toStdString());
    if (!m) qFatal("%s", m.error().c_str());
    applyMask(s, *m);
    return s;
}

} // namespace attnscope::testing
