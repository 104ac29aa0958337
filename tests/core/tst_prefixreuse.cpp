// Prefix reuse (model/prefixreuse.h): after seeded random edits (tokens appended, deleted at the end, changed
// in the second half, changed at the start), the pass that recomputes only the rows after the unchanged
// prefix is compared with a fresh whole pass on every causal family (GPT-2 layout, Llama with rotary
// positions and grouped keys, the built-in model, a BERT folder under the causal mask, stored BF16 weights,
// GPT-NeoX with partial rotary and the parallel residual, and with the sequential one),
// under windows, sinks, blocked keys and zero ablation: every weight, the logits, the fully masked rows, the
// focused head's whole pipeline, the residual streams, the heads' outputs and the value norms. Reuse must
// also happen (a pass that always fell back would pass the comparison), and must not where a row's inputs
// changed everywhere: another setting, model, capture or trace, mean ablation, the mask off.
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <random>

#include "core/model/forward.h"
#include "core/model/prefixreuse.h"
#include "loadmodel.h"
#include "numericcheck.h"
#include "tinybert.h"
#include "tinyllama.h"
#include "tinyneox.h"

using namespace attnscope;

namespace {

// Everything the capture asked for in two traces, relative past 1 and absolute below (logits and residuals
// reach tens, weights stay in [0, 1]); a masked score is -inf in both. The message names the worst part.
numericcheck::Worst compareTraces(const ForwardTrace& got, const ForwardTrace& want)
{
    numericcheck::Worst w;
    w.matchInfinities();
    const auto part = [&w](const auto& a, const auto& b, const std::string& what) {
        w.label("%s", what.c_str());
        w.addRelative(a, b);
    };
    const auto failed = [&w](const char* why) {
        w.fail(why);
        return w;
    };
    if (got.tokens != want.tokens || got.layers != want.layers || got.heads != want.heads) return failed("the shapes differ");
    if (got.rowFullyMasked != want.rowFullyMasked) return failed("the fully masked rows differ");
    if (got.attention.size() != want.attention.size()) return failed("the attention counts differ");
    for (std::size_t i = 0; i < got.attention.size(); ++i) part(got.attention[i], want.attention[i], "weights " + std::to_string(i));
    if (got.hasLogits != want.hasLogits) return failed("one kept logits");
    if (want.hasLogits) part(got.nextLogits, want.nextLogits, "logits");
    if (got.hasDetail != want.hasDetail) return failed("one kept a head's detail");
    if (want.hasDetail) {
        const HeadDetail &a = got.detail, &b = want.detail;
        if (!(a.selection == b.selection)) return failed("the detail is of another head");
        const std::pair<Matrix HeadDetail::*, const char*> parts[] = {
            {&HeadDetail::x, "x"}, {&HeadDetail::q, "q"}, {&HeadDetail::k, "k"}, {&HeadDetail::v, "v"},
            {&HeadDetail::keys, "the group keys"}, {&HeadDetail::values, "the group values"},
            {&HeadDetail::scores, "scores"}, {&HeadDetail::scaled, "scaled"}, {&HeadDetail::masked, "masked"},
            {&HeadDetail::weights, "detail weights"}, {&HeadDetail::headOutput, "head output"}, {&HeadDetail::concat, "concat"},
            {&HeadDetail::attnOutput, "attention output"}, {&HeadDetail::residualIn, "residual in"},
            {&HeadDetail::residualMid, "residual mid"}, {&HeadDetail::ln2, "ln2"}, {&HeadDetail::ffHidden, "ff hidden"},
            {&HeadDetail::ffOutput, "ff output"}, {&HeadDetail::residualOut, "residual out"}};
        for (const auto& [member, name] : parts) part(a.*member, b.*member, name);
    }
    if (got.hasResiduals != want.hasResiduals || got.hasHeadOutputs != want.hasHeadOutputs ||
        got.hasValueNorms != want.hasValueNorms || got.hasFinalHidden != want.hasFinalHidden)
        return failed("the captures kept differ");
    for (std::size_t i = 0; i < want.residuals.size(); ++i) part(got.residuals[i], want.residuals[i], "residual " + std::to_string(i));
    for (std::size_t i = 0; i < want.headOutputs.size(); ++i) part(got.headOutputs[i], want.headOutputs[i], "head outputs " + std::to_string(i));
    for (std::size_t i = 0; i < want.valueNorms.size(); ++i) part(got.valueNorms[i], want.valueNorms[i], "value norms " + std::to_string(i));
    if (want.hasFinalHidden) part(got.finalHidden, want.finalHidden, "final hidden");
    return w;
}

CaptureRequest windowCapture(const Model& model)
{
    CaptureRequest c;  // what the window asks: every head, the focused head's pipeline, the next token
    c.detail = HeadSelection{model.config.layers - 1, model.config.heads - 1};
    c.nextTokenLogits = true;
    return c;
}

CaptureRequest researchCapture()
{
    CaptureRequest c;  // what the research instruments ask, without every head's weights
    c.allAttention = false;
    c.detail = HeadSelection{0, 1};
    c.finalHidden = true;
    c.layerResiduals = true;
    c.headOutputs = true;
    return c;
}

CaptureRequest valueNormCapture()
{
    CaptureRequest c;
    c.valueNorms = true;
    c.nextTokenLogits = true;
    return c;
}

} // namespace

class TestPrefixReuse : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    std::map<QString, ModelPtr> m_models;

    const Model& model(const QString& name)
    {
        if (auto it = m_models.find(name); it != m_models.end()) return *it->second;
        ModelPtr m;
        if (name == "gpt2") m = testing::load("random:layers=2,heads=4,d_model=64,context=256,seed=3");
        else if (name == "builtin") m = testing::load("builtin");
        else if (name == "llama" || name == "llama-bf16") {
            tinyllama::Spec s;
            if (name == "llama-bf16") s.dtype = DType::BF16;
            m = testing::load(tinyllama::writeFolder(m_tmp, name.toStdString(), s).c_str());
        } else if (name == "neox" || name == "neox-sequential") {
            tinyneox::Spec s;
            s.parallelResidual = name == "neox";
            s.dtype = DType::F16;
            m = testing::load(tinyneox::writeFolder(m_tmp, name.toStdString(), s).c_str());
        } else if (name == "bert") {
            m = testing::load(tinybert::writeFolder(m_tmp, "bert", tinybert::Family::Bert).c_str());
        }
        if (!m) qFatal("no model %s", qPrintable(name));
        return *m_models.emplace(name, m).first->second;
    }

private slots:
    void initTestCase() { QVERIFY(m_tmp.isValid()); }

    void matchesTheWholePassAfterRandomEdits_data()
    {
        QTest::addColumn<QString>("modelName");
        QTest::addColumn<QString>("mask");
        QTest::addColumn<int>("capture");  // 0 the window's, 1 the research instruments', 2 value norms
        QTest::addColumn<bool>("inPlace"); // the previous trace is the one overwritten, or one kept aside
        QTest::addColumn<int>("maxTokens");
        QTest::newRow("gpt2 layout, window's capture") << "gpt2" << "causal" << 0 << true << 150;
        QTest::newRow("gpt2 layout, kept aside") << "gpt2" << "causal" << 0 << false << 150;
        QTest::newRow("gpt2 layout, research capture") << "gpt2" << "causal" << 1 << true << 100;
        QTest::newRow("gpt2 layout, value norms, sinks") << "gpt2" << "sinks:2,window:6" << 2 << false << 100;
        QTest::newRow("llama, window") << "llama" << "window:5" << 0 << true << 60;
        QTest::newRow("llama, research capture") << "llama" << "causal" << 1 << false << 60;
        QTest::newRow("llama bf16 stored") << "llama-bf16" << "causal" << 0 << true << 60;
        QTest::newRow("gpt-neox, partial rotary, parallel residual") << "neox" << "causal" << 0 << true << 60;
        QTest::newRow("gpt-neox, sequential residual, research capture") << "neox-sequential" << "window:5" << 1 << false << 60;
        QTest::newRow("built-in") << "builtin" << "causal" << 0 << false << 60;
        QTest::newRow("bert under the causal mask") << "bert" << "causal" << 0 << true << 30;
        QTest::newRow("bert, research capture, sinks") << "bert" << "sinks:1,window:3" << 1 << false << 30;
    }
    void matchesTheWholePassAfterRandomEdits()
    {
        QFETCH(QString, modelName);
        QFETCH(QString, mask);
        QFETCH(int, capture);
        QFETCH(bool, inPlace);
        QFETCH(int, maxTokens);
        const Model& m = model(modelName);
        AttentionSettings settings = testing::maskSettings(mask);
        settings.blockedKeys = {1};
        settings.ablated = {{0, 0}};  // zero ablation (the default mode) keeps rows independent
        settings.temperature = 0.7;
        const CaptureRequest request = capture == 0 ? windowCapture(m) : capture == 1 ? researchCapture() : valueNormCapture();

        std::mt19937 rng(20261203u + static_cast<unsigned>(qHash(modelName) + capture));
        auto token = [&] { return static_cast<int>(rng() % static_cast<unsigned>(m.config.vocabSize)); };
        std::vector<int> ids;
        for (int i = 0; i < 10; ++i) ids.push_back(token());

        PrefixCache cache;
        Workspace ws, fresh;
        ForwardTrace traces[2], want;
        int current = 0, reuses = 0, wholes = 0;
        for (int edit = 0; edit < 40; ++edit) {
            const int kind = static_cast<int>(rng() % 10);
            const int T = static_cast<int>(ids.size());
            if (kind < 6) {  // type at the end: one to eight tokens
                for (int k = 1 + static_cast<int>(rng() % 8); k > 0 && static_cast<int>(ids.size()) < maxTokens; --k) ids.push_back(token());
            } else if (kind < 8 && T > 3) {  // delete at the end
                ids.resize(static_cast<std::size_t>(T - 1 - static_cast<int>(rng() % 2)));
            } else if (kind < 9) {  // change a token in the second half
                ids[static_cast<std::size_t>(T / 2 + static_cast<int>(rng() % static_cast<unsigned>(T - T / 2)))] = token();
            } else {  // change the first token: every row changes
                ids[0] = token();
            }

            const ForwardTrace* previous = edit == 0 ? nullptr : &traces[current];
            const int next = inPlace ? current : 1 - current;
            int reused = -1;
            const Status s = forwardReusingPrefix(m, ids, settings, request, previous, traces[next], cache, ws, &reused);
            QVERIFY2(s.ok(), s.error().c_str());
            QVERIFY(forward(m, ids, settings, request, want, fresh).ok());
            const numericcheck::Worst difference = compareTraces(traces[next], want);
            QVERIFY2(difference.within(1e-4), qPrintable(QStringLiteral("edit %1 (%2 tokens, %3 reused): %4")
                                                             .arg(edit).arg(ids.size()).arg(reused)
                                                             .arg(QString::fromStdString(difference.message()))));
            if (kind == 9 && edit > 0) QCOMPARE(reused, 0);
            QVERIFY(reused < static_cast<int>(ids.size()));
            (reused > 0 ? reuses : wholes) += 1;
            current = next;
        }
        // Most edits are at the end: most passes reused a prefix, and the first edit never can.
        QVERIFY2(reuses >= 20, qPrintable(QString::number(reuses)));
        QVERIFY(wholes >= 1);
        QVERIFY(cache.bytes() > 0);
    }

    void appendingReusesAllButTheNewTokens()
    {
        const Model& m = model("gpt2");
        const AttentionSettings settings;
        const CaptureRequest request = windowCapture(m);
        std::vector<int> ids = {5, 6, 7, 8, 9, 10, 11, 12};
        PrefixCache cache;
        Workspace ws;
        ForwardTrace trace;
        int reused = -1;
        QVERIFY(forwardReusingPrefix(m, ids, settings, request, nullptr, trace, cache, ws, &reused).ok());
        QCOMPARE(reused, 0);
        ids.insert(ids.end(), {13, 14, 15});
        QVERIFY(forwardReusingPrefix(m, ids, settings, request, &trace, trace, cache, ws, &reused).ok());
        QCOMPARE(reused, 8);
        // The same text again recomputes the last token only (its row makes the logits).
        QVERIFY(forwardReusingPrefix(m, ids, settings, request, &trace, trace, cache, ws, &reused).ok());
        QCOMPARE(reused, 10);
        ids.resize(9);  // a deleted word: the rows left are all the old ones but the last
        QVERIFY(forwardReusingPrefix(m, ids, settings, request, &trace, trace, cache, ws, &reused).ok());
        QCOMPARE(reused, 8);
        QCOMPARE(trace.tokens, 9);
    }

    // Past 512 tokens a head's weights (a megabyte and more) are copied with stores that bypass the cache,
    // starting at whatever alignment each column has: lengths of both parities, in place and kept aside.
    void longTextsCarryTheirWeightsExactly_data()
    {
        QTest::addColumn<bool>("inPlace");
        QTest::newRow("in place") << true;
        QTest::newRow("kept aside") << false;
    }

    void longTextsCarryTheirWeightsExactly()
    {
        QFETCH(bool, inPlace);
        const ModelPtr m = testing::load("random:layers=1,heads=2,d_model=16,vocab=50,context=1024,seed=4");
        const CaptureRequest request = windowCapture(*m);
        std::vector<int> ids;
        for (int i = 0; i < 600; ++i) ids.push_back((i * 7 + 3) % 50);
        PrefixCache cache;
        Workspace ws, fresh;
        ForwardTrace traces[2], want;
        int current = 0;
        QVERIFY(forwardReusingPrefix(*m, ids, {}, request, nullptr, traces[0], cache, ws).ok());
        for (const int added : {1, 2, 3}) {
            for (int k = 0; k < added; ++k) ids.push_back(static_cast<int>(ids.size() % 50));
            const int next = inPlace ? current : 1 - current;
            int reused = -1;
            QVERIFY(forwardReusingPrefix(*m, ids, {}, request, &traces[current], traces[next], cache, ws, &reused).ok());
            QCOMPARE(reused, static_cast<int>(ids.size()) - added);
            QVERIFY(forward(*m, ids, {}, request, want, fresh).ok());
            const numericcheck::Worst difference = compareTraces(traces[next], want);
            QVERIFY2(difference.within(1e-5), qPrintable(QStringLiteral("%1 tokens: %2")
                                                             .arg(ids.size()).arg(QString::fromStdString(difference.message()))));
            current = next;
        }
    }

    // A trace handed back for the next pass (as the window's Document and bench --append-tokens do with the
    // one released two passes before) keeps its zeros above the diagonal only when it is the same size and
    // a pass that reuses the prefix left it; every other trace gets its zeros written. Either way each row
    // the pass carries is copied: the trace handed back holds another text's weights there. Up to four new
    // rows are written into each column with the carried ones (carryCausalWithRows).
    void tracesHandedBackCarryExactly_data()
    {
        QTest::addColumn<int>("tokens");
        QTest::addColumn<int>("changed");  // tokens at the end that differ
        QTest::newRow("600 tokens, streamed copy, 2 new rows") << 600 << 2;
        QTest::newRow("600 tokens, streamed copy, 1 new row") << 600 << 1;
        QTest::newRow("600 tokens, streamed copy, 4 new rows") << 600 << 4;
        QTest::newRow("600 tokens, streamed copy, 5 new rows") << 600 << 5;
        QTest::newRow("40 tokens, 2 new rows") << 40 << 2;
    }
    void tracesHandedBackCarryExactly()
    {
        QFETCH(int, tokens);
        QFETCH(int, changed);
        const ModelPtr m = testing::load("random:layers=1,heads=2,d_model=16,vocab=50,context=1024,seed=4");
        const CaptureRequest request = windowCapture(*m);
        std::vector<int> a;
        for (int i = 0; i < tokens; ++i) a.push_back((i * 7 + 3) % 50);
        const std::vector<int> shorter(a.begin(), a.end() - changed);
        std::vector<int> b = a, c = a;  // b: the last tokens changed; c: the middle one
        for (int i = 1; i <= changed; ++i) b[std::size_t(tokens - i)] = (a[std::size_t(tokens - i)] + i) % 50;
        c[std::size_t(tokens / 2)] = (c[std::size_t(tokens / 2)] + 1) % 50;
        PrefixCache cache;
        Workspace ws, fresh;
        ForwardTrace t[3], want;
        const auto check = [&](const std::vector<int>& ids, int from, int into, bool zerosKept, int reuse) {
            const bool flagged = t[into].zeroAboveDiagonal && t[into].attention.size() == 2 && t[into].attention[0].rows() == tokens;
            if (flagged != zerosKept) return QStringLiteral("trace %1 %2 its zeros").arg(into).arg(flagged ? "keeps" : "does not keep");
            int reused = -1;
            if (!forwardReusingPrefix(*m, ids, {}, request, &t[from], t[into], cache, ws, &reused).ok()) return QStringLiteral("failed");
            if (reused != reuse) return QStringLiteral("reused %1").arg(reused);
            if (!t[into].zeroAboveDiagonal) return QStringLiteral("not marked");
            if (!forward(*m, ids, {}, request, want, fresh).ok()) return QStringLiteral("whole pass failed");
            const numericcheck::Worst difference = compareTraces(t[into], want);
            return difference.within(1e-5) ? QString() : QString::fromStdString(difference.message());
        };
        QVERIFY(forwardReusingPrefix(*m, shorter, {}, request, nullptr, t[0], cache, ws).ok());
        QVERIFY(!t[0].zeroAboveDiagonal);  // a whole pass promises nothing
        QCOMPARE(check(c, 0, 1, false, tokens / 2), QString());  // new traces
        QCOMPARE(check(a, 1, 2, false, tokens / 2), QString());
        QCOMPARE(check(b, 2, 1, true, tokens - changed), QString());  // handed back at the same size, holding c
        QCOMPARE(check(a, 1, 0, false, tokens - changed), QString());  // handed back, but shorter
        // The same size without the mask: its upper triangles hold weights, which must be overwritten.
        QVERIFY(forward(*m, c, testing::maskSettings("none"), request, t[2], fresh).ok());
        QVERIFY(!t[2].zeroAboveDiagonal);
        QVERIFY(t[2].attention[0](0, tokens - 1) > 0.0f);
        QCOMPARE(check(b, 0, 2, false, tokens - changed), QString());
    }

    void fallsBackToAWholePassWhenEveryRowChanges()
    {
        const Model& m = model("gpt2");
        const CaptureRequest request = windowCapture(m);
        std::vector<int> ids(20);
        for (int i = 0; i < 20; ++i) ids[std::size_t(i)] = 10 + i;
        std::vector<int> longer = ids;
        longer.push_back(7);
        auto reusedAfter = [&](const AttentionSettings& first, const AttentionSettings& second, const Model& secondModel,
                               const CaptureRequest& secondCapture, bool samePrevious) {
            PrefixCache cache;
            Workspace ws;
            ForwardTrace a, other;
            int reused = -1;
            if (!forwardReusingPrefix(m, ids, first, request, nullptr, a, cache, ws, &reused).ok()) return -1;
            if (!forward(m, ids, first, request, other, ws).ok()) return -1;
            if (!forwardReusingPrefix(secondModel, longer, second, secondCapture, samePrevious ? &a : &other, a, cache, ws, &reused).ok())
                return -1;
            return reused;
        };
        const AttentionSettings plain;
        QCOMPARE(reusedAfter(plain, plain, m, request, true), 20);  // the control: reuse happens
        AttentionSettings blocked = plain;
        blocked.blockedKeys = {3};
        QCOMPARE(reusedAfter(plain, blocked, m, request, true), 0);
        AttentionSettings hotter = plain;
        hotter.temperature = 2.0;
        QCOMPARE(reusedAfter(plain, hotter, m, request, true), 0);
        AttentionSettings mean = plain;
        mean.ablated = {{1, 2}};
        mean.ablationMode = AblationMode::Mean;
        QCOMPARE(reusedAfter(mean, mean, m, request, true), 0);
        const AttentionSettings none = testing::maskSettings("none");
        QCOMPARE(reusedAfter(none, none, m, request, true), 0);
        QCOMPARE(reusedAfter(plain, plain, model("builtin"), request, true), 0);  // another model (same ids fit it)
        CaptureRequest otherHead = request;
        otherHead.detail = HeadSelection{0, 0};
        QCOMPARE(reusedAfter(plain, plain, m, otherHead, true), 0);
        QCOMPARE(reusedAfter(plain, plain, m, request, false), 0);  // a trace the cache did not fill
    }

    // The window's passes stop for a newer request that makes a whole pass anyway: a whole pass given a
    // raised flag stops with kPassStopped and leaves nothing to reuse (the next pass is whole and right); a
    // pass that reuses a prefix runs to the end, whatever the flag says.
    void aStoppedWholePassLeavesNothingToReuse()
    {
        const Model& m = model("llama");
        const AttentionSettings settings;
        const CaptureRequest request = windowCapture(m);
        std::vector<int> ids = {5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
        PrefixCache cache;
        Workspace ws;
        ForwardTrace first, second;
        int reused = -1;
        const std::atomic<bool> raised{true}, lowered{false};
        QVERIFY(forwardReusingPrefix(m, ids, settings, request, nullptr, first, cache, ws, &reused, &lowered).ok());
        ids.push_back(15);
        QVERIFY(forwardReusingPrefix(m, ids, settings, request, &first, second, cache, ws, &reused, &raised).ok());
        QCOMPARE(reused, 10);
        ids.push_back(16);
        // No trace to reuse: a whole pass, which stops.
        const Status s = forwardReusingPrefix(m, ids, settings, request, nullptr, first, cache, ws, &reused, &raised);
        QCOMPARE(s.error(), std::string(kPassStopped));
        QCOMPARE(cache.pass, std::uint64_t(0));
        // `second` is whole and right, but the stopped pass overwrote the cache's keys: nothing is reused.
        QVERIFY(forwardReusingPrefix(m, ids, settings, request, &second, second, cache, ws, &reused, &lowered).ok());
        QCOMPARE(reused, 0);
        Result<ForwardTrace> fresh = forward(m, ids, settings, request);
        QVERIFY(bool(fresh));
        numericcheck::Worst weights;
        for (std::size_t i = 0; i < fresh->attention.size(); ++i) {
            weights.label("weights %zu", i);
            weights.add(second.attention[i], fresh->attention[i]);
        }
        QVERIFY2(weights.within(1e-5), weights.message().c_str());
        const numericcheck::Worst logits = numericcheck::difference(second.nextLogits, fresh->nextLogits);
        QVERIFY2(logits.within(1e-4), logits.message("logits").c_str());
    }

    void refusesWhatTheWholePassRefuses()
    {
        const Model& m = model("llama");
        std::vector<int> ids(static_cast<std::size_t>(m.config.contextLength) + 1, 3);
        PrefixCache cache;
        Workspace ws;
        ForwardTrace trace;
        const Status s = forwardReusingPrefix(m, ids, AttentionSettings{}, CaptureRequest{}, nullptr, trace, cache, ws);
        QVERIFY(!s.ok());
        QCOMPARE(s.error(), forward(m, ids, AttentionSettings{}, CaptureRequest{}, trace, ws).error());
    }
};

QTEST_APPLESS_MAIN(TestPrefixReuse)
#include "tst_prefixreuse.moc"
