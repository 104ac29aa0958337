#include "core/dataexport/jsonexport.h"

#include <cmath>

#include "core/analysis/stats.h"
#include "core/model/encoderdecoder.h"

namespace attnscope::json {

nlohmann::ordered_json modelSummary(const ModelConfig& c)
{
    return {{"name", c.name}, {"architecture", c.architecture}, {"layers", c.layers},
            {"heads", c.heads}, {"d_model", c.dModel}, {"d_head", c.dHead}};
}

nlohmann::ordered_json keyValueHeads(const ModelConfig& config, int heads)
{
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (int h = 0; h < heads; ++h) out.push_back(heads == config.heads ? config.kvHeadOf(h) : h);
    return out;
}

nlohmann::ordered_json modelInfo(const Model& model)
{
    const ModelConfig& c = model.config;
    nlohmann::ordered_json j = modelSummary(c);
    j["kv_heads"] = c.keyValueHeads();
    j["d_ff"] = c.dFF;
    j["vocab_size"] = c.vocabSize;
    j["context_length"] = c.contextLength;
    j["positional"] = c.fixedPositions ? std::string("sinusoidal") : std::string(toString(c.positional));
    j["norm"] = std::string(toString(c.norm));
    j["normalization"] = std::string(toString(c.normKind));
    j["activation"] = std::string(toString(c.activation));
    j["layer_norm_epsilon"] = c.layerNormEps;
    j["trained_causal"] = c.causal;
    if (c.positional == PositionalKind::Rotary) {
        j["rope_theta"] = c.rope.theta;
        j["rope_scaling"] = c.rope.scaling == RopeConfig::Scaling::Llama3 ? "llama3"
                            : c.rope.scaling == RopeConfig::Scaling::Linear ? "linear" : "none";
        j["rotary_dims"] = c.rotaryWidth();  // of each head's d_head; fewer under GPT-NeoX's rotary_pct
    }
    if (c.parallelResidual) j["parallel_residual"] = true;
    if (c.positional == PositionalKind::RelativeBuckets) {
        j["relative_buckets"] = c.relativeBuckets;
        j["relative_max_distance"] = c.relativeMaxDistance;
    }
    if (c.scaleFolded) j["sqrt_dk_folded_into_weights"] = true;
    j["tied_embeddings"] = c.tiedEmbeddings;
    j["encoder_decoder"] = model.isEncoderDecoder();
    if (model.isEncoderDecoder()) {
        j["encoder_layers"] = c.layers;
        j["decoder_layers"] = model.decoder->layers;
    }
    if (!c.causal) j["masked_lm_head"] = model.weights.mlm.has_value();  // whether --top-k can fill [MASK]s
    j["tokenizer"] = model.tokenizer ? model.tokenizer->kind() : std::string();
    j["warnings"] = model.warnings;
    return j;
}

nlohmann::ordered_json tokens(const TokenizedText& text)
{
    return {{"tokens", text.tokens}, {"token_ids", text.ids}};
}

nlohmann::ordered_json settings(const AttentionSettings& s)
{
    nlohmann::ordered_json j = {{"mask", formatMask(maskSetting(s))}, {"scaling", std::string(toString(s.scaling))},
                        {"temperature", s.temperature}, {"positional", std::string(toString(s.positional))}};
    if (!s.blockedKeys.empty()) j["blocked_keys"] = s.blockedKeys;
    if (!s.ablated.empty()) {
        j["ablate"] = formatAblatedHeads(s.ablated);
        j["ablate_mode"] = std::string(toString(s.ablationMode));
    }
    return j;
}

nlohmann::ordered_json matrix(const Matrix& m)
{
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
        nlohmann::ordered_json row = nlohmann::ordered_json::array();
        for (Eigen::Index j = 0; j < m.cols(); ++j) {
            const float v = m(i, j);
            if (std::isfinite(v)) row.push_back(v);
            else row.push_back(nullptr);
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

nlohmann::ordered_json attention(const ForwardTrace& t) { return attention(t.attention, t.layers, t.heads); }

nlohmann::ordered_json attention(const std::vector<Matrix>& weights, int layerCount, int headCount)
{
    nlohmann::ordered_json layers = nlohmann::ordered_json::array();
    for (int l = 0; l < layerCount; ++l) {
        nlohmann::ordered_json heads = nlohmann::ordered_json::array();
        for (int h = 0; h < headCount; ++h) heads.push_back(matrix(weights[std::size_t(l * headCount + h)]));
        layers.push_back(std::move(heads));
    }
    return layers;
}

nlohmann::ordered_json valueWeighted(const ForwardTrace& t)
{
    nlohmann::ordered_json layers = nlohmann::ordered_json::array();
    for (int l = 0; l < t.layers; ++l) {
        nlohmann::ordered_json heads = nlohmann::ordered_json::array();
        for (int h = 0; h < t.heads; ++h) heads.push_back(matrix(valueWeightedAttention(t, l, h)));
        layers.push_back(std::move(heads));
    }
    return layers;
}

nlohmann::ordered_json stats(const ForwardTrace& t) { return stats(t.attention, t.layers, t.heads); }

nlohmann::ordered_json stats(const std::vector<Matrix>& weights, int layerCount, int headCount)
{
    nlohmann::ordered_json entropy = nlohmann::ordered_json::array(), maxWeight = nlohmann::ordered_json::array(),
                           firstToken = nlohmann::ordered_json::array();
    for (int l = 0; l < layerCount; ++l) {
        nlohmann::ordered_json eh = nlohmann::ordered_json::array(), mh = nlohmann::ordered_json::array(),
                               fh = nlohmann::ordered_json::array();
        for (int h = 0; h < headCount; ++h) {
            const Matrix& w = weights[std::size_t(l * headCount + h)];
            RowStats s = rowStats(w);
            eh.push_back(s.entropy);
            mh.push_back(s.maxWeight);
            fh.push_back(firstTokenShare(w));
        }
        entropy.push_back(std::move(eh));
        maxWeight.push_back(std::move(mh));
        firstToken.push_back(std::move(fh));
    }
    return {{"entropy", entropy}, {"max_weight", maxWeight}, {"first_token_weight", firstToken}};
}

} // namespace attnscope::json
