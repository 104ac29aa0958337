// Long texts' passes (model/headsummary.h): the heads run a block of rows at a time, only the focused head's
// weights are kept, and every head's overview and first-key share are made inside the pass. Compared with
// the whole pass on a GPT-2 layout, Llama (rotary positions, grouped keys), a BERT encoder and T5's
// encoder (relative position bias), under the causal mask, none, a window, sinks plus a window, blocked
// keys and ablation, over lengths that end inside a block: the kept weights and the logits against the
// whole pass's, each overview against a plain loop over the whole pass's weights and mask
// (tests/core/overviewreference.h), each share against a plain double sum. And what it is for: the
// scratch stays (rows, T), the other heads' weights are not kept.
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <random>

#include "core/model/forward.h"
#include "core/model/prefixreuse.h"
#include "loadmodel.h"
#include "numericcheck.h"
#include "overviewreference.h"
#include "tinybert.h"
#include "tinyllama.h"
#include "tinyt5.h"

using namespace attnscope;

namespace {

// The whole pass's picture of one head, by plain loops: its overview (NaN where every pair is hidden) and
// its share of weight on key 0, both of weight × value length when `valueNorm` is given.
struct Expected {
    Matrix overview;
    double share = 0.0;
};

Expected expectedSummary(const Matrix& weights, const Matrix& masked, const RowVector* valueNorm, int cells)
{
    const int T = int(weights.rows());
    Matrix shown = weights;  // (T, T)
    if (valueNorm)
        for (int j = 0; j < T; ++j) shown.col(j) *= (*valueNorm)[j];
    Expected e;
    e.overview = overviewref::largestVisibleInCells(shown, masked, summaryCellSize(T, cells));
    for (float& cell : e.overview.reshaped())
        if (cell < 0.0f) cell = std::numeric_limits<float>::quiet_NaN();
    double first = 0.0, total = 0.0;
    for (int i = 0; i < T; ++i)
        for (int j = 0; j < T; ++j) {
            total += double(shown(i, j));
            if (j == 0) first += double(shown(i, j));
        }
    e.share = total > 0.0 ? first / total : 0.0;
    return e;
}

// Same NaN cells, and the other cells within `tolerance`. A NaN here marks a cell with no weights, so it
// must match a NaN (numericcheck's Worst would fail on it); a NaN on one side only still fails.
bool sameOverview(const Matrix& got, const Matrix& want, double tolerance, QString* why)
{
    if (got.rows() != want.rows() || got.cols() != want.cols()) {
        *why = QString("shape %1x%2, want %3x%4").arg(got.rows()).arg(got.cols()).arg(want.rows()).arg(want.cols());
        return false;
    }
    for (Eigen::Index c = 0; c < got.cols(); ++c)
        for (Eigen::Index r = 0; r < got.rows(); ++r) {
            const float a = got(r, c), b = want(r, c);
            if (std::isnan(a) != std::isnan(b) || (!std::isnan(b) && std::abs(double(a) - double(b)) > tolerance)) {
                *why = QString("cell (%1, %2): %3, want %4").arg(r).arg(c).arg(double(a)).arg(double(b));
                return false;
            }
        }
    return true;
}

} // namespace

class TestHeadSummary : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    std::map<QString, ModelPtr> m_models;

    const Model& model(const QString& name)
    {
        if (auto it = m_models.find(name); it != m_models.end()) return *it->second;
        ModelPtr m;
        if (name == "gpt2") m = testing::load("random:layers=2,heads=4,d_model=64,context=512,seed=5");
        else if (name == "llama") m = testing::load(tinyllama::writeFolder(m_tmp, "llama", tinyllama::Spec{}).c_str());
        else if (name == "llama256") {
            tinyllama::Spec spec;
            spec.context = 512;
            m = testing::load(tinyllama::writeFolder(m_tmp, "llama256", spec).c_str());
        }
        else if (name == "bert") m = testing::load(tinybert::writeFolder(m_tmp, "bert", tinybert::Family::Bert).c_str());
        else if (name == "t5") m = testing::load(tinyt5::writeFolder(m_tmp, "t5").c_str());
        if (!m) qFatal("no model %s", qPrintable(name));
        return *m_models.emplace(name, m).first->second;
    }

    std::vector<int> randomIds(const Model& m, int T, unsigned seed)
    {
        std::mt19937 rng(seed);
        std::vector<int> ids(static_cast<std::size_t>(T));
        for (int& id : ids) id = static_cast<int>(rng() % static_cast<unsigned>(m.config.vocabSize));
        return ids;
    }

private slots:
    void initTestCase() { QVERIFY(m_tmp.isValid()); }

    void matchesTheWholePass_data()
    {
        QTest::addColumn<QString>("modelName");
        QTest::addColumn<QString>("mask");
        QTest::addColumn<int>("tokens");
        QTest::addColumn<int>("cells");
        QTest::addColumn<bool>("valueWeighted");
        QTest::addColumn<bool>("onlyFocused");  // or every head kept, with the focused head's pipeline
        QTest::newRow("gpt2, causal, 150 tokens in 16 cells") << "gpt2" << "causal" << 150 << 16 << false << true;
        QTest::newRow("gpt2, causal, a cell a token") << "gpt2" << "causal" << 150 << 256 << false << true;
        QTest::newRow("gpt2, value-weighted") << "gpt2" << "causal" << 201 << 32 << true << true;
        QTest::newRow("gpt2, sinks and a window") << "gpt2" << "sinks:3,window:20" << 190 << 24 << false << true;
        QTest::newRow("gpt2, no mask") << "gpt2" << "none" << 130 << 10 << true << true;
        QTest::newRow("gpt2, every head kept") << "gpt2" << "window:30" << 140 << 12 << true << false;
        QTest::newRow("llama, causal") << "llama" << "causal" << 100 << 9 << false << true;
        QTest::newRow("llama, window, every head kept") << "llama" << "window:7" << 70 << 8 << false << false;
        QTest::newRow("bert, its own mask") << "bert" << "none" << 40 << 7 << true << true;
        // T5's encoder adds its relative position bias to every block of rows (and to the sinks apart).
        QTest::newRow("t5, relative bias") << "t5" << "none" << 150 << 16 << false << true;
        QTest::newRow("t5, relative bias, sinks and a window") << "t5" << "sinks:2,window:9" << 170 << 20 << true << true;
    }
    void matchesTheWholePass()
    {
        QFETCH(QString, modelName);
        QFETCH(QString, mask);
        QFETCH(int, tokens);
        QFETCH(int, cells);
        QFETCH(bool, valueWeighted);
        QFETCH(bool, onlyFocused);
        const Model& m = model(modelName);
        const int T = std::min(tokens, m.config.contextLength);
        const std::vector<int> ids = randomIds(m, T, 20261205u + unsigned(T));
        AttentionSettings settings = testing::maskSettings(mask);
        settings.blockedKeys = {2, T - 5};
        settings.ablated = {{0, 1}};
        settings.temperature = 0.8;
        const HeadSelection focus{m.config.layers - 1, 1};

        CaptureRequest whole;
        whole.detail = focus;
        whole.nextTokenLogits = true;
        whole.valueNorms = valueWeighted;
        Result<ForwardTrace> want = forward(m, ids, settings, whole);
        QVERIFY2(bool(want), want.error().c_str());

        CaptureRequest summarized = whole;
        summarized.overviewCells = cells;
        summarized.overviewValueWeighted = valueWeighted;
        summarized.onlyDetailWeights = onlyFocused;
        Result<ForwardTrace> got = forward(m, ids, settings, summarized);
        QVERIFY2(bool(got), got.error().c_str());

        QVERIFY(got->hasOverviews);
        QCOMPARE(got->hasDetail, !onlyFocused);
        QCOMPARE(got->keepsEveryHead(), !onlyFocused);
        QCOMPARE(got->rowFullyMasked, want->rowFullyMasked);
        QVERIFY(got->hasLogits);
        const numericcheck::Worst logits = numericcheck::difference(got->nextLogits, want->nextLogits);
        QVERIFY2(logits.within(1e-4), logits.message("logits").c_str());
        if (!onlyFocused) {
            numericcheck::Worst detail;
            detail.matchInfinities();  // masked scores are -inf on both sides
            const std::pair<Matrix HeadDetail::*, const char*> parts[] = {
                {&HeadDetail::scores, "scores"}, {&HeadDetail::masked, "masked"}, {&HeadDetail::weights, "weights"},
                {&HeadDetail::residualOut, "residual out"}};
            for (const auto& [member, name] : parts) {
                detail.label("detail %s", name);
                detail.add(got->detail.*member, want->detail.*member);
            }
            QVERIFY2(detail.within(1e-4), detail.message().c_str());
        }
        const Matrix& masked = want->detail.masked;  // the mask is every head's
        for (int l = 0; l < m.config.layers; ++l)
            for (int h = 0; h < m.config.heads; ++h) {
                const std::size_t i = std::size_t(l * m.config.heads + h);
                const bool kept = !onlyFocused || HeadSelection{l, h} == focus;
                QCOMPARE(got->keepsWeights(l, h), kept);
                if (kept) {
                    numericcheck::Worst d;
                    d.label("head %d.%d's weights", l, h);
                    d.add(got->weights(l, h), want->weights(l, h));
                    QVERIFY2(d.within(1e-5), d.message().c_str());
                } else {
                    QCOMPARE(got->attention[i].size(), Eigen::Index(0));
                }
                const Expected e = expectedSummary(want->weights(l, h), masked,
                                                   valueWeighted ? &want->valueNorm(l, h) : nullptr, cells);
                QString why;
                QVERIFY2(sameOverview(got->overviews[i], e.overview, 1e-5, &why),
                         qPrintable(QString("head %1.%2: %3").arg(l).arg(h).arg(why)));
                QVERIFY2(std::abs(double(got->firstKeyShares[i]) - e.share) < 1e-5,
                         qPrintable(QString("head %1.%2's first-key share %3, want %4").arg(l).arg(h)
                                        .arg(double(got->firstKeyShares[i])).arg(e.share)));
            }
    }

    // Cells of a power of two tokens, the smallest that needs at most so many a side: worked by hand.
    void cellsAreThePowerOfTwoThatFits()
    {
        QCOMPARE(summaryCellSize(0, 256), 1);
        QCOMPARE(summaryCellSize(256, 256), 1);
        QCOMPARE(summaryCellSize(257, 256), 2);
        QCOMPARE(summaryCellSize(1000, 256), 4);
        QCOMPARE(summaryCellSize(1024, 256), 4);
        QCOMPARE(summaryCellSize(1025, 256), 8);
        QCOMPARE(summaryCellSize(8192, 256), 32);
        QCOMPARE(summaryCellSize(150, 16), 16);
        SummaryCells cells;
        cells.reset(1025, 256);  // 129 cells of 8, the last of one token
        QCOMPARE(cells.size, 8);
        QCOMPARE(cells.rows, 129);
        QCOMPARE(cells.cols, 129);
        QCOMPARE(cells.cellOf[1023], 127);
        QCOMPARE(cells.cellOf[1024], 128);
        QCOMPARE(cells.cellStart[128], 1024);
        QCOMPARE(cells.cellStart[129], 1025);
    }

    // The next keystroke's summary keeps the rows of cells before its edit and reads the rest: the same
    // overview and share as a plain loop over the new text's whole weights, after an append, an edit of the
    // last tokens and a deletion, with and without value lengths, under the causal mask and a window.
    void aCarriedSummaryIsTheWholeOne_data()
    {
        QTest::addColumn<QString>("mask");
        QTest::addColumn<int>("keep");   // tokens the two texts share
        QTest::addColumn<int>("tokens");  // the new text's
        QTest::addColumn<bool>("valueWeighted");
        QTest::newRow("append 3") << "causal" << 300 << 303 << false;
        QTest::newRow("append, value-weighted") << "causal" << 300 << 311 << true;
        QTest::newRow("last two tokens changed") << "causal" << 298 << 300 << false;
        QTest::newRow("ten deleted") << "causal" << 290 << 290 << true;
        QTest::newRow("sinks and a window") << "sinks:2,window:20" << 297 << 305 << false;
    }
    void aCarriedSummaryIsTheWholeOne()
    {
        QFETCH(QString, mask);
        QFETCH(int, keep);
        QFETCH(int, tokens);
        QFETCH(bool, valueWeighted);
        const Model& m = model("gpt2");
        const std::vector<int> before = randomIds(m, 300, 41u);
        std::vector<int> after(before.begin(), before.begin() + keep);
        for (int id : randomIds(m, tokens - keep, 43u)) after.push_back(id);
        const AttentionSettings settings = testing::maskSettings(mask);
        CaptureRequest c;
        c.detail = HeadSelection{0, 0};
        c.valueNorms = valueWeighted;
        Result<ForwardTrace> a = forward(m, before, settings, c);
        Result<ForwardTrace> b = forward(m, after, settings, c);
        QVERIFY(bool(a) && bool(b));
        const int cells = 64;  // 300 tokens and 290 to 311: cells of 8
        SummaryCells oldCells, newCells;
        oldCells.reset(300, cells);
        newCells.reset(tokens, cells);
        QCOMPARE(oldCells.size, 8);
        QCOMPARE(newCells.size, 8);
        const int keepRows = keep / 8;
        for (int l = 0; l < m.config.layers; ++l)
            for (int h = 0; h < m.config.heads; ++h) {
                HeadSummary old, carried;
                startSummary(oldCells, old);
                summarizeRows(a->detail.masked, a->weights(l, h), 0, oldCells, valueWeighted ? &a->valueNorm(l, h) : nullptr, old);
                finishSummary(old);
                carrySummary(old, newCells, keepRows, carried);
                const Eigen::Index r0 = Eigen::Index(keepRows) * 8;
                summarizeRows(b->detail.masked.bottomRows(tokens - r0), b->weights(l, h).bottomRows(tokens - r0), r0, newCells,
                              valueWeighted ? &b->valueNorm(l, h) : nullptr, carried);
                finishSummary(carried);
                const Expected e = expectedSummary(b->weights(l, h), b->detail.masked, valueWeighted ? &b->valueNorm(l, h) : nullptr, cells);
                QString why;
                QVERIFY2(sameOverview(carried.overview, e.overview, 1e-5, &why), qPrintable(QString("head %1.%2: %3").arg(l).arg(h).arg(why)));
                QVERIFY2(std::abs(double(carried.firstKeyShare()) - e.share) < 1e-5,
                         qPrintable(QString("head %1.%2's share %3, want %4").arg(l).arg(h).arg(double(carried.firstKeyShare())).arg(e.share)));
            }
    }

    // The point of it: no (T, T) scratch, no weights of heads off screen, and a second pass on the same
    // workspace gives the same numbers (the overviews' storage is reused, not added to).
    void keepsOneHeadAndSmallScratch()
    {
        const Model& m = model("gpt2");
        const int T = 300;
        const std::vector<int> ids = randomIds(m, T, 7u);
        CaptureRequest c;
        c.detail = HeadSelection{0, 2};
        c.overviewCells = 64;
        c.onlyDetailWeights = true;
        Workspace ws;
        ForwardTrace a, b;
        QVERIFY(forward(m, ids, AttentionSettings{}, c, a, ws).ok());
        for (const Workspace::PerThread& p : ws.perThread) {
            QVERIFY(p.scores.rows() <= kSummaryBlockRows);
            QVERIFY(p.probs.rows() <= kSummaryBlockRows);
        }
        Eigen::Index keptFloats = 0;
        for (const Matrix& w : a.attention) keptFloats += w.size();
        QCOMPARE(keptFloats, Eigen::Index(T) * T);
        QVERIFY(forward(m, ids, AttentionSettings{}, c, b, ws).ok());
        QVERIFY(forward(m, ids, AttentionSettings{}, c, b, ws).ok());
        for (std::size_t i = 0; i < a.overviews.size(); ++i) {
            QString why;
            QVERIFY2(sameOverview(b.overviews[i], a.overviews[i], 0.0, &why), qPrintable(why));
            QCOMPARE(b.firstKeyShares[i], a.firstKeyShares[i]);
        }
    }

    // Overviews made in the pass cannot be carried to a longer text, so such passes are whole.
    // A keystroke on a long text reuses whole rows of cells (model/prefixreuse.h): after each edit the
    // reused pass's overviews and shares equal the plain loops over a whole pass's weights, its kept weights
    // and logits that pass's; the prefix reused is a whole number of cells, none when the cells grew. Kept
    // aside, three edits that keep the length hand the last one the trace of the first, which has zeros above
    // its diagonals (as the window's Document hands traces back) and another text in rows it must carry.
    void reusesWholeRowsOfCells_data()
    {
        QTest::addColumn<QString>("modelName");
        QTest::addColumn<QString>("mask");
        QTest::addColumn<bool>("valueWeighted");
        QTest::addColumn<bool>("onlyFocused");
        QTest::addColumn<bool>("inPlace");  // the pass overwrites the trace it reuses (the CLI's benchmark)
        QTest::newRow("gpt2, causal") << "gpt2" << "causal" << false << true << false;
        QTest::newRow("gpt2, value-weighted, in place") << "gpt2" << "causal" << true << true << true;
        QTest::newRow("gpt2, sinks and a window") << "gpt2" << "sinks:3,window:20" << false << true << false;
        QTest::newRow("gpt2, every head kept") << "gpt2" << "window:30" << true << false << false;
        QTest::newRow("llama, causal") << "llama256" << "causal" << false << true << false;
        QTest::newRow("llama, window, in place") << "llama256" << "window:17" << true << true << true;
    }
    void reusesWholeRowsOfCells()
    {
        QFETCH(QString, modelName);
        QFETCH(QString, mask);
        QFETCH(bool, valueWeighted);
        QFETCH(bool, onlyFocused);
        QFETCH(bool, inPlace);
        const Model& m = model(modelName);
        const int cells = 16;  // 129 to 256 tokens: cells of 16; 257 to 512: of 32
        const AttentionSettings settings = testing::maskSettings(mask);
        const HeadSelection focus{m.config.layers - 1, 1};
        CaptureRequest whole;
        whole.detail = focus;
        whole.nextTokenLogits = true;
        whole.valueNorms = valueWeighted;
        CaptureRequest c = whole;
        c.overviewCells = cells;
        c.overviewValueWeighted = valueWeighted;
        c.onlyDetailWeights = onlyFocused;

        std::vector<int> ids = randomIds(m, 140, 7u);
        std::mt19937 rng(99u);
        const auto randomId = [&] { return static_cast<int>(rng() % static_cast<unsigned>(m.config.vocabSize)); };
        PrefixCache cache;
        Workspace ws;
        ForwardTrace traces[2];
        int last = 0, reused = -1;
        QVERIFY(forwardReusingPrefix(m, ids, settings, c, nullptr, traces[0], cache, ws, &reused).ok());
        QCOMPARE(reused, 0);
        struct Edit {
            const char* what;
            int drop, add;   // tokens deleted at the end, then tokens typed
            int reused;      // what the pass must reuse: the common prefix rounded down to cells of 16
        };
        const Edit edits[] = {
            {"one typed", 0, 1, 128},        {"one more", 0, 1, 128},        {"five typed", 0, 5, 128},
            {"three deleted", 3, 0, 128},    {"an earlier change", 30, 30, 112}, {"last one changed", 1, 1, 128},
            {"a paste past a block", 0, 70, 144},
            {"past 256 tokens: cells of 32", 0, 50, 0}, {"back under: cells of 16", 20, 0, 0}, {"typed after", 0, 2, 240},
        };
        for (const Edit& e : edits) {
            const int kept = int(ids.size()) - e.drop;
            ids.resize(std::size_t(kept));
            for (int k = 0; k < e.add; ++k) ids.push_back(randomId());
            const int next = inPlace ? last : 1 - last;
            QVERIFY(forwardReusingPrefix(m, ids, settings, c, &traces[last], traces[next], cache, ws, &reused).ok());
            last = next;
            const int T = int(ids.size());
            QVERIFY2(reused == e.reused, qPrintable(QString("%1: reused %2, want %3").arg(e.what).arg(reused).arg(e.reused)));
            Result<ForwardTrace> fresh = forward(m, ids, settings, whole);
            QVERIFY2(bool(fresh), fresh.error().c_str());
            const ForwardTrace& got = traces[last];
            QVERIFY(got.hasOverviews && got.hasLogits);
            QCOMPARE(got.tokens, T);
            const numericcheck::Worst logits = numericcheck::difference(got.nextLogits, fresh->nextLogits);
            QVERIFY2(logits.within(1e-4), qPrintable(QString("%1: %2").arg(e.what).arg(QString::fromStdString(logits.message("logits")))));
            for (int l = 0; l < m.config.layers; ++l)
                for (int h = 0; h < m.config.heads; ++h) {
                    const std::size_t i = std::size_t(l * m.config.heads + h);
                    QCOMPARE(got.keepsWeights(l, h), (!onlyFocused || HeadSelection{l, h} == focus));
                    if (got.keepsWeights(l, h)) {
                        numericcheck::Worst d;
                        d.label("head %d.%d's weights", l, h);
                        d.add(got.weights(l, h), fresh->weights(l, h));
                        QVERIFY2(d.within(1e-4), qPrintable(QString("%1: %2").arg(e.what).arg(QString::fromStdString(d.message()))));
                    }
                    const Expected x = expectedSummary(fresh->weights(l, h), fresh->detail.masked,
                                                       valueWeighted ? &fresh->valueNorm(l, h) : nullptr, cells);
                    QString why;
                    QVERIFY2(sameOverview(got.overviews[i], x.overview, 1e-4, &why),
                             qPrintable(QString("%1: head %2.%3: %4").arg(e.what).arg(l).arg(h).arg(why)));
                    QVERIFY2(std::abs(double(got.firstKeyShares[i]) - x.share) < 1e-4,
                             qPrintable(QString("%1: head %2.%3's share %4, want %5").arg(e.what).arg(l).arg(h)
                                            .arg(double(got.firstKeyShares[i])).arg(x.share)));
                }
        }
    }

    void refusesOneHeadWithoutOverviews()
    {
        const Model& m = model("gpt2");
        CaptureRequest c;
        c.detail = HeadSelection{0, 0};
        c.onlyDetailWeights = true;
        Result<ForwardTrace> t = forward(m, randomIds(m, 10, 1u), AttentionSettings{}, c);
        QVERIFY(!t);
        QVERIFY(QString::fromStdString(t.error()).contains("overview"));
    }
};

QTEST_APPLESS_MAIN(TestHeadSummary)
#include "tst_headsummary.moc"
