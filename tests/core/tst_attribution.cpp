// Direct logit attribution adds up to the model's real logit, an ablated head contributes what replaced
// it, the query-key map's normalisation and principal components, and the logit lens, each against an
// independent computation.
#include <QtTest>

#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <numeric>

#include "loadmodel.h"
#include "numericcheck.h"
#include "core/model/forward.h"
#include "core/model/maskedlm.h"
#include "core/model/randommodel.h"
#include "reference.h"
#include "core/research/logitattribution.h"
#include "core/research/logitlens.h"
#include "core/research/qkmap.h"
#include "tinybert.h"
#include "tinyllama.h"
#include "core/open/openmodel.h"

using namespace attnscope;
using testing::idsOf;
using testing::load;

namespace {

Matrix randomMatrix(int rows, int cols, std::uint64_t seed, float offset = 0.0f)
{
    SeededRandom r(seed);
    Matrix m(rows, cols);
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j) m(i, j) = float(r.normal()) + offset * float(j % 3);
    return m;
}

} // namespace

class TestAttribution : public QObject {
    Q_OBJECT
private slots:
    void partsSumToTheRealLogit_data();
    void partsSumToTheRealLogit();
    void headPartMatchesPlainLoop();
    void zeroAblatedHeadContributesNothing();
    void refusals();
    void normalisationKeepsEveryQuerysRanking();
    void principalComponentsMatchSvd();
    void mapOfAModelHead();
    void lensMatchesPlainLoop_data();
    void lensMatchesPlainLoop();
    void lensLastRowIsTheModelsPrediction();
    void lensOfAnEncoderReadsItsMaskedHead();
    void lensRefusals();
};

void TestAttribution::partsSumToTheRealLogit_data()
{
    QTest::addColumn<QString>("spec");
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("mask");
    QTest::addColumn<QString>("ablate");
    QTest::newRow("default model, causal") << "random" << "the parts add up to the logit" << 0 << "";
    QTest::newRow("3 layers, no mask") << "random:layers=3,heads=2,d_model=32,seed=3" << "without a mask this time" << 1 << "";
    QTest::newRow("with a zero-ablated head") << "random:layers=2,heads=4,d_model=64,seed=5" << "one head is out of the sum" << 0 << "1.2";
    QTest::newRow("one token") << "random" << "alone" << 0 << "";
}

void TestAttribution::partsSumToTheRealLogit()
{
    QFETCH(QString, spec);
    QFETCH(QString, text);
    QFETCH(int, mask);
    QFETCH(QString, ablate);
    ModelPtr model = load(spec.toStdString().c_str());
    const std::vector<int> ids = model->tokenizer->encode(text.toStdString())->ids;
    AttentionSettings s;
    s.mask = MaskKind(mask);
    if (!ablate.isEmpty()) s.ablated = *parseAblatedHeads(ablate.toStdString());
    CaptureRequest capture;
    capture.nextTokenLogits = true;
    const ForwardTrace trace = *forward(*model, ids, s, capture);
    Eigen::Index best = 0;
    trace.nextLogits.maxCoeff(&best);
    numericcheck::Worst worst;
    worst.label("target");
    for (int target : {0, 17, model->config.vocabSize - 1, int(best)}) {
        Result<LogitAttribution> a = directLogitAttribution(*model, ids, s, target);
        QVERIFY2(a, a.error().c_str());
        QCOMPARE(a->logit, double(trace.nextLogits(target)));
        worst.add(a->total(), a->logit, target);
    }
    QVERIFY2(worst.within(1e-4), worst.message("the parts against the real logit").c_str());
}

// One head's part recomputed from its pipeline with plain loops: its output at the last position through
// its rows of W_O, centred, divided by the final norm's σ, read along gain ⊙ unembedding.
void TestAttribution::headPartMatchesPlainLoop()
{
    ModelPtr model = load("random:layers=2,heads=4,d_model=64,seed=1");
    const std::vector<int> ids = model->tokenizer->encode("one head by hand")->ids;
    const int target = 42, layer = 1, head = 3, D = 64, Dh = 16;
    const int last = int(ids.size()) - 1;
    Result<LogitAttribution> a = directLogitAttribution(*model, ids, AttentionSettings{}, target);
    QVERIFY(a);
    CaptureRequest capture;
    capture.detail = HeadSelection{layer, head};
    const ForwardTrace t = *forward(*model, ids, AttentionSettings{}, capture);
    // σ of the stream leaving the last block at the last position.
    CaptureRequest lastLayer;
    lastLayer.detail = HeadSelection{1, 0};
    const ForwardTrace tl = *forward(*model, ids, AttentionSettings{}, lastLayer);
    double mean = 0.0, var = 0.0;
    for (int d = 0; d < D; ++d) mean += tl.detail.residualOut(last, d) / D;
    for (int d = 0; d < D; ++d) var += std::pow(tl.detail.residualOut(last, d) - mean, 2) / D;
    const double sigma = std::sqrt(var + model->config.layerNormEps);
    std::vector<double> out(D, 0.0);
    for (int d = 0; d < D; ++d)
        for (int e = 0; e < Dh; ++e) out[d] += t.detail.headOutput(last, e) * model->weights.layers[layer].wo(head * Dh + e, d);
    double outMean = 0.0;
    for (double v : out) outMean += v / D;
    double expected = 0.0;
    for (int d = 0; d < D; ++d)
        expected += (out[d] - outMean) / sigma * model->weights.lnfGain(d) * model->weights.tokenEmbedding(target, d);
    QVERIFY2(std::abs(a->head(layer, head) - expected) < 1e-4,
             qPrintable(QString("head %1.%2: %3 vs %4 by hand").arg(layer).arg(head).arg(a->head(layer, head)).arg(expected)));
}

void TestAttribution::zeroAblatedHeadContributesNothing()
{
    ModelPtr model = load("random");
    const std::vector<int> ids = model->tokenizer->encode("gone heads add nothing")->ids;
    AttentionSettings s;
    s.ablated = {{0, 1}};
    Result<LogitAttribution> a = directLogitAttribution(*model, ids, s, 3);
    QVERIFY(a);
    QCOMPARE(a->head(0, 1), 0.0);
    QVERIFY(a->head(0, 0) != 0.0);
}

void TestAttribution::refusals()
{
    ModelPtr model = load("random");
    QVERIFY(!directLogitAttribution(*model, {}, AttentionSettings{}, 0));
    QVERIFY(!directLogitAttribution(*model, {1, 2}, AttentionSettings{}, model->config.vocabSize));
    auto postLN = std::make_shared<Model>(*model);
    postLN->config.norm = NormPlacement::PostLN;
    Result<LogitAttribution> a = directLogitAttribution(*postLN, {1, 2}, AttentionSettings{}, 0);
    QVERIFY(!a);
    QVERIFY(QString::fromStdString(a.error()).contains("pre-LN"));
}

void TestAttribution::normalisationKeepsEveryQuerysRanking()
{
    const Matrix q = randomMatrix(12, 8, 1, 0.7f), k = randomMatrix(12, 8, 2, -2.0f) * 3.0f;  // (N, Dh)
    const NormalisedQueryKey n = normaliseQueryKey(q, k);
    // Before the scaling (undo it: q was multiplied by c, k divided) the mean key is the mean query; after
    // it the mean norms agree.
    const float c = float(n.scale);
    const numericcheck::Worst meanGap = numericcheck::difference(n.q.colwise().mean() / c, n.k.colwise().mean() * c);
    QVERIFY2(meanGap.within(1e-4), meanGap.message("mean query against mean key").c_str());
    const double nq = n.q.rowwise().norm().mean(), nk = n.k.rowwise().norm().mean();
    QVERIFY2(std::abs(nq - nk) < 1e-4 * nq, qPrintable(QString("mean norms %1 and %2").arg(nq).arg(nk)));
    // For every query, the new scores are the old ones plus one constant: the ranking cannot change.
    numericcheck::Worst worst;
    worst.label("query, key");
    for (int i = 0; i < 12; ++i) {
        const double shift = n.q.row(i).dot(n.k.row(0)) - q.row(i).dot(k.row(0));
        for (int j = 1; j < 12; ++j) worst.add(double(n.q.row(i).dot(n.k.row(j)) - q.row(i).dot(k.row(j))), shift, i, j);
    }
    QVERIFY2(worst.within(1e-3), worst.message("a score's move against its query's first").c_str());
}

// Eigen's SVD of the centred data is a different route to the same components: squared singular values
// over N are the covariance's eigenvalues.
void TestAttribution::principalComponentsMatchSvd()
{
    Matrix points = randomMatrix(40, 6, 3);
    points.col(0) *= 5.0f;
    points.col(2) *= 2.0f;
    const Projection2D p = principalComponents2D(points);
    const Eigen::MatrixXd X = points.cast<double>().rowwise() - points.cast<double>().colwise().mean();
    const Eigen::JacobiSVD<Eigen::MatrixXd> svd(X, Eigen::ComputeThinV);
    const Eigen::VectorXd sv = svd.singularValues();
    const double kept = (sv[0] * sv[0] + sv[1] * sv[1]) / sv.squaredNorm();
    QVERIFY2(std::abs(p.varianceKept - kept) < 1e-6, qPrintable(QString("variance kept %1 vs %2").arg(p.varianceKept).arg(kept)));
    for (int c = 0; c < 2; ++c) {
        const Eigen::VectorXd reference = X * svd.matrixV().col(c);
        const Eigen::VectorXd mine = p.points.col(c).cast<double>();
        numericcheck::Worst same, flipped;  // a component's sign is arbitrary
        same.label("component %d", c);
        same.add(mine, reference);
        flipped.label("component %d, sign flipped", c);
        flipped.add(mine, -reference);
        const numericcheck::Worst& gap = same.value() <= flipped.value() ? same : flipped;
        QVERIFY2(gap.within(1e-3), gap.message("against the SVD's").c_str());
    }
}

void TestAttribution::mapOfAModelHead()
{
    ModelPtr model = load("random");
    const std::vector<int> a = model->tokenizer->encode("the first sentence")->ids, b = model->tokenizer->encode("and a second one here")->ids;
    const HeadSelection head{1, 2};
    Result<QueryKeyMap> map = queryKeyMap(*model, {a, b}, AttentionSettings{}, head);
    QVERIFY2(map, map.error().c_str());
    const int N = int(a.size() + b.size());
    QCOMPARE(int(map->queries.rows()), N);
    QCOMPARE(int(map->keys.rows()), N);
    QCOMPARE(map->sentence[a.size()], 1);
    QCOMPARE(map->position[a.size()], 0);
    QVERIFY(map->varianceKept > 0.0 && map->varianceKept <= 1.0);
    // The projection is of the normalised vectors the head really computed.
    CaptureRequest capture;
    capture.detail = head;
    const ForwardTrace t0 = *forward(*model, a, AttentionSettings{}, capture), t1 = *forward(*model, b, AttentionSettings{}, capture);
    Matrix q(N, model->config.dHead), k(N, model->config.dHead);
    q << t0.detail.q, t1.detail.q;
    k << t0.detail.k, t1.detail.k;
    const NormalisedQueryKey n = normaliseQueryKey(q, k);
    Matrix joint(2 * N, model->config.dHead);
    joint << n.q, n.k;
    const Projection2D p = principalComponents2D(joint);
    const numericcheck::Worst queries = numericcheck::difference(p.points.topRows(N), map->queries);
    QVERIFY2(queries.within(1e-4), queries.message("projected queries").c_str());
    QCOMPARE(map->attention[1], t1.detail.weights);
    // Too many tokens is a sentence, not an allocation.
    std::vector<std::vector<int>> many(3, std::vector<int>(700, 1));
    Result<QueryKeyMap> tooMany = queryKeyMap(*model, many, AttentionSettings{}, head);
    QVERIFY(!tooMany && QString::fromStdString(tooMany.error()).contains("2000"));
}

void TestAttribution::lensMatchesPlainLoop_data()
{
    QTest::addColumn<QString>("spec");
    QTest::addColumn<QString>("mask");
    QTest::newRow("default random model") << "random" << "causal";
    QTest::newRow("3 layers, a window and a sink") << "random:layers=3,heads=2,d_model=32,seed=4" << "sinks:1,window:3";
    QTest::newRow("post-LN, no mask") << "postln" << "none";
}

// Every row and position: the reference's stream after each block, through the final norm (pre-LN) and
// the tied embedding in double, softmax, then the three most probable ids and the next token's probability.
void TestAttribution::lensMatchesPlainLoop()
{
    QFETCH(QString, spec);
    QFETCH(QString, mask);
    ModelPtr model = load(spec == "postln" ? "random:layers=2,heads=2,d_model=32,seed=9" : qPrintable(spec));
    if (spec == "postln") {
        auto postLN = std::make_shared<Model>(*model);
        postLN->config.norm = NormPlacement::PostLN;
        model = postLN;
    }
    AttentionSettings settings;
    const Result<MaskSetting> parsed = parseMaskSetting(mask.toStdString());
    QVERIFY(parsed);
    applyMask(settings, *parsed);
    const std::vector<int> ids = idsOf(*model, "what each layer would say");
    const int T = int(ids.size()), k = 3;
    Result<LogitLens> lens = logitLens(*model, ids, settings, k);
    QVERIFY2(lens, lens ? "" : lens.error().c_str());
    QCOMPARE(lens->rows, model->config.layers + 1);
    QCOMPARE(lens->tokens, T);
    QVERIFY(!lens->maskedHead);

    std::vector<reference::Grid> streams;
    reference::residual(*model, ids, settings, nullptr, &streams);
    QCOMPARE(int(streams.size()), lens->rows);
    const Matrix& E = model->weights.tokenEmbedding;  // (V, D)
    for (int r = 0; r < lens->rows; ++r) {
        reference::Grid x = streams[std::size_t(r)];
        if (model->config.norm == NormPlacement::PreLN)
            x = reference::layerNorm(x, model->weights.lnfGain, model->weights.lnfBias, model->config.layerNormEps);
        for (int t = 0; t < T; ++t) {
            std::vector<double> logit(std::size_t(E.rows()));
            for (Eigen::Index v = 0; v < E.rows(); ++v) {
                double dot = 0.0;
                for (Eigen::Index d = 0; d < E.cols(); ++d) dot += x[std::size_t(t)][std::size_t(d)] * E(v, d);
                logit[std::size_t(v)] = dot;
            }
            const double best = *std::max_element(logit.begin(), logit.end());
            double sum = 0.0;
            for (double l : logit) sum += std::exp(l - best);
            std::vector<int> order(logit.size());
            std::iota(order.begin(), order.end(), 0);
            std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return logit[std::size_t(a)] > logit[std::size_t(b)]; });
            const std::vector<NextToken>& top = lens->at(r, t);
            QCOMPARE(int(top.size()), k);
            for (int i = 0; i < k; ++i) {
                const double p = std::exp(logit[std::size_t(order[std::size_t(i)])] - best) / sum;
                QVERIFY2(std::abs(top[std::size_t(i)].p - p) < 1e-4, qPrintable(QString("row %1, position %2, rank %3: p %4 vs %5")
                                                                                 .arg(r).arg(t).arg(i).arg(top[std::size_t(i)].p).arg(p)));
                // Ids agree unless two candidates are within float rounding of each other.
                if (top[std::size_t(i)].id != order[std::size_t(i)])
                    QVERIFY(std::abs(logit[std::size_t(top[std::size_t(i)].id)] - logit[std::size_t(order[std::size_t(i)])]) < 1e-4);
            }
            if (t + 1 < T) {
                const double p = std::exp(logit[std::size_t(ids[std::size_t(t + 1)])] - best) / sum;
                QVERIFY(std::abs(lens->target(r, t) - p) < 1e-4);
            } else {
                QVERIFY(std::isnan(lens->target(r, t)));
            }
        }
    }
}

// The last row is the model's real output: at the last position, the same distribution the forward pass's
// next-token logits give, for a GPT-2-layout model and a Llama-family one (RMSNorm, stored unembedding).
void TestAttribution::lensLastRowIsTheModelsPrediction()
{
    QTemporaryDir tmp;
    tinyllama::Spec spec;
    const std::string llama = tinyllama::writeFolder(tmp, "lens-llama", spec);
    for (const std::string& path : {std::string("random:layers=2,heads=4,d_model=64,seed=2"), llama}) {
        Result<ModelPtr> loaded = loadModel(path);
        QVERIFY2(loaded, loaded ? "" : loaded.error().c_str());
        const Model& model = **loaded;
        const std::vector<int> ids = idsOf(model, "the last row is the output");
        Result<LogitLens> lens = logitLens(model, ids, AttentionSettings{}, 5);
        QVERIFY2(lens, lens ? "" : lens.error().c_str());
        CaptureRequest capture;
        capture.nextTokenLogits = true;
        const ForwardTrace trace = *forward(model, ids, AttentionSettings{}, capture);
        const std::vector<NextToken> own = topK(trace, *model.tokenizer, 5);
        const std::vector<NextToken>& last = lens->at(lens->rows - 1, int(ids.size()) - 1);
        QCOMPARE(last.size(), own.size());
        for (std::size_t i = 0; i < own.size(); ++i) {
            QCOMPARE(last[i].id, own[i].id);
            QVERIFY(std::abs(last[i].p - own[i].p) < 1e-5);
        }
        // The embeddings' row differs from the output's: the blocks do something.
        QVERIFY(lens->at(0, int(ids.size()) - 1)[0].p != last[0].p);
    }
}

// An encoder is read through its masked-LM head, and the target is the position's own token; the last
// row at a [MASK] gives what masked-token prediction gives.
void TestAttribution::lensOfAnEncoderReadsItsMaskedHead()
{
    QTemporaryDir tmp;
    ModelPtr bert = *loadModel(tinybert::writeFolder(tmp, "lens-bert", tinybert::Family::Bert));
    const std::vector<int> ids = idsOf(*bert, "the [MASK] is here");
    Result<LogitLens> lens = logitLens(*bert, ids, AttentionSettings{}, 4);
    QVERIFY2(lens, lens ? "" : lens.error().c_str());
    QVERIFY(lens->maskedHead);
    CaptureRequest capture;
    capture.finalHidden = true;
    const ForwardTrace trace = *forward(*bert, ids, AttentionSettings{}, capture);
    const std::vector<MaskedPrediction> filled = predictMasked(*bert, trace, ids, 4);
    QCOMPARE(int(filled.size()), 1);
    const std::vector<NextToken>& row = lens->at(lens->rows - 1, filled[0].position);
    for (std::size_t i = 0; i < row.size(); ++i) {
        QCOMPARE(row[i].id, filled[0].top[i].id);
        QVERIFY(std::abs(row[i].p - filled[0].top[i].p) < 1e-5);
    }
    for (int t = 0; t < int(ids.size()); ++t) {
        const Eigen::RowVectorXf logits = maskedLogits(*bert, trace.finalHidden.row(t));
        const double own = std::exp(double(logits(ids[std::size_t(t)]) - logits.maxCoeff())) /
                           (logits.array() - logits.maxCoeff()).exp().cast<double>().sum();
        QVERIFY(std::abs(lens->target(lens->rows - 1, t) - own) < 1e-5);
    }

    // Without the head there is nothing to read, and the sentence says which tensors are missing.
    std::vector<NamedTensor> headless = tinybert::tensors(tinybert::Family::Bert, int(tinybert::vocabulary().size()), 7, false);
    ModelPtr bare = *loadModel(tinybert::writeFolder(tmp, "lens-headless", tinybert::Family::Bert, headless));
    Result<LogitLens> refused = logitLens(*bare, ids, AttentionSettings{}, 4);
    QVERIFY(!refused);
    QVERIFY(QString::fromStdString(refused.error()).contains("masked-language-model head"));
}

void TestAttribution::lensRefusals()
{
    ModelPtr model = load("random");
    QVERIFY(!logitLens(*model, {}, AttentionSettings{}, 3));
    QVERIFY(!logitLens(*model, {1, 2}, AttentionSettings{}, 0));
    QVERIFY(!logitLens(*model, {1, 2}, AttentionSettings{}, kMaxLensTopK + 1));
    QVERIFY(!logitLens(*model, {1, model->config.vocabSize}, AttentionSettings{}, 3));
    // Stopped after two rows: a failure, not a half-filled lens.
    int asked = 0;
    Result<LogitLens> stopped = logitLens(*model, {1, 2, 3}, AttentionSettings{}, 3, [&](int done, int) {
        ++asked;
        return done < 2;
    });
    QVERIFY(!stopped);
    QCOMPARE(asked, 3);
    QVERIFY(QString::fromStdString(stopped.error()).contains("stopped"));
}

QTEST_APPLESS_MAIN(TestAttribution)
#include "tst_attribution.moc"
