// The bodies of tracecompare.h's functions, compiled once into the tests' fixture library.
#include "tracecompare.h"

#include <cmath>
#include <filesystem>

#include "core/model/encoderdecoder.h"
#include "core/open/openmodel.h"
#include "fixturefiles.h"

namespace tracecompare {

numericcheck::Worst worstDifference(const attnscope::ForwardTrace& trace, const std::vector<std::vector<Rows>>& ref)
{
    numericcheck::Worst worst;
    for (int l = 0; l < trace.layers; ++l)
        for (int h = 0; h < trace.heads; ++h) {
            worst.label("layer %d head %d", l, h);
            worst.add(trace.weights(l, h), ref[std::size_t(l)][std::size_t(h)]);
        }
    return worst;
}

numericcheck::Worst modelsDiffer(const attnscope::Model& a, const attnscope::Model& b, const std::vector<int>& ids)
{
    using namespace attnscope;
    numericcheck::Worst worst;
    const AttentionSettings settings;
    if (a.isEncoderDecoder() != b.isEncoderDecoder()) {
        worst.addDeviation(INFINITY);
        return worst;
    }
    if (a.isEncoderDecoder()) {
        EncoderDecoderTrace x, y;
        const AttentionSettings decoder = decoderSettings(settings);
        if (!forwardEncoderDecoder(a, ids, ids, decoder, true, x).ok() || !forwardEncoderDecoder(b, ids, ids, decoder, true, y).ok()) {
            worst.addDeviation(INFINITY);
            return worst;
        }
        for (std::size_t i = 0; i < x.encoder.attention.size(); ++i) worst.add(x.encoder.attention[i], y.encoder.attention[i]);
        for (std::size_t i = 0; i < x.selfAttention.size(); ++i) worst.add(x.selfAttention[i], y.selfAttention[i]);
        for (std::size_t i = 0; i < x.crossAttention.size(); ++i) worst.add(x.crossAttention[i], y.crossAttention[i]);
        worst.add(x.nextLogits, y.nextLogits);
        return worst;
    }
    CaptureRequest capture;
    capture.nextTokenLogits = true;
    Result<ForwardTrace> x = forward(a, ids, settings, capture), y = forward(b, ids, settings, capture);
    if (!x || !y) {
        worst.addDeviation(INFINITY);
        return worst;
    }
    for (std::size_t i = 0; i < x->attention.size(); ++i) worst.add(x->attention[i], y->attention[i]);
    worst.add(x->nextLogits, y->nextLogits);
    return worst;
}

std::string shardsAgainstOneFile(const std::string& folder, const std::vector<attnscope::NamedTensor>& tensors)
{
    using namespace attnscope;
    namespace fs = std::filesystem;
    const std::string sharded = fixture::shardedCopy(folder, tensors, 3);
    if (fs::exists(fs::path(sharded) / "model.safetensors") || !fs::exists(fs::path(sharded) / "model.safetensors.index.json"))
        return "the sharded copy is not sharded";
    Result<ModelPtr> one = loadModel(folder), three = loadModel(sharded);
    if (!one) return "one file: " + one.error();
    if (!three) return "three shards: " + three.error();
    Result<TokenizedText> ids = (*one)->tokenizer->encode("the cat sat on the mat");
    if (!ids || ids->ids.size() < 3) return "the text did not tokenize";
    const numericcheck::Worst worst = modelsDiffer(**one, **three, ids->ids);
    if (!worst.within(1e-30)) return worst.message("one file against three shards");
    fs::remove(fs::path(sharded) / "model-00002-of-00003.safetensors");
    Result<ModelPtr> broken = loadModel(sharded);
    if (broken) return "a folder missing a shard loaded";
    if (broken.error().find("model-00002-of-00003.safetensors") == std::string::npos) return "a missing shard is not named: " + broken.error();
    return {};
}

} // namespace tracecompare
