#include "core/model/trainingmask.h"

namespace attnscope {

MaskKind trainingMask(const ModelConfig& config)
{
    return config.causal ? MaskKind::Causal : MaskKind::None;
}

void patternsFollowTraining(AttentionSettings& settings, const ModelConfig& config)
{
    if (settings.sparse.active()) settings.mask = trainingMask(config);
}

std::string counterfactualNote(const ModelConfig& config, MaskKind mask)
{
    if (mask == trainingMask(config)) return {};
    return config.causal ? "counterfactual: the model was trained with the causal mask"
                         : "counterfactual: the model was trained without a mask";
}

std::string counterfactualNote(const ModelConfig& config, const AttentionSettings& settings)
{
    if (settings.sparse.active())
        return "counterfactual: a sparse pattern (" + describePattern(settings.sparse) + "), but the model was trained seeing its whole context";
    if (!settings.hasWindow()) return counterfactualNote(config, settings.mask);
    const std::string window = "a window of " + std::to_string(settings.window) +
                               (settings.sinks > 0 ? " keys and " + std::to_string(settings.sinks) + (settings.sinks == 1 ? " sink" : " sinks")
                                                   : std::string(" keys"));
    return "counterfactual: " + window + ", but the model was trained seeing its whole context";
}

std::string trainingDescription(const ModelConfig& config)
{
    return config.causal ? "decoder, trained with the causal mask" : "encoder, trained bidirectional (no mask)";
}

std::string modelShortName(const ModelConfig& config)
{
    if (config.name == "builtin") return "AttnScope's built-in model";
    if (config.name == "builtin-translator") return "AttnScope's built-in translator";
    if (config.name.starts_with("random")) return "a random, untrained model";
    return config.name;
}

std::string modelDescription(const ModelConfig& config)
{
    const std::string shape = std::to_string(config.layers) + (config.layers == 1 ? " layer × " : " layers × ") +
                              std::to_string(config.heads) + (config.heads == 1 ? " head" : " heads");
    const std::string mask = config.causal ? "causal mask" : "no mask";
    // loadBuiltinModel names its model "builtin"; the random model's name is its spec.
    if (config.name == "builtin")
        return "AttnScope's built-in model (trained by AttnScope; " + std::string(config.causal ? "decoder, " : "encoder, ") + mask +
               "; " + shape + ")";
    if (config.name.starts_with("random"))
        return config.name + " (random weights, untrained; " + config.architecture + " layout; " + shape + ")";
    return config.name + " (" + config.architecture + ", " + trainingDescription(config) + "; " + shape + ")";
}

} // namespace attnscope
