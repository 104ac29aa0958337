#pragma once
// A model a person can run: its description, its weights and its tokenizer, immutable once loaded and
// shared between the document, the worker thread and the CLI.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/modelconfig.h"
#include "core/result.h"
#include "core/text/tokenizer.h"
#include "core/model/weights.h"

namespace attnscope {

struct DecoderStack;  // model/encoderdecoder.h

struct Model : std::enable_shared_from_this<Model> {
    ModelConfig config;
    ModelWeights weights;
    std::shared_ptr<const Tokenizer> tokenizer;
    std::vector<std::string> warnings;  // e.g. non-finite weights found on load, with where
    Matrix sinusoidal;                  // (C, D) derived table for the "sinusoidal" positional override
                                        //        (rotary models: the first kMaxRotarySinusoidal rows)
    Eigen::VectorXd ropeFrequencies;    // (R/2) rotary inverse frequencies; empty unless positions are rotary
    static constexpr int kMaxRotarySinusoidal = 4096;
    // Encoder–decoder models (model/encoderdecoder.h): everything above is the encoder, this the decoder.
    std::shared_ptr<const DecoderStack> decoder;
    bool isEncoderDecoder() const { return decoder != nullptr; }

    // Computes the derived tables and packs the layers' projections for the product kernel; loaders call it
    // once the weights are in place, and the weights must not change after it. The packed weights and the
    // token embedding then move onto 2 MB pages in the background (compute/hugepages.h).
    void finalize();
    // Float32 layers up to this size are packed (a second copy: GPT-2 small's 340 MB is packed, GPT-2
    // medium's 1.2 GB is not).
    static constexpr double kMaxPackedBytes = 1024.0 * 1024.0 * 1024.0;

    // Fails with a sentence naming the tensor when a weight has not the shape the config implies.
    Status checkShapes() const;

    // Layer `layer`'s W_O in float32, (D, D): a stored model's is converted on the spot.
    Matrix outputProjection(int layer) const;

private:
    void packLayers();
};

using ModelPtr = std::shared_ptr<const Model>;

} // namespace attnscope
