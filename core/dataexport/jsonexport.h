#pragma once
// The JSON the CLI prints, built from core values so scripts and tests see exactly what the views show.
#include <nlohmann/json.hpp>

#include "core/model/attentionsettings.h"
#include "core/model/forward.h"
#include "core/model/model.h"
#include "core/text/tokenizer.h"

namespace attnscope::json {

nlohmann::ordered_json modelSummary(const ModelConfig& config);  // {"name","architecture","layers","heads","d_model","d_head"}
nlohmann::ordered_json modelInfo(const Model& model);             // the summary plus every other field of the config
nlohmann::ordered_json tokens(const TokenizedText& text);         // {"tokens":[..],"token_ids":[..]}
nlohmann::ordered_json settings(const AttentionSettings& s);
nlohmann::ordered_json matrix(const Matrix& m);                   // list of rows; -inf and NaN as null
nlohmann::ordered_json attention(const ForwardTrace& trace);      // [layer][head][query][key]
// The same from a list of layers*heads matrices, index layer*heads + head (an encoder–decoder's decoder).
nlohmann::ordered_json attention(const std::vector<Matrix>& weights, int layers, int heads);
// [H]: the key/value head each query head of a stack of `heads` reads; a stack that shares none (one whose
// head count is not the config's, such as a decoder's) reads its own.
nlohmann::ordered_json keyValueHeads(const ModelConfig& config, int heads);
// α_ij · ‖v_j W_O^h‖, [layer][head][query][key]; the trace must hold value norms.
nlohmann::ordered_json valueWeighted(const ForwardTrace& trace);
// {"entropy":[l][h][q],"max_weight":[l][h][q],"first_token_weight":[l][h]}
nlohmann::ordered_json stats(const ForwardTrace& trace);
nlohmann::ordered_json stats(const std::vector<Matrix>& weights, int layers, int heads);

} // namespace attnscope::json
