#include "core/model/maskedlm.h"

namespace attnscope {

Status canPredictMasked(const Model& model)
{
    if (model.config.causal)
        return Status::failure("this model predicts the next token; masked-token prediction belongs to encoders such as BERT.");
    if (!model.weights.mlm)
        return Status::failure("this checkpoint has no masked-language-model head (cls.predictions.* or vocab_transform/vocab_projector), "
                               "so it cannot fill [MASK] tokens.");
    if (!model.tokenizer || model.tokenizer->maskTokenId() < 0)
        return Status::failure("the vocabulary has no [MASK] token.");
    return {};
}

std::vector<int> maskPositions(const Model& model, const std::vector<int>& ids)
{
    std::vector<int> positions;
    const int mask = model.tokenizer ? model.tokenizer->maskTokenId() : -1;
    if (mask < 0) return positions;
    for (std::size_t i = 0; i < ids.size(); ++i)
        if (ids[i] == mask) positions.push_back(static_cast<int>(i));
    return positions;
}

Eigen::RowVectorXf maskedLogits(const Model& model, const Eigen::Ref<const Eigen::RowVectorXf>& hidden)
{
    assert(model.weights.mlm);
    const MlmHeadWeights& head = *model.weights.mlm;
    // 1. Transform: dense, activation, layer norm, as the head was trained (not the encoder's last layer norm).
    Matrix x = hidden * head.transform;  // (1, D)
    x.row(0) += head.transformBias;
    activate(model.config.activation, x);
    Matrix normed(1, x.cols());  // (1, D)
    layerNorm(x, head.lnGain, head.lnBias, model.config.layerNormEps, normed);
    // 2. Decode onto the vocabulary: the tied token embedding (V, D) unless the file holds its own decoder.
    const Matrix& decoder = head.decoder.size() > 0 ? head.decoder : model.weights.tokenEmbedding;
    Eigen::RowVectorXf logits = normed.row(0) * decoder.transpose();  // (V)
    logits += head.decoderBias;
    return logits;
}

std::vector<MaskedPrediction> predictMasked(const Model& model, const ForwardTrace& trace, const std::vector<int>& ids, int k)
{
    std::vector<MaskedPrediction> out;
    if (!canPredictMasked(model).ok() || !trace.hasFinalHidden || k <= 0) return out;
    for (int position : maskPositions(model, ids)) {
        if (position >= trace.finalHidden.rows()) break;
        const Eigen::RowVectorXf logits = maskedLogits(model, trace.finalHidden.row(position));
        out.push_back({position, topKOfLogits(logits, *model.tokenizer, k)});
    }
    return out;
}

} // namespace attnscope
