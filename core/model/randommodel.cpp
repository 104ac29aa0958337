#include "core/model/randommodel.h"

#include <charconv>
#include <cmath>

#include "core/compute/memoryfit.h"
#include "core/model/memoryneed.h"
#include "core/text/wordtokenizer.h"

namespace attnscope {

std::uint64_t SeededRandom::nextU64()
{
    std::uint64_t z = (m_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double SeededRandom::uniform()
{
    // 53 random bits, shifted off zero so log() below is finite.
    return (static_cast<double>(nextU64() >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

double SeededRandom::normal()
{
    if (m_hasSpare) {
        m_hasSpare = false;
        return m_spare;
    }
    const double r = std::sqrt(-2.0 * std::log(uniform()));
    const double theta = 6.283185307179586 * uniform();
    m_spare = r * std::sin(theta);
    m_hasSpare = true;
    return r * std::cos(theta);
}

Result<RandomModelSpec> parseRandomSpec(std::string_view spec)
{
    RandomModelSpec out;
    if (spec == "random") return Result<RandomModelSpec>::ok(out);
    if (!spec.starts_with("random:"))
        return Result<RandomModelSpec>::fail("a random model spec starts with 'random:'.");
    std::string_view rest = spec.substr(7);
    while (!rest.empty()) {
        const std::size_t comma = rest.find(',');
        const std::string_view item = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
        const std::size_t eq = item.find('=');
        if (eq == std::string_view::npos)
            // Built by appending: GCC 12's -Wrestrict misreads "literal" + std::string&& (GCC bug 105329).
            return Result<RandomModelSpec>::fail(std::string("'").append(item).append("' in the model spec is not key=value."));
        const std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
        std::uint64_t number = 0;
        const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
        if (value.empty() || ec != std::errc() || ptr != value.data() + value.size())
            return Result<RandomModelSpec>::fail("the value of '" + std::string(key) + "' in the model spec is not a whole number.");
        const bool small = number <= 1'000'000;
        if (key == "seed") out.seed = number;
        else if (!small) return Result<RandomModelSpec>::fail(std::string("'").append(key).append("' in the model spec is too large."));
        else if (key == "layers") out.layers = static_cast<int>(number);
        else if (key == "heads") out.heads = static_cast<int>(number);
        else if (key == "d_model") out.dModel = static_cast<int>(number);
        else if (key == "d_ff") out.dFF = static_cast<int>(number);
        else if (key == "vocab") out.vocab = static_cast<int>(number);
        else if (key == "context") out.context = static_cast<int>(number);
        else
            return Result<RandomModelSpec>::fail("unknown key '" + std::string(key) +
                                                 "' in the model spec (known: layers, heads, d_model, d_ff, vocab, context, seed).");
    }
    return Result<RandomModelSpec>::ok(out);
}

std::string toSpecString(const RandomModelSpec& s)
{
    std::string out = "random:layers=" + std::to_string(s.layers) + ",heads=" + std::to_string(s.heads) +
                      ",d_model=" + std::to_string(s.dModel);
    if (s.dFF != 0 && s.dFF != 4 * s.dModel) out += ",d_ff=" + std::to_string(s.dFF);
    if (s.vocab != 8192) out += ",vocab=" + std::to_string(s.vocab);
    if (s.context != 2048) out += ",context=" + std::to_string(s.context);
    return out + ",seed=" + std::to_string(s.seed);
}

namespace {

void fill(Matrix& m, Eigen::Index rows, Eigen::Index cols, double stddev, SeededRandom& rng)
{
    m.resize(rows, cols);
    for (Eigen::Index j = 0; j < cols; ++j)
        for (Eigen::Index i = 0; i < rows; ++i) m(i, j) = static_cast<float>(stddev * rng.normal());
}

} // namespace

Result<ModelPtr> makeRandomModel(const RandomModelSpec& s)
{
    auto model = std::make_shared<Model>();
    ModelConfig& c = model->config;
    c.name = toSpecString(s);
    c.architecture = "gpt2";
    c.layers = s.layers;
    c.heads = s.heads;
    c.dModel = s.dModel;
    c.dHead = s.heads > 0 ? s.dModel / s.heads : 0;
    c.dFF = s.dFF != 0 ? s.dFF : 4 * s.dModel;
    c.vocabSize = s.vocab;
    c.contextLength = s.context;
    c.positional = PositionalKind::Sinusoidal;
    c.norm = NormPlacement::PreLN;
    c.activation = Activation::GeluTanh;
    if (Status problem = c.validateSplitHeads(); !problem.ok()) return Result<ModelPtr>::fail("random model: " + problem.error());
    // Keep a random model's weights under 2 GB of floats: sizes are user input.
    const double floats = double(c.vocabSize) * c.dModel + double(c.contextLength) * c.dModel +
                          double(c.layers) * (4.0 * c.dModel * c.dModel + 2.0 * c.dModel * c.dFF);
    if (floats > 5e8) return Result<ModelPtr>::fail("random model: those sizes need more than 2 GB of weights.");
    if (Status fits = checkMemoryFits(memoryNeed(c, float32WeightBytes(c)), "a random model of these sizes"); !fits.ok())
        return Result<ModelPtr>::fail(fits.error());

    SeededRandom rng(s.seed);
    const int D = c.dModel, F = c.dFF;
    ModelWeights& w = model->weights;
    // Unit-variance embeddings; a learned table too, so the "learned" override has something to show.
    fill(w.tokenEmbedding, c.vocabSize, D, 1.0, rng);
    fill(w.positionEmbedding, c.contextLength, D, 0.5, rng);
    // After layer norm each component of x has variance about 1, so a column of W_Q with variance g/D gives
    // q components of variance g. The scaled score q.k/sqrt(Dh) then has standard deviation about g: with
    // g = 2.5 the softmax is clearly peaked without being one-hot, which is what the views should show.
    const double qk = std::sqrt(2.5 / D);
    w.layers.resize(static_cast<std::size_t>(c.layers));
    for (LayerWeights& lw : w.layers) {
        lw.ln1Gain = RowVector::Ones(D);
        lw.ln1Bias = RowVector::Zero(D);
        fill(lw.wq, D, D, qk, rng);
        fill(lw.wk, D, D, qk, rng);
        fill(lw.wv, D, D, 1.0 / std::sqrt(D), rng);
        lw.bq = RowVector::Zero(D);
        lw.bk = RowVector::Zero(D);
        lw.bv = RowVector::Zero(D);
        fill(lw.wo, D, D, 1.0 / std::sqrt(D), rng);
        lw.bo = RowVector::Zero(D);
        lw.ln2Gain = RowVector::Ones(D);
        lw.ln2Bias = RowVector::Zero(D);
        fill(lw.w1, D, F, 1.0 / std::sqrt(D), rng);
        lw.b1 = RowVector::Zero(F);
        fill(lw.w2, F, D, 0.5 / std::sqrt(F), rng);
        lw.b2 = RowVector::Zero(D);
    }
    w.lnfGain = RowVector::Ones(D);
    w.lnfBias = RowVector::Zero(D);
    model->tokenizer = std::make_shared<WordTokenizer>(c.vocabSize);
    model->finalize();
    return Result<ModelPtr>::ok(std::move(model));
}

} // namespace attnscope
