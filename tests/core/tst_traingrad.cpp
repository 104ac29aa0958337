// Every backward kernel of the trainer, and the whole networks' gradients (the decoder's and the
// translator's encoder–decoder), against central finite differences in double precision. Each kernel check
// builds a scalar f = sum(R .* output) with a fixed random R, so the analytic gradient of f with respect to
// every input and parameter can be compared entry by entry with (f(x + e) - f(x - e)) / 2e.
#include <QtTest>

#include <functional>

#include "core/model/randommodel.h"
#include "core/train/kernels.h"
#include "core/train/network.h"
#include "core/train/translator/translatornetwork.h"
#include "numericcheck.h"

using namespace attnscope;
using namespace attnscope::train;

namespace {

using M = Mat<double>;
using RV = RowVec<double>;

M randomMatrix(SeededRandom& r, Eigen::Index rows, Eigen::Index cols, double sd = 1.0)
{
    M m(rows, cols);
    for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = sd * r.normal();
    return m;
}

// The central difference of f with respect to every entry of x (x is restored afterwards).
template <class Derived>
M numericGradient(Eigen::MatrixBase<Derived>& x, const std::function<double()>& f, double eps = 1e-5)
{
    M g(x.rows(), x.cols());
    for (Eigen::Index j = 0; j < x.cols(); ++j)
        for (Eigen::Index i = 0; i < x.rows(); ++i) {
            const double keep = x(i, j);
            x(i, j) = keep + eps;
            const double up = f();
            x(i, j) = keep - eps;
            const double down = f();
            x(i, j) = keep;
            g(i, j) = (up - down) / (2 * eps);
        }
    return g;
}

// ||analytic - numeric|| / max(||analytic||, ||numeric||): the relative error the issue bounds by 1e-6.
double relativeError(const M& analytic, const M& numeric)
{
    const double scale = std::max(analytic.norm(), numeric.norm());
    return scale == 0.0 ? 0.0 : (analytic - numeric).norm() / scale;
}

#define CHECK_GRADIENT(name, analytic, numeric)                                                                   \
    do {                                                                                                           \
        const double err = relativeError((analytic), (numeric));                                                   \
        QVERIFY2(err <= 1e-6, qPrintable(QString("%1: relative error %2 (|analytic| %3)").arg(name).arg(err).arg(  \
                                              M(analytic).norm())));                                                \
        QVERIFY2(M(analytic).norm() > 0.0, qPrintable(QString("%1: the gradient is identically zero").arg(name))); \
    } while (0)

} // namespace

class TestTrainGrad : public QObject {
    Q_OBJECT
private slots:
    void layerNorm();
    void linear();
    void gelu();
    void attention();
    void attentionWithoutMask();
    void crossEntropy();
    void wholeNetwork_data();
    void wholeNetwork();
    void batchSplitGivesSameGradient();
    void floatMatchesDouble();
    void translatorWholeNetwork_data();
    void translatorWholeNetwork();
    void translatorBatchSplitGivesSameGradient();
    void translatorFloatMatchesDouble();
    void translatorCrossAttentionReadsTheSource();
};

void TestTrainGrad::layerNorm()
{
    SeededRandom r(11);
    const Eigen::Index N = 5, D = 7;
    M x = randomMatrix(r, N, D, 2.0);
    RV g = randomMatrix(r, 1, D), b = randomMatrix(r, 1, D);
    const M weight = randomMatrix(r, N, D);
    M xhat(N, D), y(N, D);
    Vec<double> rstd(N);
    auto f = [&] {
        layerNormForward<double>(x, g, b, 1e-5, xhat, rstd, y);
        return (y.array() * weight.array()).sum();
    };
    f();
    M dx(N, D);
    RV dg = RV::Zero(D), db = RV::Zero(D);
    layerNormBackward<double>(weight, xhat, rstd, g, dx, dg, db);
    CHECK_GRADIENT("layer norm dx", dx, numericGradient(x, f));
    CHECK_GRADIENT("layer norm dgain", dg, numericGradient(g, f));
    CHECK_GRADIENT("layer norm dbias", db, numericGradient(b, f));
}

void TestTrainGrad::linear()
{
    SeededRandom r(12);
    const Eigen::Index N = 4, In = 5, Out = 3;
    M x = randomMatrix(r, N, In), w = randomMatrix(r, In, Out);
    RV b = randomMatrix(r, 1, Out);
    const M weight = randomMatrix(r, N, Out);
    M y(N, Out);
    auto f = [&] {
        linearForward<double>(x, w, b, y);
        return (y.array() * weight.array()).sum();
    };
    f();
    M dx(N, In), dw = M::Zero(In, Out);
    RV db = RV::Zero(Out);
    linearBackward<double>(x, w, weight, dw, db, dx);
    CHECK_GRADIENT("linear dx", dx, numericGradient(x, f));
    CHECK_GRADIENT("linear dW", dw, numericGradient(w, f));
    CHECK_GRADIENT("linear db", db, numericGradient(b, f));
}

void TestTrainGrad::gelu()
{
    SeededRandom r(13);
    M x = randomMatrix(r, 6, 5, 2.0);
    const M weight = randomMatrix(r, 6, 5);
    M y(6, 5);
    auto f = [&] {
        geluForward<double>(x, y);
        return (y.array() * weight.array()).sum();
    };
    f();
    M dx(6, 5);
    geluBackward<double>(x, weight, dx);
    CHECK_GRADIENT("gelu dx", dx, numericGradient(x, f));
    // The forward is GPT-2's formula, checked at one hand-computed point: gelu(1) = 0.5 (1 + tanh(0.79788 * 1.044715)).
    M one = M::Constant(1, 1, 1.0), out(1, 1);
    geluForward<double>(one, out);
    QVERIFY(std::abs(out(0, 0) - 0.5 * (1.0 + std::tanh(0.7978845608028654 * 1.044715))) < 1e-15);
}

void TestTrainGrad::attention()
{
    SeededRandom r(14);
    const Eigen::Index T = 6, Dh = 4;
    M q = randomMatrix(r, T, Dh), k = randomMatrix(r, T, Dh), v = randomMatrix(r, T, Dh);
    const M weight = randomMatrix(r, T, Dh);
    const double scale = 0.5;
    M p(T, T), out(T, Dh);
    auto f = [&] {
        attentionForward<double>(q, k, v, scale, p, out);
        return (out.array() * weight.array()).sum();
    };
    f();
    // The forward is causal: nothing above the diagonal, rows sum to 1.
    const numericcheck::Worst upper = numericcheck::difference(p.triangularView<Eigen::StrictlyUpper>().toDenseMatrix(), 0.0);
    QVERIFY2(upper.atMost(1e-12), upper.message("above the diagonal").c_str());  // qFuzzyIsNull's zero
    const numericcheck::Worst sums = numericcheck::difference(p.rowwise().sum(), 1.0);
    QVERIFY2(sums.within(1e-12), sums.message("row sums against 1").c_str());
    M dq(T, Dh), dk(T, Dh), dv(T, Dh), scratch(T, T);
    attentionBackward<double>(q, k, v, p, scale, weight, scratch, dq, dk, dv);
    CHECK_GRADIENT("attention dq", dq, numericGradient(q, f));
    CHECK_GRADIENT("attention dk", dk, numericGradient(k, f));
    CHECK_GRADIENT("attention dv", dv, numericGradient(v, f));
}

void TestTrainGrad::attentionWithoutMask()
{
    // The encoder's self-attention and cross-attention: 3 target queries over 5 source keys, nothing hidden.
    SeededRandom r(16);
    const Eigen::Index Tq = 3, Tk = 5, Dh = 4;
    M q = randomMatrix(r, Tq, Dh), k = randomMatrix(r, Tk, Dh), v = randomMatrix(r, Tk, Dh);
    const M weight = randomMatrix(r, Tq, Dh);
    const double scale = 0.7;
    M p(Tq, Tk), out(Tq, Dh);
    auto f = [&] {
        attentionForward<double>(q, k, v, scale, p, out, false);
        return (out.array() * weight.array()).sum();
    };
    f();
    // Every key gets weight, and the first row is the softmax worked out here.
    QVERIFY(p.minCoeff() > 0.0);
    const Eigen::RowVectorXd logits = scale * q.row(0) * k.transpose();
    const Eigen::RowVectorXd expected = logits.array().exp() / logits.array().exp().sum();
    const numericcheck::Worst first = numericcheck::difference(p.row(0), expected);
    QVERIFY2(first.within(1e-14), first.message("first row against its softmax").c_str());
    M dq(Tq, Dh), dk(Tk, Dh), dv(Tk, Dh), scratch(Tq, Tk);
    attentionBackward<double>(q, k, v, p, scale, weight, scratch, dq, dk, dv);
    CHECK_GRADIENT("unmasked attention dq", dq, numericGradient(q, f));
    CHECK_GRADIENT("unmasked attention dk", dk, numericGradient(k, f));
    CHECK_GRADIENT("unmasked attention dv", dv, numericGradient(v, f));
}

void TestTrainGrad::crossEntropy()
{
    SeededRandom r(15);
    const Eigen::Index N = 5, D = 4, V = 9;
    M y = randomMatrix(r, N, D), e = randomMatrix(r, V, D);
    const int targets[N] = {3, 0, 8, 3, 5};
    M probsT(V, N);
    auto f = [&] { return crossEntropyForward<double>(y, e, targets, probsT); };
    const double loss = f();
    // Independent value: -log softmax(y e^T)[target], summed.
    double expected = 0;
    for (Eigen::Index n = 0; n < N; ++n) {
        const Vec<double> logits = e * y.row(n).transpose();
        expected += std::log(logits.array().exp().sum()) - logits[targets[n]];
    }
    QVERIFY2(std::abs(loss - expected) < 1e-12, qPrintable(QString::number(loss - expected)));
    M dE = M::Zero(V, D), dy(N, D);
    crossEntropyBackward<double>(y, e, targets, 1.0, probsT, dE, dy);
    CHECK_GRADIENT("cross-entropy dy", dy, numericGradient(y, f));
    CHECK_GRADIENT("cross-entropy dE", dE, numericGradient(e, f));
}

void TestTrainGrad::wholeNetwork_data()
{
    QTest::addColumn<int>("layers");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("dModel");
    QTest::newRow("1 layer, 1 head, d_model 4") << 1 << 1 << 4;
    QTest::newRow("2 layers, 2 heads, d_model 8") << 2 << 2 << 8;
}

void TestTrainGrad::wholeNetwork()
{
    QFETCH(int, layers);
    QFETCH(int, heads);
    QFETCH(int, dModel);
    NetworkConfig c;
    c.layers = layers;
    c.heads = heads;
    c.dModel = dModel;
    c.dFF = 3 * dModel;
    c.vocab = 7;
    c.context = 6;
    Network<double> net(c);
    // Larger than GPT-2's 0.02 so every path carries a gradient well above rounding.
    Vec<double> params = initialParameters<double>(c, net.layout(), 3);
    SeededRandom r(5);
    for (Eigen::Index i = 0; i < params.size(); ++i) params[i] += 0.3 * r.normal();
    const int B = 2, T = 5;
    std::vector<int> tokens(static_cast<std::size_t>(B * (T + 1)));
    for (int& t : tokens) t = static_cast<int>(r.nextU64() % 7);
    const double w = 1.0 / (B * T);
    Vec<double> grad = Vec<double>::Zero(params.size());
    net.run(params, tokens.data(), B, T, w, &grad);
    auto f = [&] { return w * net.run(params, tokens.data(), B, T, w, nullptr); };
    Eigen::Map<M> flat(params.data(), params.size(), 1);
    const M numeric = numericGradient(flat, f);
    // Per tensor, so a wrong gradient in a small tensor cannot hide behind the embedding's large one.
    for (const TensorSlot& t : net.layout().tensors) {
        const M a = grad.segment(t.offset, t.size());
        const M n = numeric.block(t.offset, 0, t.size(), 1);
        CHECK_GRADIENT(QString::fromStdString(t.name), a, n);
    }
}

void TestTrainGrad::batchSplitGivesSameGradient()
{
    // The trainer splits a batch across threads and adds the parts' gradients: the sum must equal the
    // gradient of the whole batch.
    NetworkConfig c;
    c.layers = 2;
    c.heads = 2;
    c.dModel = 8;
    c.dFF = 16;
    c.vocab = 11;
    c.context = 8;
    Network<double> whole(c), part(c);
    const Vec<double> params = initialParameters<double>(c, whole.layout(), 9);
    SeededRandom r(6);
    const int B = 4, T = 7;
    std::vector<int> tokens(static_cast<std::size_t>(B * (T + 1)));
    for (int& t : tokens) t = static_cast<int>(r.nextU64() % 11);
    const double w = 1.0 / (B * T);
    Vec<double> g1 = Vec<double>::Zero(params.size()), g2 = Vec<double>::Zero(params.size());
    const double l1 = whole.run(params, tokens.data(), B, T, w, &g1);
    const double l2 = part.run(params, tokens.data(), 1, T, w, &g2) + part.run(params, tokens.data() + (T + 1), 3, T, w, &g2);
    QVERIFY(std::abs(l1 - l2) < 1e-12);
    const numericcheck::Worst gradients = numericcheck::difference(g1, g2);
    QVERIFY2(gradients.within(1e-15), gradients.message("gradients of the whole batch against its parts").c_str());
}

void TestTrainGrad::floatMatchesDouble()
{
    // The trainer runs the float instantiation: same code, so it must agree with double to float precision.
    NetworkConfig c;
    c.layers = 2;
    c.heads = 2;
    c.dModel = 16;
    c.dFF = 32;
    c.vocab = 13;
    c.context = 8;
    Network<double> nd(c);
    Network<float> nf(c);
    const Vec<double> pd = initialParameters<double>(c, nd.layout(), 4);
    const Vec<float> pf = initialParameters<float>(c, nf.layout(), 4);
    const numericcheck::Worst initial = numericcheck::difference(pd.cast<float>(), pf);
    QVERIFY2(initial.within(1e-7f), initial.message("initial parameters, float against double").c_str());
    std::vector<int> tokens = {1, 5, 2, 9, 12, 0, 3, 3, 7};
    Vec<double> gd = Vec<double>::Zero(pd.size());
    Vec<float> gf = Vec<float>::Zero(pf.size());
    const double ld = nd.run(pd, tokens.data(), 1, 8, 1.0 / 8, &gd);
    const float lf = nf.run(pf, tokens.data(), 1, 8, 1.0f / 8, &gf);
    QVERIFY2(std::abs(ld - lf) < 1e-4 * std::abs(ld), qPrintable(QString("%1 vs %2").arg(ld).arg(lf)));
    const double err = (gd - gf.cast<double>()).norm() / gd.norm();
    QVERIFY2(err < 1e-4, qPrintable(QString::number(err)));
}

namespace {

// Three pairs of different lengths (source 4, 2, 5; target 3, 5, 1), ids drawn from r.
PairBatch randomPairs(SeededRandom& r, int vocab)
{
    PairBatch batch;
    const int sources[] = {4, 2, 5}, targets[] = {3, 5, 1};
    for (int b = 0; b < 3; ++b) {
        std::vector<int> s(static_cast<std::size_t>(sources[b])), in(static_cast<std::size_t>(targets[b])),
            out(static_cast<std::size_t>(targets[b]));
        for (int& id : s) id = static_cast<int>(r.nextU64() % static_cast<std::uint64_t>(vocab));
        for (std::size_t i = 0; i < in.size(); ++i) {
            in[i] = static_cast<int>(r.nextU64() % static_cast<std::uint64_t>(vocab));
            out[i] = static_cast<int>(r.nextU64() % static_cast<std::uint64_t>(vocab));
        }
        batch.add(s, in, out);
    }
    return batch;
}

TranslatorConfig smallTranslator(int encoderLayers, int decoderLayers, int heads, int dModel)
{
    TranslatorConfig c;
    c.encoderLayers = encoderLayers;
    c.decoderLayers = decoderLayers;
    c.heads = heads;
    c.dModel = dModel;
    c.dFF = 3 * dModel;
    c.vocab = 9;
    c.sourceContext = 6;
    c.targetContext = 5;
    return c;
}

} // namespace

void TestTrainGrad::translatorWholeNetwork_data()
{
    QTest::addColumn<int>("encoderLayers");
    QTest::addColumn<int>("decoderLayers");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("dModel");
    QTest::newRow("1 + 1 layers, 1 head, d_model 4") << 1 << 1 << 1 << 4;
    QTest::newRow("2 encoder + 1 decoder layers, 2 heads, d_model 6") << 2 << 1 << 2 << 6;
    QTest::newRow("1 encoder + 2 decoder layers, 2 heads, d_model 4") << 1 << 2 << 2 << 4;
}

void TestTrainGrad::translatorWholeNetwork()
{
    // Every parameter of the encoder–decoder, cross-attention's included, against central differences of
    // the mean loss over pairs of different lengths.
    QFETCH(int, encoderLayers);
    QFETCH(int, decoderLayers);
    QFETCH(int, heads);
    QFETCH(int, dModel);
    const TranslatorConfig c = smallTranslator(encoderLayers, decoderLayers, heads, dModel);
    QVERIFY(c.validate().ok());
    TranslatorNetwork<double> net(c);
    Vec<double> params = initialTranslatorParameters<double>(c, net.layout(), 3);
    SeededRandom r(7);
    for (Eigen::Index i = 0; i < params.size(); ++i) params[i] += 0.3 * r.normal();
    const PairBatch batch = randomPairs(r, c.vocab);
    const double w = 1.0 / static_cast<double>(batch.target.size());
    Vec<double> grad = Vec<double>::Zero(params.size());
    net.run(params, batch, 0, batch.pairs(), w, &grad);
    auto f = [&] { return w * net.run(params, batch, 0, batch.pairs(), w, nullptr); };
    Eigen::Map<M> flat(params.data(), params.size(), 1);
    const M numeric = numericGradient(flat, f);
    for (const TensorSlot& t : net.layout().tensors) {
        const M a = grad.segment(t.offset, t.size());
        const M n = numeric.block(t.offset, 0, t.size(), 1);
        CHECK_GRADIENT(QString::fromStdString(t.name), a, n);
    }
}

void TestTrainGrad::translatorBatchSplitGivesSameGradient()
{
    const TranslatorConfig c = smallTranslator(2, 2, 2, 8);
    TranslatorNetwork<double> whole(c), part(c);
    const Vec<double> params = initialTranslatorParameters<double>(c, whole.layout(), 9);
    SeededRandom r(8);
    const PairBatch batch = randomPairs(r, c.vocab);
    const double w = 0.25;
    Vec<double> g1 = Vec<double>::Zero(params.size()), g2 = Vec<double>::Zero(params.size());
    const double l1 = whole.run(params, batch, 0, 3, w, &g1);
    // The larger part first, so the second run reuses a workspace bigger than it needs.
    const double l2 = part.run(params, batch, 0, 2, w, &g2) + part.run(params, batch, 2, 1, w, &g2);
    QVERIFY2(std::abs(l1 - l2) < 1e-12, qPrintable(QString::number(l1 - l2)));
    const numericcheck::Worst gradients = numericcheck::difference(g1, g2);
    QVERIFY2(gradients.within(1e-15), gradients.message("gradients of the whole batch against its parts").c_str());
}

void TestTrainGrad::translatorFloatMatchesDouble()
{
    const TranslatorConfig c = smallTranslator(2, 2, 2, 16);
    TranslatorNetwork<double> nd(c);
    TranslatorNetwork<float> nf(c);
    const Vec<double> pd = initialTranslatorParameters<double>(c, nd.layout(), 4);
    const Vec<float> pf = initialTranslatorParameters<float>(c, nf.layout(), 4);
    const numericcheck::Worst initial = numericcheck::difference(pd.cast<float>(), pf);
    QVERIFY2(initial.within(1e-7f), initial.message("initial parameters, float against double").c_str());
    SeededRandom r(9);
    const PairBatch batch = randomPairs(r, c.vocab);
    Vec<double> gd = Vec<double>::Zero(pd.size());
    Vec<float> gf = Vec<float>::Zero(pf.size());
    const double ld = nd.run(pd, batch, 0, 3, 1.0 / 9, &gd);
    const float lf = nf.run(pf, batch, 0, 3, 1.0f / 9, &gf);
    QVERIFY2(std::abs(ld - lf) < 1e-4 * std::abs(ld), qPrintable(QString("%1 vs %2").arg(ld).arg(lf)));
    const double err = (gd - gf.cast<double>()).norm() / gd.norm();
    QVERIFY2(err < 1e-4, qPrintable(QString::number(err)));
}

void TestTrainGrad::translatorCrossAttentionReadsTheSource()
{
    // Each pair's cross-attention covers exactly its own source (rows sum to 1 over S columns), and the
    // loss of one pair depends on its own source but not on another pair's.
    const TranslatorConfig c = smallTranslator(1, 2, 2, 8);
    TranslatorNetwork<double> net(c);
    Vec<double> params = initialTranslatorParameters<double>(c, net.layout(), 5);
    SeededRandom r(10);
    for (Eigen::Index i = 0; i < params.size(); ++i) params[i] += 0.3 * r.normal();
    PairBatch batch = randomPairs(r, c.vocab);
    const double before = net.run(params, batch, 1, 1, 1.0, nullptr);
    const Eigen::Ref<const M> p = net.crossAttention(0, 1, 1);
    QCOMPARE(p.rows(), Eigen::Index(5));
    QCOMPARE(p.cols(), Eigen::Index(2));
    const numericcheck::Worst sums = numericcheck::difference(p.rowwise().sum(), 1.0);
    QVERIFY2(sums.within(1e-12), sums.message("row sums against 1").c_str());
    batch.source[0] = (batch.source[0] + 1) % c.vocab;  // pair 0's source
    QCOMPARE(net.run(params, batch, 1, 1, 1.0, nullptr), before);
    batch.source[4] = (batch.source[4] + 1) % c.vocab;  // pair 1's first source token
    QVERIFY(std::abs(net.run(params, batch, 1, 1, 1.0, nullptr) - before) > 1e-9);
}

QTEST_APPLESS_MAIN(TestTrainGrad)
#include "tst_traingrad.moc"
