// Circuits read from the weights (core/research/circuits.h) against a computation of the tests' own
// (circuitsreference.h): each head sliced by plain loops from the checkpoint's tensors as written, the d × d
// circuits formed explicitly, singular values from a Jacobi eigenvalue routine on the symmetric WᵀW,
// eigenvalues of the full OV circuit's core from a complex QR iteration, and composition from explicit
// products and Frobenius norms. GPT-2 (pre-norm, tied), a grouped-query Llama (pre-norm RMSNorm, untied
// lm_head, stored weights), BERT (post-norm, no copying score) and BART (three stacks); hand-made heads whose
// OV circuit copies (score 1) and suppresses (score -1); the readout of the full OV circuit in the vocabulary
// against power iteration on the whole (V, V) matrix; and the positional picture.
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <complex>
#include <limits>
#include <vector>

#include "core/open/openmodel.h"
#include "core/research/circuits.h"
#include "core/train/probes/headprobes.h"
#include "circuitsreference.h"
#include "numericcheck.h"
#include "tinybart.h"
#include "tinybert.h"
#include "tinygpt2.h"
#include "tinyllama.h"

using namespace attnscope;

namespace {

using namespace circuitsref;

// Every number readCircuits gives against the reference.
void compareCircuits(const Circuits& got, const Reference& r, bool approximate)
{
    QCOMPARE(int(got.heads.size()), r.L * r.H);
    QCOMPARE(got.approximateComposition, approximate);
    numericcheck::Worst spectra, copying, composition;
    for (const CircuitHead& h : got.heads) {
        const RefHead& x = r.heads[std::size_t(h.layer)][std::size_t(h.head)];
        spectra.label("layer %d head %d QK", h.layer, h.head);
        spectra.addRelative(h.qkSingularValues, singularValues(times(x.wq, transposed(x.wk)), r.Dh), 1e-3);
        spectra.label("layer %d head %d OV", h.layer, h.head);
        spectra.addRelative(h.ovSingularValues, singularValues(times(x.wv, x.wo), r.Dh), 1e-3);
        QCOMPARE(h.ovCopyingScore.has_value(), r.copies);
        if (r.copies) {
            copying.label("layer %d head %d", h.layer, h.head);
            copying.add(*h.ovCopyingScore, copyingOf(times(times(x.wo, r.unembedEmbed), x.wv)));
        }
    }
    QVERIFY2(spectra.within(1e-4), spectra.message().c_str());
    if (r.copies) QVERIFY2(copying.within(1e-4), copying.message().c_str());
    QVERIFY(got.copyingNote.empty() == r.copies);

    int pairs = 0;
    for (int l2 = 1; l2 < r.L; ++l2) pairs += r.H * r.H * l2;
    QCOMPARE(int(got.composition.size()), pairs);
    for (const CircuitComposition& c : got.composition) {
        QVERIFY(c.from.layer < c.to.layer);
        const RefHead& a = r.heads[std::size_t(c.from.layer)][std::size_t(c.from.head)];
        const RefHead& b = r.heads[std::size_t(c.to.layer)][std::size_t(c.to.head)];
        const Dense ov1 = times(a.wv, a.wo), qk2 = times(b.wq, transposed(b.wk)), ov2 = times(b.wv, b.wo);
        const auto score = [&](const Dense& x, const Dense& y) { return frobenius(times(x, y)) / (frobenius(x) * frobenius(y)); };
        composition.label("from %d.%d to %d.%d", c.from.layer, c.from.head, c.to.layer, c.to.head);
        composition.add(c.q, score(ov1, qk2));
        composition.add(c.k, score(ov1, transposed(qk2)));
        composition.add(c.v, score(ov1, ov2));
    }
    QVERIFY2(composition.within(1e-4), composition.message().c_str());
}

} // namespace

class TestCircuits : public QObject {
    Q_OBJECT
private slots:
    void gpt2AgainstThePlainLoops();
    void groupedQueryLlamaAgainstThePlainLoops();
    void bertIsPostNormWithoutCopying();
    void bartThreeStacksAgainstThePlainLoops();
    void handMadeHeadsCopyAndSuppress();
    void filterKeepsOneHeadAndTheCompositionIntoIt();
    void readoutIsTheFullOvCircuitsTopDirection();
    void positionalPictureIsPWqkPt();
    void builtinPreviousTokenHeadIsASubDiagonal();
    void refusesHeadsTheModelLacks();
};

void TestCircuits::gpt2AgainstThePlainLoops()
{
    QTemporaryDir tmp;
    std::vector<NamedTensor> t = tinygpt2::tinyTensors(11);
    Result<ModelPtr> model = loadModel(tinygpt2::writeFolder(tmp, "gpt2", t));
    QVERIFY2(model, model.error().c_str());
    Result<Circuits> c = readCircuits(**model);
    QVERIFY2(c, c.error().c_str());
    compareCircuits(*c, gpt2Reference(t), false);
    QVERIFY(!c->unrotatedQueryKey && !c->scaleInQuery);
}

void TestCircuits::groupedQueryLlamaAgainstThePlainLoops()
{
    QTemporaryDir tmp;
    tinyllama::Spec s;
    s.layers = 3;  // composition across two earlier layers
    s.seed = 5;
    std::vector<NamedTensor> t = tinyllama::tensors(s);
    Result<ModelPtr> model = loadModel(tinyllama::writeFolder(tmp, "llama", s));
    QVERIFY2(model, model.error().c_str());
    QCOMPARE((*model)->config.keyValueHeads(), 2);
    Result<Circuits> c = readCircuits(**model);
    QVERIFY2(c, c.error().c_str());
    compareCircuits(*c, llamaReference(t, s), false);
    QVERIFY(c->unrotatedQueryKey);
    for (const CircuitHead& h : c->heads) QCOMPARE(h.kvHead, h.head / 2);
}

void TestCircuits::bertIsPostNormWithoutCopying()
{
    QTemporaryDir tmp;
    std::vector<NamedTensor> t = tinybert::tensors(tinybert::Family::Bert, int(tinybert::vocabulary().size()), 3);
    Result<ModelPtr> model = loadModel(tinybert::writeFolder(tmp, "bert", tinybert::Family::Bert, t));
    QVERIFY2(model, model.error().c_str());
    Result<Circuits> c = readCircuits(**model);
    QVERIFY2(c, c.error().c_str());
    compareCircuits(*c, bertReference(t), true);
    QVERIFY(!c->copyingNote.empty());
}

// BART, post-norm, 2 encoder and 3 decoder layers: the encoder's heads (their input from the embeddings'
// norm, then each layer's last), the decoder's self-attention (likewise in the decoder) and cross-attention
// (queries after the self-attention's norm, keys and values from the encoder's last norm); copying scores for
// the decoder's two kinds of head through the shared embedding and the decoder's last norm, none for the
// encoder's; composition within the encoder and within the decoder's self-attention.
void TestCircuits::bartThreeStacksAgainstThePlainLoops()
{
    QTemporaryDir tmp;
    const int V = tinybart::vocabularySize();
    std::vector<NamedTensor> t = tinybart::tensors(V);
    Result<ModelPtr> model = loadModel(tinybart::writeFolder(tmp, "bart", t));
    QVERIFY2(model, model.error().c_str());
    Result<Circuits> c = readCircuits(**model);
    QVERIFY2(c, c.error().c_str());
    const int H = tinybart::kH, D = tinybart::kD, Dh = D / H;
    const auto layerName = [](const char* stack, int l) { return std::string("model.") + stack + ".layers." + std::to_string(l) + "."; };
    const auto head = [&](const std::string& attention, const std::string& gainQ, const std::string& gainKV, int h) {
        RefHead x(D, Dh);
        const std::vector<float>& q = values(t, attention + "q_proj.weight");
        const std::vector<float>& k = values(t, attention + "k_proj.weight");
        const std::vector<float>& v = values(t, attention + "v_proj.weight");
        const std::vector<float>& o = values(t, attention + "out_proj.weight");
        const std::vector<float>& gq = values(t, gainQ);
        const std::vector<float>& gkv = values(t, gainKV);
        for (int i = 0; i < D; ++i)
            for (int j = 0; j < Dh; ++j) {
                x.wq(i, j) = gq[std::size_t(i)] * q[std::size_t((h * Dh + j) * D + i)];
                x.wk(i, j) = gkv[std::size_t(i)] * k[std::size_t((h * Dh + j) * D + i)];
                x.wv(i, j) = gkv[std::size_t(i)] * v[std::size_t((h * Dh + j) * D + i)];
                x.wo(j, i) = o[std::size_t(i * D + h * Dh + j)];
            }
        return x;
    };
    const auto inputNorm = [&](const char* stack, int l) {
        return l == 0 ? std::string("model.") + stack + ".layernorm_embedding.weight" : layerName(stack, l - 1) + "final_layer_norm.weight";
    };
    const std::string encoderOut = layerName("encoder", tinybart::kEncL - 1) + "final_layer_norm.weight";
    const std::vector<float>& shared = values(t, "model.shared.weight");
    const Dense unembedEmbed = unembedEmbedOf(shared, shared, values(t, layerName("decoder", tinybart::kDecL - 1) + "final_layer_norm.weight"), V, D);
    const auto reference = [&](CircuitStack stack, int l, int h) {
        if (stack == CircuitStack::Encoder) return head(layerName("encoder", l) + "self_attn.", inputNorm("encoder", l), inputNorm("encoder", l), h);
        if (stack == CircuitStack::Decoder) return head(layerName("decoder", l) + "self_attn.", inputNorm("decoder", l), inputNorm("decoder", l), h);
        return head(layerName("decoder", l) + "encoder_attn.", layerName("decoder", l) + "self_attn_layer_norm.weight", encoderOut, h);
    };
    QCOMPARE(int(c->heads.size()), (tinybart::kEncL + 2 * tinybart::kDecL) * H);
    QVERIFY(c->approximateComposition);
    numericcheck::Worst worst;
    for (const CircuitHead& h : c->heads) {
        const RefHead x = reference(h.stack, h.layer, h.head);
        worst.label("%s layer %d head %d", toString(h.stack), h.layer, h.head);
        worst.addRelative(h.qkSingularValues, singularValues(times(x.wq, transposed(x.wk)), Dh), 1e-3);
        worst.addRelative(h.ovSingularValues, singularValues(times(x.wv, x.wo), Dh), 1e-3);
        QCOMPARE(h.ovCopyingScore.has_value(), h.stack != CircuitStack::Encoder);
        if (h.ovCopyingScore) worst.add(*h.ovCopyingScore, copyingOf(times(times(x.wo, unembedEmbed), x.wv)));
    }
    int encoderPairs = 0, decoderPairs = 0;
    for (const CircuitComposition& x : c->composition) {
        QVERIFY(x.stack == CircuitStack::Encoder || x.stack == CircuitStack::Decoder);
        (x.stack == CircuitStack::Encoder ? encoderPairs : decoderPairs) += 1;
        const RefHead a = reference(x.stack, x.from.layer, x.from.head), b = reference(x.stack, x.to.layer, x.to.head);
        const Dense ov1 = times(a.wv, a.wo), qk2 = times(b.wq, transposed(b.wk)), ov2 = times(b.wv, b.wo);
        const auto score = [&](const Dense& p, const Dense& q) { return frobenius(times(p, q)) / (frobenius(p) * frobenius(q)); };
        worst.label("%s composition %d.%d to %d.%d", toString(x.stack), x.from.layer, x.from.head, x.to.layer, x.to.head);
        worst.add(x.q, score(ov1, qk2));
        worst.add(x.k, score(ov1, transposed(qk2)));
        worst.add(x.v, score(ov1, ov2));
    }
    QVERIFY2(worst.within(1e-4), worst.message().c_str());
    QCOMPARE(encoderPairs, H * H * 1);
    QCOMPARE(decoderPairs, H * H * (1 + 2));
}

// W_O = W_Vᵀ with W_U = W_Eᵀ (every gain 1, tied): the full OV circuit is (E W_V)(E W_V)ᵀ, whose eigenvalues
// are all at least 0, so the score is 1; W_O = -W_Vᵀ makes every one at most 0, -1.
void TestCircuits::handMadeHeadsCopyAndSuppress()
{
    for (const double sign : {1.0, -1.0}) {
        QTemporaryDir tmp;
        std::vector<NamedTensor> t = tinygpt2::tinyTensors(4);
        const int D = tinygpt2::kD;
        for (float& g : tinygpt2::tensor(t, "ln_f.weight").values) g = 1.0f;
        for (int l = 0; l < tinygpt2::kL; ++l) {
            const std::string p = "h." + std::to_string(l) + ".";
            for (float& g : tinygpt2::tensor(t, p + "ln_1.weight").values) g = 1.0f;
            const std::vector<float>& attn = tinygpt2::tensor(t, p + "attn.c_attn.weight").values;
            std::vector<float>& proj = tinygpt2::tensor(t, p + "attn.c_proj.weight").values;
            // c_proj row c (the concatenation's column c) is column 2D + c of c_attn: W_O = ±W_Vᵀ head by head.
            for (int c = 0; c < D; ++c)
                for (int i = 0; i < D; ++i) proj[std::size_t(c * D + i)] = float(sign) * attn[std::size_t(i * 3 * D + 2 * D + c)];
        }
        Result<ModelPtr> model = loadModel(tinygpt2::writeFolder(tmp, "copy", t));
        QVERIFY2(model, model.error().c_str());
        Result<Circuits> c = readCircuits(**model);
        QVERIFY2(c, c.error().c_str());
        numericcheck::Worst worst;
        for (const CircuitHead& h : c->heads) {
            QVERIFY(h.ovCopyingScore);
            worst.add(*h.ovCopyingScore, sign);
        }
        QVERIFY2(worst.within(1e-6), worst.message().c_str());
    }
}

void TestCircuits::filterKeepsOneHeadAndTheCompositionIntoIt()
{
    QTemporaryDir tmp;
    tinyllama::Spec s;
    s.layers = 3;
    Result<ModelPtr> model = loadModel(tinyllama::writeFolder(tmp, "llama", s));
    QVERIFY2(model, model.error().c_str());
    const Circuits all = *readCircuits(**model);
    CircuitFilter filter;
    filter.layer = 2;
    filter.head = 1;
    const Circuits one = *readCircuits(**model, filter);
    QCOMPARE(one.heads.size(), std::size_t(1));
    QCOMPARE(one.heads[0].layer, 2);
    QCOMPARE(one.heads[0].head, 1);
    QCOMPARE(one.composition.size(), std::size_t(2 * 4));  // from every head of layers 0 and 1
    numericcheck::Worst worst;
    for (const CircuitComposition& c : one.composition) {
        QVERIFY(c.to == (HeadSelection{2, 1}));
        const auto same = std::find_if(all.composition.begin(), all.composition.end(),
                                       [&](const CircuitComposition& x) { return x.from == c.from && x.to == c.to; });
        QVERIFY(same != all.composition.end());
        worst.add(c.k, same->k);
        worst.add(c.q, same->q);
        worst.add(c.v, same->v);
    }
    QVERIFY2(worst.within(1e-12), worst.message().c_str());
    // A layer alone: its heads, and no composition into layer 0.
    filter = {};
    filter.layer = 0;
    const Circuits first = *readCircuits(**model, filter);
    QCOMPARE(first.heads.size(), std::size_t(4));
    QVERIFY(first.composition.empty());
}

// The top singular value and vectors of W_E W_OV W_U (V, V), formed whole and found by power iteration.
void TestCircuits::readoutIsTheFullOvCircuitsTopDirection()
{
    QTemporaryDir tmp;
    tinyllama::Spec s;
    std::vector<NamedTensor> t = tinyllama::tensors(s);
    Result<ModelPtr> model = loadModel(tinyllama::writeFolder(tmp, "llama", s));
    QVERIFY2(model, model.error().c_str());
    const Reference r = llamaReference(t, s);
    const int V = tinyllama::vocabSize(s), D = r.D;
    const RefHead& x = r.heads[1][3];
    // W_E W_V (V, Dh) and W_O W_U (Dh, V), then the whole product.
    const std::vector<float>& e = values(t, "model.embed_tokens.weight");
    const std::vector<float>& u = values(t, "lm_head.weight");
    const std::vector<float>& gain = values(t, "model.norm.weight");
    Dense ev(V, r.Dh), ou(r.Dh, V);
    for (int v = 0; v < V; ++v)
        for (int j = 0; j < r.Dh; ++j)
            for (int i = 0; i < D; ++i) {
                ev(v, j) += double(e[std::size_t(v * D + i)]) * x.wv(i, j);
                ou(j, v) += x.wo(j, i) * double(gain[std::size_t(i)]) * double(u[std::size_t(v * D + i)]);
            }
    const Dense full = times(ev, ou);  // (V, V)
    std::vector<double> right(static_cast<std::size_t>(V), 1.0), left(static_cast<std::size_t>(V));
    double sigma = 0.0;
    for (int iter = 0; iter < 500; ++iter) {
        for (int i = 0; i < V; ++i) {
            double sum = 0.0;
            for (int j = 0; j < V; ++j) sum += full(i, j) * right[std::size_t(j)];
            left[std::size_t(i)] = sum;
        }
        sigma = std::sqrt(std::inner_product(left.begin(), left.end(), left.begin(), 0.0));
        for (double& v : left) v /= sigma;
        for (int j = 0; j < V; ++j) {
            double sum = 0.0;
            for (int i = 0; i < V; ++i) sum += full(i, j) * left[std::size_t(i)];
            right[std::size_t(j)] = sum;
        }
        const double n = std::sqrt(std::inner_product(right.begin(), right.end(), right.begin(), 0.0));
        for (double& v : right) v /= n;
    }
    const auto largest = std::max_element(left.begin(), left.end(), [](double a, double b) { return std::abs(a) < std::abs(b); });
    if (*largest < 0) {
        for (double& v : left) v = -v;
        for (double& v : right) v = -v;
    }
    Result<std::vector<OvDirection>> readout = fullOvReadout(**model, CircuitStack::Self, 1, 3, 2, 5);
    QVERIFY2(readout, readout.error().c_str());
    QCOMPARE(readout->size(), std::size_t(2));
    const OvDirection& top = readout->front();
    QVERIFY(top.singularValue >= (*readout)[1].singularValue);
    numericcheck::Worst worst;
    worst.addRelative(top.singularValue, sigma, 1e-6);
    QCOMPARE(top.inputs.size(), std::size_t(5));
    for (const auto& [id, value] : top.inputs) worst.add(value, left[std::size_t(id)]);
    for (const auto& [id, value] : top.outputs) worst.add(value, right[std::size_t(id)]);
    QVERIFY2(worst.within(1e-5), worst.message().c_str());
    // They are the largest entries, in order.
    std::vector<double> sorted = left;
    std::sort(sorted.rbegin(), sorted.rend());
    for (std::size_t i = 0; i < 5; ++i) QVERIFY(std::abs(top.inputs[i].second - sorted[i]) < 1e-5);
    // An encoder has no readout.
    QTemporaryDir bertDir;
    Result<ModelPtr> bert = loadModel(tinybert::writeFolder(bertDir, "bert", tinybert::Family::Bert));
    QVERIFY2(bert, bert.error().c_str());
    QVERIFY(!fullOvReadout(**bert, CircuitStack::Self, 0, 0, 1, 3));
}

// P W_QK Pᵀ from the checkpoint's own position table and c_attn, by plain loops; the future masked under the
// causal mask; refused without a table of absolute positions.
void TestCircuits::positionalPictureIsPWqkPt()
{
    QTemporaryDir tmp;
    std::vector<NamedTensor> t = tinygpt2::tinyTensors(9);
    Result<ModelPtr> model = loadModel(tinygpt2::writeFolder(tmp, "gpt2", t));
    QVERIFY2(model, model.error().c_str());
    const Reference r = gpt2Reference(t);
    const std::vector<float>& table = values(t, "transformer.wpe.weight");  // (C, D)
    const int N = tinygpt2::kC, D = r.D;
    Dense p(N, D);
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < D; ++j) p(i, j) = table[std::size_t(i * D + j)];
    numericcheck::Worst worst;
    for (int l = 0; l < r.L; ++l)
        for (int h = 0; h < r.H; ++h) {
            const RefHead& x = r.heads[std::size_t(l)][std::size_t(h)];
            const Dense want = times(times(p, times(x.wq, transposed(x.wk))), transposed(p));
            Result<Matrix> got = positionalQkCircuit(**model, l, h, N);
            QVERIFY2(got, got.error().c_str());
            QCOMPARE(got->rows(), N);
            worst.label("layer %d head %d", l, h);
            for (int i = 0; i < N; ++i)
                for (int j = 0; j < N; ++j) {
                    if (j > i) QVERIFY((*got)(i, j) == -std::numeric_limits<float>::infinity());  // the causal future
                    else worst.addRelative((*got)(i, j), want(i, j), 1e-3, i, j);
                }
        }
    QVERIFY2(worst.within(1e-4), worst.message().c_str());
    QVERIFY(!positionalQkCircuit(**model, 0, 0, 1));
    QVERIFY(!positionalQkCircuit(**model, 0, 0, N + 1));
    QVERIFY(!positionalQkCircuit(**model, 0, 2, N));
    QTemporaryDir llamaDir;
    Result<ModelPtr> llama = loadModel(tinyllama::writeFolder(llamaDir, "llama", tinyllama::Spec{}));
    QVERIFY2(llama, llama.error().c_str());
    Result<Matrix> rotary = positionalQkCircuit(**llama, 0, 0, 8);
    QVERIFY(!rotary);
    QVERIFY2(QString::fromStdString(rotary.error()).contains(QStringLiteral("rotary")), rotary.error().c_str());
}

// The head the probe sentences measure as the built-in model's previous-token head is one from its weights
// alone too: in its positional picture each query's largest score is the position just before it.
void TestCircuits::builtinPreviousTokenHeadIsASubDiagonal()
{
    Result<ModelPtr> model = loadModel("builtin");
    QVERIFY2(model, model.error().c_str());
    Result<train::HeadProbeResults> probe = train::probeHeads(**model);
    QVERIFY2(probe, probe.error().c_str());
    const train::HeadScores::Best previous = probe->previousToken.best();
    QVERIFY(previous.score > 0.5);
    constexpr int N = 24;
    Result<Matrix> picture = positionalQkCircuit(**model, previous.layer, previous.head, N);
    QVERIFY2(picture, picture.error().c_str());
    int onTheDiagonalBelow = 0;
    for (int i = 1; i < N; ++i) {
        Eigen::Index best = 0;
        picture->row(i).head(i + 1).maxCoeff(&best);
        onTheDiagonalBelow += best == i - 1;
    }
    QVERIFY2(onTheDiagonalBelow >= N - 3, qPrintable(QStringLiteral("L%1 H%2: %3 of %4 queries").arg(previous.layer).arg(previous.head)
                                                         .arg(onTheDiagonalBelow).arg(N - 1)));
}

void TestCircuits::refusesHeadsTheModelLacks()
{
    Result<ModelPtr> model = loadModel("random:layers=2,heads=4,d_model=32,seed=1");
    QVERIFY(model);
    CircuitFilter filter;
    filter.layer = 2;
    Result<Circuits> c = readCircuits(**model, filter);
    QVERIFY(!c);
    QVERIFY2(QString::fromStdString(c.error()).contains(QStringLiteral("layer 2")), c.error().c_str());
    filter = {};
    filter.head = -1;
    QVERIFY(!readCircuits(**model, filter));
    QVERIFY(!headFactors(**model, CircuitStack::Cross, 0, 0));
    QVERIFY(!headFactors(**model, CircuitStack::Self, 0, 4));
    QVERIFY(headFactors(**model, CircuitStack::Self, 1, 3));
}

QTEST_APPLESS_MAIN(TestCircuits)
#include "tst_circuits.moc"
