#pragma once
// The UI tests below were written against the seeded random model (two layers, four heads, hashing word
// tokenizer, no <bos>), which was the default before the built-in trained model. They pin it, so their
// hand-worked expectations keep holding; tst_mainwindow and tst_trainview check the built-in default itself.
#include "ui/document/document.h"
#include "core/model/model.h"
#include "core/open/openmodel.h"

namespace attnscope::testing {

inline void useRandomModel(Document& document)
{
    static const ModelPtr random = *loadModel("random:layers=2,heads=4,d_model=64,seed=1");
    document.setModel(random);
}

} // namespace attnscope::testing
