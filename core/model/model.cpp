#include "core/model/model.h"

#include <algorithm>
#include <new>

#include "core/compute/hugepages.h"
#include "core/compute/threadpool.h"
#include "core/model/forward.h"
#include "core/model/rope.h"
#include "core/model/storedweights.h"

namespace attnscope {

namespace {

Status checkMatrix(const Matrix& m, Eigen::Index rows, Eigen::Index cols, const std::string& name)
{
    if (m.rows() == rows && m.cols() == cols) return {};
    return Status::failure(name + " has shape [" + std::to_string(m.rows()) + ", " + std::to_string(m.cols()) + "] but the config implies [" +
                           std::to_string(rows) + ", " + std::to_string(cols) + "].");
}

Status checkVector(const RowVector& v, Eigen::Index n, const std::string& name)
{
    if (v.size() == n) return {};
    return Status::failure(name + " has " + std::to_string(v.size()) + " entries but the config implies " + std::to_string(n) + ".");
}

} // namespace

Status Model::checkShapes() const
{
    const ModelConfig& c = config;
    const ModelWeights& w = weights;
    Status p;
    auto first = [&p](Status problem) {
        if (p.ok()) p = std::move(problem);
    };
    if (w.stored) {
        // The loader checked every stored tensor's shape against the config as it mapped it.
        if (w.stored->layers.size() != static_cast<std::size_t>(c.layers)) first(Status::failure("the model has the wrong number of layers."));
        first(checkVector(w.lnfGain, c.dModel, "the final norm gain"));
        return p;
    }
    first(checkMatrix(w.tokenEmbedding, c.vocabSize, c.dModel, "the token embedding"));
    if (c.positional == PositionalKind::Learned)
        first(checkMatrix(w.positionEmbedding, c.contextLength, c.dModel, "the position embedding"));
    if (c.positional == PositionalKind::RelativeBuckets)
        first(checkMatrix(w.relativeBias, c.relativeBuckets, c.heads, "the relative position bias"));
    if (w.layers.size() != static_cast<std::size_t>(c.layers)) first(Status::failure("the model has the wrong number of layers."));
    for (std::size_t i = 0; i < w.layers.size() && p.ok(); ++i) {
        const LayerWeights& l = w.layers[i];
        const std::string at = "layer " + std::to_string(i) + " ";
        const int D = c.dModel, F = c.dFF, inner = c.innerWidth(), kv = c.keyValueHeads() * c.dHead;
        first(checkVector(l.ln1Gain, D, at + "ln_1 gain"));
        first(checkVector(l.ln1Bias, D, at + "ln_1 bias"));
        first(checkMatrix(l.wq, D, inner, at + "W_Q"));
        first(checkMatrix(l.wk, D, kv, at + "W_K"));
        first(checkMatrix(l.wv, D, kv, at + "W_V"));
        first(checkVector(l.bq, inner, at + "b_Q"));
        first(checkVector(l.bk, kv, at + "b_K"));
        first(checkVector(l.bv, kv, at + "b_V"));
        first(checkMatrix(l.wo, inner, D, at + "W_O"));
        first(checkVector(l.bo, D, at + "b_O"));
        first(checkVector(l.ln2Gain, D, at + "ln_2 gain"));
        first(checkVector(l.ln2Bias, D, at + "ln_2 bias"));
        first(checkMatrix(l.w1, D, F, at + "W_1"));
        first(checkVector(l.b1, F, at + "b_1"));
        first(checkMatrix(l.w2, F, D, at + "W_2"));
        first(checkVector(l.b2, D, at + "b_2"));
    }
    if (c.norm == NormPlacement::PreLN) {
        first(checkVector(w.lnfGain, c.dModel, "the final layer-norm gain"));
        first(checkVector(w.lnfBias, c.dModel, "the final layer-norm bias"));
    }
    if (w.tokenTypeEmbedding.size() > 0 && w.tokenTypeEmbedding.cols() != c.dModel)
        first(checkMatrix(w.tokenTypeEmbedding, w.tokenTypeEmbedding.rows(), c.dModel, "the token-type embedding"));
    if (w.embLnGain.size() > 0 || w.embLnBias.size() > 0) {
        first(checkVector(w.embLnGain, c.dModel, "the embedding layer-norm gain"));
        first(checkVector(w.embLnBias, c.dModel, "the embedding layer-norm bias"));
    }
    if (w.mlm) {
        first(checkMatrix(w.mlm->transform, c.dModel, c.dModel, "the masked-LM transform"));
        first(checkVector(w.mlm->transformBias, c.dModel, "the masked-LM transform bias"));
        first(checkVector(w.mlm->lnGain, c.dModel, "the masked-LM layer-norm gain"));
        first(checkVector(w.mlm->lnBias, c.dModel, "the masked-LM layer-norm bias"));
        if (w.mlm->decoder.size() > 0) first(checkMatrix(w.mlm->decoder, c.vocabSize, c.dModel, "the masked-LM decoder"));
        first(checkVector(w.mlm->decoderBias, c.vocabSize, "the masked-LM decoder bias"));
    }
    return p;
}

Matrix Model::outputProjection(int layer) const
{
    if (weights.stored) return weights.stored->outputProjection(layer);
    return weights.layers[static_cast<std::size_t>(layer)].wo;
}

void Model::finalize()
{
    // A rotary model's context may run to 128k positions, whose full table would take gigabytes; the
    // sinusoidal override is a comparison, so it covers the first few thousand.
    const bool rotary = config.positional == PositionalKind::Rotary;
    sinusoidal = sinusoidalTable(rotary ? std::min(config.contextLength, kMaxRotarySinusoidal) : config.contextLength, config.dModel);
    if (rotary) ropeFrequencies = ropeInverseFrequencies(config.rope, config.rotaryWidth());
    packLayers();
    // The tied unembedding is read whole for every pass's next-token logits (154 MB in GPT-2 small), and a
    // stream that long reads faster on 2 MB pages than on 4 KB ones. The model itself keeps it alive while
    // it is collapsed.
    if (weights.tokenEmbedding.size() > 0)
        collapseToHugePagesLater(weak_from_this(), weights.tokenEmbedding.data(), std::size_t(weights.tokenEmbedding.size()) * sizeof(float));
}

void Model::packLayers()
{
    // Packing keeps a second copy of every projection, so only models whose float32 layers fit the budget
    // are packed; larger ones (and models converting stored weights a layer at a time) use Eigen's product.
    std::vector<LayerWeights>& layers = weights.layers;
    double bytes = 0.0;
    for (const LayerWeights& l : layers)
        for (const Matrix* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w1, &l.w2, &l.w3}) bytes += double(m->size()) * sizeof(float);
    const bool pack = bytes <= kMaxPackedBytes;
    // Layers pack side by side on the pool; each task writes only its own layer.
    ThreadPool::shared().run(static_cast<int>(layers.size()), [&](int i, int) {
        LayerWeights& l = layers[static_cast<std::size_t>(i)];
        if (!pack) {
            l.packed.reset();
            return;
        }
        // One block of storage for the layer's projections, so rounding up to whole 2 MB pages is paid once.
        const std::pair<const Matrix*, PackedWeights PackedLayer::*> parts[] = {
            {&l.wq, &PackedLayer::wq}, {&l.wk, &PackedLayer::wk}, {&l.wv, &PackedLayer::wv}, {&l.wo, &PackedLayer::wo},
            {&l.w1, &PackedLayer::w1}, {&l.w2, &PackedLayer::w2}, {&l.w3, &PackedLayer::w3}};
        Eigen::Index floats = 0;
        for (const auto& [m, member] : parts) floats += PackedWeights::storageFloats(*m);
        std::shared_ptr<float> storage;
        try {
            storage = allocatePackedStorage(floats);
        } catch (const std::bad_alloc&) {
            l.packed.reset();  // no room for the copy: this layer keeps Eigen's product, nothing else changes
            return;
        }
        auto p = std::make_shared<PackedLayer>();
        float* at = storage.get();
        for (const auto& [m, member] : parts) {
            if (m->size() == 0) continue;  // w3 outside SwiGLU
            (*p).*member = PackedWeights(*m, storage, at);
            at += PackedWeights::storageFloats(*m);
        }
        adviseHugePages(storage, floats);
        l.packed = std::move(p);
    }, bytes >= 1e6);
}

} // namespace attnscope
