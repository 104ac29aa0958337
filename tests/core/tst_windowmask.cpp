// Sliding windows and attention sinks as masks: how they are written, which pairs they hide (by hand), the
// forward pass's weights against the plain-loop reference (whole-matrix and row-block paths, any thread
// count), the next-token loss under them against a plain-loop log-likelihood, and their mistakes; and greedy
// generation under them, token by token against the plain loop's most probable next token.
#include <QtTest>

#include <cmath>

#include "core/compute/threadpool.h"
#include "core/model/forward.h"
#include "core/model/randommodel.h"
#include "core/model/trainingmask.h"
#include "loadmodel.h"
#include "reference.h"
#include "numericcheck.h"
#include "tracecompare.h"
#include "core/research/generation.h"
#include "core/research/nexttokenloss.h"
#include "core/scene/scene.h"

using namespace attnscope;

namespace {

ModelPtr randomModel(const char* spec = "random:layers=2,heads=4,d_model=64,seed=1") { return testing::load(spec); }

std::vector<int> someIds(const Model& model, int count)
{
    std::vector<int> ids;
    for (int i = 0; i < count; ++i) ids.push_back((i * 37 + 11) % model.config.vocabSize);
    return ids;
}

AttentionSettings settingsOf(const QString& mask, const QString& blocked = {})
{
    AttentionSettings s;
    Result<MaskSetting> m = parseMaskSetting(mask.toStdString());
    if (!m) qFatal("%s", m.error().c_str());
    applyMask(s, *m);
    if (!blocked.isEmpty()) s.blockedKeys = *parseBlockedKeys(blocked.toStdString());
    return s;
}


} // namespace

class TestWindowMask : public QObject {
    Q_OBJECT
private slots:
    void parsesAndFormats_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("window");
        QTest::addColumn<int>("sinks");
        QTest::addColumn<QString>("formatted");
        QTest::newRow("causal") << "causal" << int(MaskKind::Causal) << 0 << 0 << "causal";
        QTest::newRow("none") << "none" << int(MaskKind::None) << 0 << 0 << "none";
        QTest::newRow("window") << "window:64" << int(MaskKind::Causal) << 64 << 0 << "window:64";
        QTest::newRow("sinks and window") << "sinks:4,window:64" << int(MaskKind::Causal) << 64 << 4 << "sinks:4,window:64";
        QTest::newRow("window first") << "window:8,sinks:1" << int(MaskKind::Causal) << 8 << 1 << "sinks:1,window:8";
        QTest::newRow("window of one") << "window:1" << int(MaskKind::Causal) << 1 << 0 << "window:1";
    }
    void parsesAndFormats()
    {
        QFETCH(QString, text);
        QFETCH(int, kind);
        QFETCH(int, window);
        QFETCH(int, sinks);
        QFETCH(QString, formatted);
        Result<MaskSetting> m = parseMaskSetting(text.toStdString());
        QVERIFY2(m, m ? "" : m.error().c_str());
        QCOMPARE(int(m->kind), kind);
        QCOMPARE(m->window, window);
        QCOMPARE(m->sinks, sinks);
        QCOMPARE(QString::fromStdString(formatMask(*m)), formatted);
        AttentionSettings s;
        applyMask(s, *m);
        QVERIFY(maskSetting(s) == *m);
    }

    void refusesMalformedMasks_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("says");
        QTest::newRow("unknown word") << "diagonal" << "'causal', 'none', 'window:W'";
        QTest::newRow("empty") << "" << "'causal', 'none'";
        QTest::newRow("window of zero") << "window:0" << "window";
        QTest::newRow("negative window") << "window:-3" << "from 1 to 1000000";
        QTest::newRow("window too large") << "window:1000001" << "from 1 to 1000000";
        QTest::newRow("window not a number") << "window:ten" << "whole number";
        QTest::newRow("window without a number") << "window:" << "whole number";
        QTest::newRow("sinks alone") << "sinks:4" << "need a window";
        QTest::newRow("sinks of zero") << "sinks:0,window:8" << "sinks";
        QTest::newRow("window twice") << "window:8,window:9" << "'causal', 'none'";
        QTest::newRow("trailing comma") << "window:8," << "'causal', 'none'";
        QTest::newRow("causal with a window") << "causal,window:8" << "'causal', 'none'";
        QTest::newRow("spaces") << "sinks:4, window:8" << "'causal', 'none'";
    }
    void refusesMalformedMasks()
    {
        QFETCH(QString, text);
        QFETCH(QString, says);
        Result<MaskSetting> m = parseMaskSetting(text.toStdString());
        QVERIFY(!m);
        QVERIFY2(QString::fromStdString(m.error()).contains(says), m.error().c_str());
        QVERIFY2(QString::fromStdString(m.error()).endsWith('.'), m.error().c_str());
    }

    // Six tokens, one sink, a window of 2: by hand, query i sees key 0 and keys i-1, i (x = hidden).
    void hidesThePairsWorkedByHand()
    {
        const AttentionSettings s = settingsOf("sinks:1,window:2");
        const char* expected[6] = {
            // keys 012345
            "o.....",  // query 0 sees itself (also the sink)
            "oo....",  // 1: sink 0, and 0..1
            "ooo...",  // 2: sink 0, window 1..2
            "oxoo..",  // 3: sink 0, window 2..3
            "oxxoo.",  // 4
            "oxxxoo",  // 5
        };
        for (int i = 0; i < 6; ++i)
            for (int j = 0; j < 6; ++j) {
                const bool hidden = expected[i][j] != 'o';
                QVERIFY2(isMaskedPair(s, i, j) == hidden, qPrintable(QString("query %1, key %2").arg(i).arg(j)));
            }
        // The pass leaves exactly those pairs at zero and every other one above it.
        ModelPtr model = randomModel();
        Result<ForwardTrace> t = forward(*model, someIds(*model, 6), s);
        QVERIFY2(t, t ? "" : t.error().c_str());
        for (int l = 0; l < model->config.layers; ++l)
            for (int h = 0; h < model->config.heads; ++h)
                for (int i = 0; i < 6; ++i)
                    for (int j = 0; j < 6; ++j) {
                        const float w = t->weights(l, h)(i, j);
                        QVERIFY2(expected[i][j] == 'o' ? w > 0.0f : w == 0.0f, qPrintable(QString("weight (%1, %2) = %3").arg(i).arg(j).arg(w)));
                    }
        // A window without sinks hides key 0 from query 3 on.
        QVERIFY(isMaskedPair(settingsOf("window:3"), 3, 0));
        QVERIFY(!isMaskedPair(settingsOf("window:3"), 2, 0));
        // Without the causal mask a window means nothing.
        AttentionSettings off = s;
        off.mask = MaskKind::None;
        QVERIFY(!isMaskedPair(off, 5, 1) && !isMaskedPair(off, 0, 5));
    }

    // The whole-matrix path (short texts) and the row-block path (past 64 tokens, on 1 to 3 threads), with
    // windows crossing block edges, sinks longer than a block and blocked keys inside both.
    void matchesThePlainLoopReference_data()
    {
        QTest::addColumn<QString>("mask");
        QTest::addColumn<QString>("blocked");
        QTest::addColumn<int>("tokens");
        QTest::addColumn<int>("threads");
        QTest::newRow("window 3, 12 tokens") << "window:3" << "" << 12 << 1;
        QTest::newRow("sinks 2 + window 3, 12 tokens") << "sinks:2,window:3" << "" << 12 << 1;
        QTest::newRow("window 1 (itself only), 12 tokens") << "window:1" << "" << 12 << 1;
        QTest::newRow("sinks 1 + window 4, key 0 and 7 blocked") << "sinks:1,window:4" << "0,7" << 12 << 1;
        QTest::newRow("window 40, 150 tokens, 1 thread") << "window:40" << "" << 150 << 1;
        QTest::newRow("sinks 4 + window 40, 150 tokens, 2 threads") << "sinks:4,window:40" << "" << 150 << 2;
        QTest::newRow("sinks 70 + window 5, 150 tokens, 3 threads") << "sinks:70,window:5" << "3,100" << 150 << 3;
        QTest::newRow("window 64, 129 tokens, 2 threads") << "window:64" << "" << 129 << 2;
    }
    void matchesThePlainLoopReference()
    {
        QFETCH(QString, mask);
        QFETCH(QString, blocked);
        QFETCH(int, tokens);
        QFETCH(int, threads);
        ModelPtr model = randomModel("random:layers=2,heads=4,d_model=64,seed=3");
        const std::vector<int> ids = someIds(*model, tokens);
        const AttentionSettings s = settingsOf(mask, blocked);
        const double minShared = ThreadPool::shared().minSharedMultiplyAdds();
        ThreadPool::shared().setThreads(threads);
        ThreadPool::shared().setMinSharedMultiplyAdds(0.0);
        Result<ForwardTrace> fast = forward(*model, ids, s);
        ThreadPool::shared().setThreads(ThreadPool::hardwareThreads());
        ThreadPool::shared().setMinSharedMultiplyAdds(minShared);
        QVERIFY2(fast, fast ? "" : fast.error().c_str());
        const numericcheck::Worst worst = tracecompare::worstDifference(*fast, reference::attention(*model, ids, s));
        qInfo("max |Eigen - plain loop| = %.3g", worst.value());
        QVERIFY2(worst.atMost(1e-5), worst.message("Eigen against the plain loop").c_str());
        // Rows a blocked window leaves empty are reported, and the others sum to one.
        for (Eigen::Index i = 0; i < tokens; ++i) {
            bool any = false;
            for (Eigen::Index j = 0; j < tokens; ++j) any = any || !isMaskedPair(s, i, j);
            QCOMPARE(bool(fast->rowFullyMasked[std::size_t(i)]), !any);
            if (any) QVERIFY(std::abs(fast->weights(1, 2).row(i).sum() - 1.0f) < 1e-5f);
        }
    }

    // A window at least as long as the text hides nothing the causal mask does not.
    void aWindowLongerThanTheTextIsTheCausalMask()
    {
        ModelPtr model = randomModel();
        const std::vector<int> ids = someIds(*model, 90);
        Result<ForwardTrace> causal = forward(*model, ids, settingsOf("causal"));
        Result<ForwardTrace> wide = forward(*model, ids, settingsOf("sinks:2,window:90"));
        Result<ForwardTrace> narrow = forward(*model, ids, settingsOf("window:89"));
        QVERIFY(causal && wide && narrow);
        QCOMPARE(wide->weights(1, 3), causal->weights(1, 3));
        QVERIFY(narrow->weights(1, 3) != causal->weights(1, 3));  // 89 hides key 0 from the last query
        QCOMPARE(narrow->weights(1, 3)(89, 0), 0.0f);
    }

    // The loss the perplexity command prints, under each mask, against a plain-loop log-likelihood; and a
    // window that hides part of the text changes it.
    void lossMatchesThePlainLoopLogLikelihood_data()
    {
        QTest::addColumn<QString>("mask");
        QTest::addColumn<int>("tokens");
        QTest::newRow("causal, 20 tokens") << "causal" << 20;
        QTest::newRow("window 4, 20 tokens") << "window:4" << 20;
        QTest::newRow("sinks 2 + window 4, 20 tokens") << "sinks:2,window:4" << 20;
        QTest::newRow("sinks 1 + window 16, 80 tokens (row blocks)") << "sinks:1,window:16" << 80;
    }
    void lossMatchesThePlainLoopLogLikelihood()
    {
        QFETCH(QString, mask);
        QFETCH(int, tokens);
        ModelPtr model = randomModel("random:layers=2,heads=4,d_model=64,seed=5");
        const std::vector<int> ids = someIds(*model, tokens);
        const AttentionSettings s = settingsOf(mask);
        Result<double> fast = sentenceLoss(*model, ids, s);
        QVERIFY2(fast, fast ? "" : fast.error().c_str());
        const double slow = reference::meanNextTokenLoss(*model, ids, s);
        QVERIFY2(std::abs(*fast - slow) < 1e-4, qPrintable(QString("loss %1, plain loop %2").arg(*fast).arg(slow)));
        if (s.hasWindow()) {
            const double causal = reference::meanNextTokenLoss(*model, ids, settingsOf("causal"));
            QVERIFY2(std::abs(slow - causal) > 1e-4, qPrintable(QString("the window left the loss at %1").arg(causal)));
        }
    }

    void aWindowIsLabelledCounterfactual()
    {
        ModelPtr model = randomModel();
        QCOMPARE(counterfactualNote(model->config, settingsOf("causal")), std::string());
        const std::string window = counterfactualNote(model->config, settingsOf("window:64"));
        QVERIFY2(window.find("window of 64 keys") != std::string::npos, window.c_str());
        const std::string sinks = counterfactualNote(model->config, settingsOf("sinks:1,window:8"));
        QVERIFY2(sinks.find("8 keys and 1 sink,") != std::string::npos, sinks.c_str());
        QVERIFY(counterfactualNote(model->config, settingsOf("none")).find("causal") != std::string::npos);
    }

    // Settings built in code rather than parsed are checked before the pass.
    void refusesImpossibleSettings()
    {
        ModelPtr model = randomModel();
        AttentionSettings s;
        s.sinks = 2;
        Result<ForwardTrace> t = forward(*model, someIds(*model, 5), s);
        QVERIFY(!t);
        QVERIFY2(t.error().find("sinks need a window") != std::string::npos, t.error().c_str());
        s.sinks = 0;
        s.window = -1;
        t = forward(*model, someIds(*model, 5), s);
        QVERIFY(!t);
        QVERIFY2(t.error().find("negative") != std::string::npos, t.error().c_str());
    }

    // Each generated token is the plain loop's most probable next token after everything before it, under
    // the same mask, and the kept weights are the plain loop's over the whole result.
    void generationFollowsThePlainLoop_data()
    {
        QTest::addColumn<QString>("mask");
        QTest::newRow("causal") << "causal";
        QTest::newRow("sinks 1 + window 3") << "sinks:1,window:3";
    }
    void generationFollowsThePlainLoop()
    {
        QFETCH(QString, mask);
        ModelPtr model = randomModel("random:layers=2,heads=4,d_model=64,seed=9");
        const AttentionSettings s = settingsOf(mask);
        const std::vector<int> prompt = someIds(*model, 5);
        std::vector<int> asked;
        Result<Generation> g = generateGreedy(*model, prompt, s, 6, [&](int done) { asked.push_back(done); return true; });
        QVERIFY2(g, g ? "" : g.error().c_str());
        QCOMPARE(g->promptLength, 5);
        QCOMPARE(g->generated(), 6);
        QCOMPARE(asked, (std::vector<int>{0, 1, 2, 3, 4, 5}));
        QVERIFY(std::equal(prompt.begin(), prompt.end(), g->ids.begin()));
        const reference::Grid logits = reference::logits(*model, g->ids, s);
        for (int p = 5; p < 11; ++p) {
            const std::vector<double>& row = logits[std::size_t(p - 1)];
            const int expected = int(std::max_element(row.begin(), row.end()) - row.begin());
            QCOMPARE(g->ids[std::size_t(p)], expected);
        }
        const numericcheck::Worst worst = tracecompare::worstDifference(g->trace, reference::attention(*model, g->ids, s));
        QVERIFY2(worst.atMost(1e-5), worst.message("Eigen against the plain loop").c_str());
    }

    void generationStopsAtTheContextAndRefusesWhatItCannotDo()
    {
        ModelPtr model = randomModel("random:layers=1,heads=2,d_model=16,context=12,seed=2");
        Result<Generation> g = generateGreedy(*model, someIds(*model, 9), {}, 10);
        QVERIFY2(g, g ? "" : g.error().c_str());
        QCOMPARE(g->generated(), 3);  // the context holds 12
        g = generateGreedy(*model, someIds(*model, 12), {}, 1);
        QVERIFY(!g);
        QVERIFY2(g.error().find("already fill") != std::string::npos, g.error().c_str());
        QVERIFY(!generateGreedy(*model, {}, {}, 1));
        QVERIFY(!generateGreedy(*model, someIds(*model, 2), {}, 0));
        QVERIFY(!generateGreedy(*model, someIds(*model, 2), {}, kMaxGeneratedTokens + 1));
        g = generateGreedy(*model, someIds(*model, 2), {}, 5, [](int done) { return done < 2; });
        QVERIFY(!g);
        QVERIFY2(g.error().find("stopped") != std::string::npos, g.error().c_str());
    }

    // The cache a streaming model keeps under a window: by hand, sinks:2,window:3 at query 9 holds keys
    // 0, 1 and 7..9; without a window, every key up to the query.
    void theCacheHoldsTheSinksAndTheWindow()
    {
        const AttentionSettings s = settingsOf("sinks:2,window:3");
        std::vector<int> kept;
        for (int key = 0; key < 12; ++key)
            if (cacheKeeps(s, 9, key)) kept.push_back(key);
        QCOMPARE(kept, (std::vector<int>{0, 1, 7, 8, 9}));
        QVERIFY(cacheKeeps(settingsOf("causal"), 9, 0) && !cacheKeeps(settingsOf("causal"), 9, 10));
        // What the cache keeps is exactly what the mask lets the query see.
        for (int key = 0; key <= 9; ++key) QCOMPARE(cacheKeeps(s, 9, key), !isMaskedPair(s, 9, key));
    }

    // A scene keeps the setting in the CLI's spelling, and refuses a bad one with the parser's sentence.
    void scenesCarryTheSetting()
    {
        Scene scene;
        scene.settings = settingsOf("sinks:4,window:64");
        const std::string text = formatScene(scene);
        QVERIFY2(text.find("\"mask\": \"sinks:4,window:64\"") != std::string::npos, text.c_str());
        Result<Scene> read = parseScene(text, "the test scene");
        QVERIFY2(read, read ? "" : read.error().c_str());
        QVERIFY(read->settings && read->settings->window == 64 && read->settings->sinks == 4 && read->settings->mask == MaskKind::Causal);
        std::string bad = text;
        bad.replace(bad.find("sinks:4,window:64"), 17, "sinks:4");
        Result<Scene> refused = parseScene(bad, "the test scene");
        QVERIFY(!refused);
        QVERIFY2(refused.error().find("need a window") != std::string::npos, refused.error().c_str());
    }
};

QTEST_APPLESS_MAIN(TestWindowMask)
#include "tst_windowmask.moc"
