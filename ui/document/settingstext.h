#pragma once
// The attention settings in a few words, as titles, captions and the presenter strip show them:
// "causal mask · ÷√dₖ · T = 1.00", with blocked keys, a positional override and ablated heads when set.
#include <QString>

#include "core/model/attentionsettings.h"

namespace attnscope {

// `scaleFolded`: the model was trained without the division (T5), so the scaling reads "√dₖ as trained" or
// "×√dₖ" (ModelConfig::scaleFolded).
QString settingsSummary(const AttentionSettings& settings, bool scaleFolded = false);
// The mask alone: "causal mask", "no mask", "window of 64", "window of 64 + 4 sinks", "causal, blocks of 8".
QString maskSummary(const AttentionSettings& settings);

} // namespace attnscope
