// Sparse patterns as masks (core/model/sparsepattern.h): how they are written and refused, which pairs they
// keep against a plain-loop builder written here for every length from 1 to 40 under the causal mask and
// without it, the random draw's promises (reproducible, the same after text is appended under the causal
// mask, as many keys as it says, spread over all of them), and the forward pass under them: weights against
// a plain softmax of its own scaled scores, the row-block path against the whole-matrix one, and prefix
// reuse against a whole pass.
#include <QtTest>

#include <cmath>
#include <limits>

#include "core/compute/threadpool.h"
#include "core/dataexport/jsonexport.h"
#include "core/model/forward.h"
#include "core/model/forwardsteps.h"
#include "core/model/prefixreuse.h"
#include "core/model/trainingmask.h"
#include "core/research/nexttokenloss.h"
#include "core/scene/scene.h"
#include "loadmodel.h"
#include "numericcheck.h"

using namespace attnscope;

namespace {

// Dimension letters: T tokens.
using Keep = std::vector<std::vector<bool>>;  // (T, T): true where query i keeps key j

AttentionSettings settingsOf(const QString& mask, MaskKind direction = MaskKind::Causal)
{
    AttentionSettings s;
    s.mask = direction;
    Result<MaskSetting> m = parseMaskSetting(mask.toStdString());
    if (!m) qFatal("%s", m.error().c_str());
    applyMask(s, *m);
    return s;
}

// The plain-loop builder: each pattern's kept pairs enumerated from its definition in the issue, without
// the library's arithmetic (no division, no distance): the window's keys listed, the dilated keys stepped
// through, the block's first position found by walking back.
Keep plainLoopKeep(const SparsePattern& p, bool causal, int T)
{
    Keep keep(std::size_t(T), std::vector<bool>(std::size_t(T), false));
    const auto put = [&](int i, int j) {
        if (j >= 0 && j < T && (!causal || j <= i)) keep[std::size_t(i)][std::size_t(j)] = true;
    };
    for (int i = 0; i < T; ++i) {
        switch (p.kind) {
        case PatternKind::Global:
            for (int g : p.globals) {
                if (i == g)
                    for (int j = 0; j < T; ++j) put(i, j);
                put(i, g);
            }
            for (int back = 0; back < p.window; ++back) {
                put(i, i - back);
                if (!causal) put(i, i + back);
            }
            break;
        case PatternKind::Dilated:
            for (int step = 0; step < p.window; ++step) {
                put(i, i - step * p.dilation);
                if (!causal) put(i, i + step * p.dilation);
            }
            break;
        case PatternKind::Block: {
            int first = 0;  // the first position of i's block: step over whole blocks before it
            while (first + p.block <= i) first += p.block;
            for (int j = first; j < first + p.block; ++j) put(i, j);
            break;
        }
        default: break;
        }
    }
    return keep;
}

// What the library keeps, asked both ways: pair by pair (isMaskedPair) and a row at a time (maskScoreRows).
// Fails the test when the two disagree.
Keep libraryKeep(const AttentionSettings& s, int T, bool& agree)
{
    Matrix rows = Matrix::Zero(T, T);  // (T, T)
    maskScoreRows(s, 0, rows);
    Keep keep(std::size_t(T), std::vector<bool>(std::size_t(T), false));
    agree = true;
    for (int i = 0; i < T; ++i)
        for (int j = 0; j < T; ++j) {
            const bool byRow = rows(i, j) == 0.0f;
            keep[std::size_t(i)][std::size_t(j)] = byRow;
            agree = agree && byRow == !isMaskedPair(s, i, j, T);
        }
    return keep;
}

QString firstDifference(const Keep& got, const Keep& want)
{
    for (std::size_t i = 0; i < want.size(); ++i)
        for (std::size_t j = 0; j < want.size(); ++j)
            if (got[i][j] != want[i][j])
                return QString("query %1, key %2: library %3, plain loop %4").arg(i).arg(j).arg(got[i][j]).arg(want[i][j]);
    return {};
}

std::vector<int> someIds(const Model& model, int count)
{
    std::vector<int> ids;
    for (int i = 0; i < count; ++i) ids.push_back((i * 37 + 11) % model.config.vocabSize);
    return ids;
}

} // namespace

class TestSparsePattern : public QObject {
    Q_OBJECT
private slots:
    void parsesAndFormats_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("formatted");
        QTest::newRow("global and window") << "global:0,5;window:4" << "global:0,5;window:4";
        QTest::newRow("global positions sorted, once each") << "global:9,0,9;window:2" << "global:0,9;window:2";
        QTest::newRow("dilated") << "dilated:4,2" << "dilated:4,2";
        QTest::newRow("block") << "block:8" << "block:8";
        QTest::newRow("random, seed 0") << "random:3,0" << "random:3,0";
        QTest::newRow("random, the largest seed") << "random:1,4294967295" << "random:1,4294967295";
    }
    void parsesAndFormats()
    {
        QFETCH(QString, text);
        QFETCH(QString, formatted);
        Result<MaskSetting> m = parseMaskSetting(text.toStdString());
        QVERIFY2(m, m ? "" : m.error().c_str());
        QVERIFY(m->pattern.active() && m->window == 0 && m->sinks == 0);
        QCOMPARE(QString::fromStdString(formatMask(*m)), formatted);
        // Under either mask the settings give the same text back, and keep the direction they had.
        for (MaskKind kind : {MaskKind::Causal, MaskKind::None}) {
            AttentionSettings s;
            s.mask = kind;
            s.window = 8;  // a pattern takes the window's place
            applyMask(s, *m);
            QVERIFY(s.mask == kind);
            QCOMPARE(s.window, 0);
            QCOMPARE(QString::fromStdString(formatMask(maskSetting(s))), formatted);
            Result<MaskSetting> again = parseMaskSetting(formatMask(maskSetting(s)));
            QVERIFY(again && again->pattern == s.sparse);
        }
        // Back to a plain mask clears the pattern.
        AttentionSettings s = settingsOf(text);
        applyMask(s, *parseMaskSetting("window:5"));
        QVERIFY(!s.sparse.active() && s.window == 5);
    }

    void refusesMalformedPatterns_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("says");
        QTest::newRow("global without a window") << "global:1,2" << "needs its window after a semicolon";
        QTest::newRow("global with a comma before the window") << "global:1,window:4" << "needs its window";
        QTest::newRow("global with no positions") << "global:;window:4" << "'' is not one";
        QTest::newRow("global with a word") << "global:1,two;window:4" << "'two' is not one";
        QTest::newRow("global with a negative position") << "global:-1;window:4" << "'-1' is not one";
        QTest::newRow("global with a trailing comma") << "global:1,;window:4" << "'' is not one";
        QTest::newRow("global with a window of 0") << "global:1;window:0" << "window in the mask";
        QTest::newRow("global with a window too large") << "global:1;window:1000001" << "from 1 to 1000000";
        QTest::newRow("dilated with one number") << "dilated:4" << "'dilated:W,D'";
        QTest::newRow("dilated with a spacing of 0") << "dilated:4,0" << "'dilated:W,D'";
        QTest::newRow("dilated with no keys") << "dilated:0,2" << "'dilated:W,D'";
        QTest::newRow("dilated with three numbers") << "dilated:4,2,1" << "'dilated:W,D'";
        QTest::newRow("block of 0") << "block:0" << "block in the mask";
        QTest::newRow("block of a word") << "block:eight" << "whole number";
        QTest::newRow("block with a space") << "block: 8" << "whole number";
        QTest::newRow("random with no seed") << "random:3" << "'random:R,SEED'";
        QTest::newRow("random of 0 keys") << "random:0,1" << "'random:R,SEED'";
        QTest::newRow("random with a negative seed") << "random:3,-1" << "seed from 0 to 4294967295";
        QTest::newRow("random with a seed too large") << "random:3,4294967296" << "seed from 0 to 4294967295";
        QTest::newRow("an unknown pattern") << "strided:4" << "'global:I,J,...;window:W'";
    }
    void refusesMalformedPatterns()
    {
        QFETCH(QString, text);
        QFETCH(QString, says);
        Result<MaskSetting> m = parseMaskSetting(text.toStdString());
        QVERIFY(!m);
        const QString error = QString::fromStdString(m.error());
        QVERIFY2(error.contains(says), m.error().c_str());
        QString withoutEllipses = error;
        withoutEllipses.remove(QStringLiteral("..."));
        QVERIFY2(withoutEllipses.endsWith('.') && withoutEllipses.count('.') == 1, m.error().c_str());  // one sentence
    }

    // Every fixed pattern, for every length from 1 to 40, under the causal mask and without it.
    void keepsThePlainLoopBuildersPairs_data()
    {
        QTest::addColumn<QString>("mask");
        for (const char* mask : {"global:0;window:3", "global:2,17,39;window:1", "global:5,6;window:8", "dilated:3,2", "dilated:1,1",
                                 "dilated:5,4", "dilated:40,1", "block:1", "block:4", "block:7", "block:64"}) {
            QTest::newRow(mask) << QString(mask);
        }
    }
    void keepsThePlainLoopBuildersPairs()
    {
        QFETCH(QString, mask);
        int compared = 0;
        for (MaskKind direction : {MaskKind::Causal, MaskKind::None})
            for (int T = 1; T <= 40; ++T) {
                const AttentionSettings s = settingsOf(mask, direction);
                bool agree = false;
                const Keep got = libraryKeep(s, T, agree);
                QVERIFY2(agree, qPrintable(QString("pairs and rows disagree at T = %1").arg(T)));
                const Keep want = plainLoopKeep(s.sparse, direction == MaskKind::Causal, T);
                QVERIFY2(got == want, qPrintable(QString("T = %1, %2: %3").arg(T).arg(toString(direction).data()).arg(firstDifference(got, want))));
                ++compared;
            }
        QCOMPARE(compared, 80);
    }

    // The pattern worked by hand: 6 tokens, global 0 with a window of 2, and blocks of 3, causal.
    void keepsThePairsWorkedByHand()
    {
        const char* global[6] = {"o.....", "oo....", "ooo...", "o.oo..", "o..oo.", "o...oo"};
        const char* globalTwoSided[6] = {"oooooo", "ooo...", "oooo..", "o.ooo.", "o..ooo", "o...oo"};
        const char* blocks[6] = {"o.....", "oo....", "ooo...", "...o..", "...oo.", "...ooo"};
        const auto check = [](const AttentionSettings& s, const char* const* rows) {
            for (int i = 0; i < 6; ++i)
                for (int j = 0; j < 6; ++j)
                    if (isMaskedPair(s, i, j, 6) != (rows[i][j] != 'o')) return QString("query %1, key %2").arg(i).arg(j);
            return QString();
        };
        QCOMPARE(check(settingsOf("global:0;window:2"), global), QString());
        QCOMPARE(check(settingsOf("global:0;window:2", MaskKind::None), globalTwoSided), QString());
        QCOMPARE(check(settingsOf("block:3"), blocks), QString());
    }

    // Random: itself and min(R, available) other allowed keys, the same draw every time, and under the
    // causal mask the same for the first positions when tokens are appended.
    void randomKeepsWhatItSays()
    {
        for (MaskKind direction : {MaskKind::Causal, MaskKind::None})
            for (int R : {1, 3, 50})
                for (int T = 1; T <= 40; ++T) {
                    const AttentionSettings s = settingsOf(QString("random:%1,7").arg(R), direction);
                    bool agree = false;
                    const Keep got = libraryKeep(s, T, agree);
                    QVERIFY2(agree, qPrintable(QString("pairs and rows disagree, R = %1, T = %2").arg(R).arg(T)));
                    for (int i = 0; i < T; ++i) {
                        const int available = direction == MaskKind::Causal ? i : T - 1;
                        int others = 0;
                        for (int j = 0; j < T; ++j) {
                            if (!got[std::size_t(i)][std::size_t(j)] || j == i) continue;
                            QVERIFY2(direction == MaskKind::None || j < i, qPrintable(QString("query %1 sees later key %2").arg(i).arg(j)));
                            ++others;
                        }
                        QVERIFY2(got[std::size_t(i)][std::size_t(i)], qPrintable(QString("query %1 does not see itself").arg(i)));
                        QVERIFY2(others == std::min(R, available),
                                 qPrintable(QString("query %1 of %2 keeps %3 others, R = %4").arg(i).arg(T).arg(others).arg(R)));
                    }
                    bool again = false;
                    QVERIFY(libraryKeep(s, T, again) == got);
                }
        // Appending tokens leaves the first rows' keys as they were, under the causal mask.
        const AttentionSettings causal = settingsOf("random:4,11");
        bool agree = false;
        const Keep longer = libraryKeep(causal, 40, agree);
        for (int T = 1; T < 40; ++T) {
            const Keep shorter = libraryKeep(causal, T, agree);
            for (int i = 0; i < T; ++i)
                for (int j = 0; j < T; ++j) QCOMPARE(shorter[std::size_t(i)][std::size_t(j)], longer[std::size_t(i)][std::size_t(j)]);
        }
        // Another seed draws other keys.
        QVERIFY(libraryKeep(settingsOf("random:4,12"), 40, agree) != longer);
    }

    // Over 2,000 seeds, query 20 (causal, 3 keys of 20) takes each earlier key 300 times on average; the
    // counts are fixed by the seeds, and a draw that favoured some keys (the first ones, say) would leave
    // some far from 300.
    void randomSpreadsOverEveryKey()
    {
        std::vector<int> taken(20, 0);
        for (int seed = 0; seed < 2000; ++seed) {
            const AttentionSettings s = settingsOf(QString("random:3,%1").arg(seed));
            for (int j = 0; j < 20; ++j) taken[std::size_t(j)] += isMaskedPair(s, 20, j, 21) ? 0 : 1;
        }
        for (int j = 0; j < 20; ++j) QVERIFY2(taken[std::size_t(j)] > 230 && taken[std::size_t(j)] < 370, qPrintable(QString("key %1 taken %2 times").arg(j).arg(taken[std::size_t(j)])));
    }

    // The forward pass under each pattern: the captured head's weights are a plain softmax of its scaled
    // scores over the kept pairs, every head leaves hidden pairs at exactly 0, and the row-block path (past
    // 64 tokens, nothing captured) gives the captured path's weights.
    void forwardPassKeepsThePattern_data()
    {
        QTest::addColumn<QString>("mask");
        QTest::addColumn<int>("direction");
        QTest::addColumn<int>("tokens");
        QTest::newRow("global 0, 70 + window 9, causal, 150 tokens") << "global:0,70;window:9" << int(MaskKind::Causal) << 150;
        QTest::newRow("global 3 + window 4, two-sided, 30 tokens") << "global:3;window:4" << int(MaskKind::None) << 30;
        QTest::newRow("dilated 6 keys 3 apart, causal, 150 tokens") << "dilated:6,3" << int(MaskKind::Causal) << 150;
        QTest::newRow("blocks of 16, causal, 150 tokens") << "block:16" << int(MaskKind::Causal) << 150;
        QTest::newRow("blocks of 5, two-sided, 30 tokens") << "block:5" << int(MaskKind::None) << 30;
        QTest::newRow("5 random keys, causal, 150 tokens") << "random:5,3" << int(MaskKind::Causal) << 150;
        QTest::newRow("5 random keys, two-sided, 30 tokens") << "random:5,3" << int(MaskKind::None) << 30;
    }
    void forwardPassKeepsThePattern()
    {
        QFETCH(QString, mask);
        QFETCH(int, direction);
        QFETCH(int, tokens);
        ModelPtr model = testing::load("random:layers=2,heads=4,d_model=64,seed=3");
        const std::vector<int> ids = someIds(*model, tokens);
        const AttentionSettings s = settingsOf(mask, MaskKind(direction));
        CaptureRequest capture;
        capture.detail = HeadSelection{1, 2};
        Result<ForwardTrace> detailed = forward(*model, ids, s, capture);
        Result<ForwardTrace> fast = forward(*model, ids, s);
        QVERIFY2(detailed && fast, detailed ? (fast ? "" : fast.error().c_str()) : detailed.error().c_str());
        bool agree = false;
        const Keep keep = libraryKeep(s, tokens, agree);
        if (s.sparse.kind != PatternKind::Random) QVERIFY(keep == plainLoopKeep(s.sparse, direction == int(MaskKind::Causal), tokens));
        // 1. The captured head against a plain softmax of its own scaled scores, in double.
        const Matrix& scaled = detailed->detail.scaled;  // (T, T)
        std::vector<std::vector<double>> want(std::size_t(tokens), std::vector<double>(std::size_t(tokens), 0.0));
        for (int i = 0; i < tokens; ++i) {
            double best = -std::numeric_limits<double>::infinity(), sum = 0.0;
            for (int j = 0; j < tokens; ++j)
                if (keep[std::size_t(i)][std::size_t(j)]) best = std::max(best, double(scaled(i, j)));
            for (int j = 0; j < tokens; ++j)
                if (keep[std::size_t(i)][std::size_t(j)]) sum += std::exp(double(scaled(i, j)) - best);
            for (int j = 0; j < tokens; ++j)
                if (keep[std::size_t(i)][std::size_t(j)]) want[std::size_t(i)][std::size_t(j)] = std::exp(double(scaled(i, j)) - best) / sum;
        }
        numericcheck::Worst worst;
        worst.add(detailed->detail.weights, want);
        QVERIFY2(worst.within(1e-5), worst.message("captured weights against the plain softmax").c_str());
        // 2. Hidden pairs exactly 0, kept ones above it, in every head of both passes.
        for (const ForwardTrace* t : {&*detailed, &*fast})
            for (int l = 0; l < 2; ++l)
                for (int h = 0; h < 4; ++h)
                    for (int i = 0; i < tokens; ++i)
                        for (int j = 0; j < tokens; ++j) {
                            const float w = t->weights(l, h)(i, j);
                            QVERIFY2(keep[std::size_t(i)][std::size_t(j)] ? w > 0.0f : w == 0.0f,
                                     qPrintable(QString("layer %1 head %2 (%3, %4) = %5").arg(l).arg(h).arg(i).arg(j).arg(w)));
                        }
        // 3. The fast path's weights are the captured path's.
        numericcheck::Worst paths;
        paths.add(fast->weights(1, 2), detailed->weights(1, 2));
        QVERIFY2(paths.within(1e-5), paths.message("row blocks against the whole matrix").c_str());
    }

    // A keystroke at the end under a pattern reuses the prefix and gives the whole pass's weights.
    void prefixReuseStaysValid_data()
    {
        QTest::addColumn<QString>("mask");
        for (const char* mask : {"global:0,40;window:6", "dilated:4,3", "block:8", "random:4,21"}) QTest::newRow(mask) << QString(mask);
    }
    void prefixReuseStaysValid()
    {
        QFETCH(QString, mask);
        ModelPtr model = testing::load("random:layers=2,heads=4,d_model=64,seed=5");
        const AttentionSettings s = settingsOf(mask);
        const std::vector<int> all = someIds(*model, 110);
        const std::vector<int> first(all.begin(), all.begin() + 100);
        CaptureRequest capture;
        PrefixCache cache;
        Workspace ws;
        ForwardTrace before, after;
        int reused = -1;
        QVERIFY(forwardReusingPrefix(*model, first, s, capture, nullptr, before, cache, ws, &reused).ok());
        QVERIFY(forwardReusingPrefix(*model, all, s, capture, &before, after, cache, ws, &reused).ok());
        QCOMPARE(reused, 100);
        Result<ForwardTrace> whole = forward(*model, all, s);
        QVERIFY(whole);
        numericcheck::Worst worst;
        for (int l = 0; l < 2; ++l)
            for (int h = 0; h < 4; ++h) {
                worst.label("layer %d head %d", l, h);
                worst.add(after.weights(l, h), whole->weights(l, h));
            }
        QVERIFY2(worst.within(1e-5), worst.message("prefix reuse against the whole pass").c_str());
    }

    // The keys a query keeps on average, which the perplexity table sets side by side, counted by hand.
    void countsTheKeptKeys()
    {
        const int T = 64;
        QCOMPARE(meanVisibleKeys(settingsOf("causal"), T), 32.5);                                 // (1 + ... + 64) / 64
        QCOMPARE(meanVisibleKeys(settingsOf("block:8"), T), 4.5);                                 // (1 + ... + 8) / 8
        QCOMPARE(meanVisibleKeys(settingsOf("random:7,1"), T), (1.0 * 64 + (0 + 1 + 2 + 3 + 4 + 5 + 6 + 7.0 * 57)) / 64);
        QCOMPARE(meanVisibleKeys(settingsOf("dilated:4,2"), T), (1 + 1 + 2 + 2 + 3 + 3 + 4.0 * 58) / 64);
        QCOMPARE(meanVisibleKeys(settingsOf("block:8", MaskKind::None), T), 8.0);
    }

    // A pattern runs inside the model's own mask, is labelled a counterfactual, and is checked when built in code.
    void followsTheModelAndIsChecked()
    {
        ModelPtr model = testing::load("random:layers=1,heads=2,d_model=16,seed=2");
        AttentionSettings s = settingsOf("block:4", MaskKind::None);
        patternsFollowTraining(s, model->config);
        QVERIFY(s.mask == MaskKind::Causal);  // the random model is a decoder
        const std::string note = counterfactualNote(model->config, s);
        QVERIFY2(note.find("blocks of 4") != std::string::npos, note.c_str());
        s.sparse.block = 0;
        Result<ForwardTrace> t = forward(*model, someIds(*model, 5), s);
        QVERIFY(!t);
        QVERIFY2(t.error().find("block must be from 1") != std::string::npos, t.error().c_str());
        s = settingsOf("random:2,1");
        s.window = 4;
        t = forward(*model, someIds(*model, 5), s);
        QVERIFY(!t);
        QVERIFY2(t.error().find("takes the place of the window") != std::string::npos, t.error().c_str());
    }

    // Scenes and exports keep the pattern in the CLI's spelling, and refuse a malformed one with its sentence.
    void scenesAndExportsCarryThePattern()
    {
        for (const char* mask : {"global:0,5;window:4", "dilated:4,2", "block:8", "random:3,9"}) {
            Scene scene;
            scene.settings = settingsOf(mask);
            const std::string text = formatScene(scene);
            QVERIFY2(text.find(std::string("\"mask\": \"") + mask + "\"") != std::string::npos, text.c_str());
            Result<Scene> read = parseScene(text, "the test scene");
            QVERIFY2(read, read ? "" : read.error().c_str());
            QVERIFY(read->settings && read->settings->sparse == scene.settings->sparse);
            QCOMPARE(QString::fromStdString(json::settings(*scene.settings)["mask"].get<std::string>()), QString(mask));
        }
        Scene scene;
        scene.settings = settingsOf("block:8");
        std::string bad = formatScene(scene);
        bad.replace(bad.find("block:8"), 7, "block:0");
        Result<Scene> refused = parseScene(bad, "the test scene");
        QVERIFY(!refused);
        QVERIFY2(refused.error().find("block in the mask 'block:0'") != std::string::npos, refused.error().c_str());
    }
};

QTEST_APPLESS_MAIN(TestSparsePattern)
#include "tst_sparsepattern.moc"
