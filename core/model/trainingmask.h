#pragma once
// What mask a model was trained with, and whether a view under other settings is a counterfactual. GPT-2
// was trained causally (each token sees itself and the past); BERT-family encoders bidirectionally (every
// token sees every other). Showing either under the other's mask is allowed and instructive, and labelled.
#include <string>

#include "core/model/attentionsettings.h"
#include "core/model/modelconfig.h"

namespace attnscope {

// Causal for decoders, none for encoders: the default mask when a model is opened.
MaskKind trainingMask(const ModelConfig& config);

// A sparse pattern runs inside the mask the model was trained with (a decoder never sees a later key under
// one, an encoder's pattern is two-sided): with a pattern on, the mask becomes the model's own.
void patternsFollowTraining(AttentionSettings& settings, const ModelConfig& config);

// One short sentence when `mask` is not the mask the model was trained with; empty when it is.
std::string counterfactualNote(const ModelConfig& config, MaskKind mask);
// The same for the whole setting: a sliding window (with or without sinks) is a counterfactual for every
// model AttnScope loads, since each was trained seeing its whole context; so is a sparse pattern.
std::string counterfactualNote(const ModelConfig& config, const AttentionSettings& settings);

// "encoder, trained bidirectional (no mask)" or "decoder, trained with the causal mask".
std::string trainingDescription(const ModelConfig& config);

// The model named for people, as the status bar shows it: what it is and how it came to be.
//   "AttnScope's built-in model (trained by AttnScope; decoder, causal mask; 3 layers × 4 heads)"
//   "random:layers=2,... (random weights, untrained; gpt2 layout; 2 layers × 4 heads)"
//   "gpt2 (gpt2, decoder, trained with the causal mask; 12 layers × 12 heads)"
std::string modelDescription(const ModelConfig& config);

// The model as a person knows it, in a few words: "AttnScope's built-in model", "AttnScope's built-in
// translator", "a random, untrained model", else the name it was opened by ("gpt2", "SmolLM2-135M").
std::string modelShortName(const ModelConfig& config);

} // namespace attnscope
