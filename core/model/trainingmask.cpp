#include "model/trainingmask.h"

namespace attnscope {

MaskKind trainingMask(const ModelConfig& config)
{
    return config.causal ? MaskKind::Causal : MaskKind::None;
}

std::string counterfactualNote(const ModelConfig& config, MaskKind mask)
{
    if (mask == trainingMask(config)) return {};
    return config.causal ? "counterfactual: the model was trained with the causal mask"
                         : "counterfactual: the model was trained without a mask";
}

std::string trainingDescription(const ModelConfig& config)
{
    return config.causal ? "decoder, trained with the causal mask" : "encoder, trained bidirectional (no mask)";
}

} // namespace attnscope
