// The window on a Llama-family folder (written by the core tests' tinyllama.h): token chips spelled as the
// vocabulary spells them, the heatmap equal to the core's weights, key/value sharing groups outlined on
// the heads grid with each head's first-token share in its tooltip, the heatmap's title naming the group,
// step by step's keys and values once per group, ablation of a whole group, and the RoPE panel's curves
// equal to the core's numbers.
#include <QTemporaryDir>
#include <QtTest>

#include <qcustomplot.h>

#include "core/analysis/ropeprofile.h"
#include "core/analysis/stats.h"
#include "ui/attention/headgridview.h"
#include "ui/attention/heatmapview.h"
#include "ui/document/document.h"
#include "ui/common/matrixplot.h"
#include "ui/research/interventions/ablationview.h"
#include "ui/steps/blockview.h"
#include "ui/steps/headsview.h"
#include "ui/steps/ropeview.h"
#include "ui/export/renderer.h"
#include "numericcheck.h"
#include "tinyllama.h"
#include "ui/window/mainwindow.h"
#include "ui/window/tokenchips.h"
#include "core/open/openmodel.h"

using namespace attnscope;

class TestLlamaViews : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    std::string m_folder, m_scaled;

private slots:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        m_folder = tinyllama::writeFolder(m_tmp, "tiny-llama", tinyllama::Spec{});
        tinyllama::Spec scaled;
        scaled.ropeScaling = {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0},
                              {"original_max_position_embeddings", 64}};
        scaled.ropeTheta = 500000.0;
        m_scaled = tinyllama::writeFolder(m_tmp, "tiny-llama3", scaled);
    }

    void opensALlamaFolderAndShowsItsNumbers()
    {
        MainWindow w;
        QVERIFY2(w.openModel(QString::fromStdString(m_folder)).ok(), "the tiny Llama folder did not load");
        w.sentenceEdit()->setText(QStringLiteral("the llama hums"));
        QCOMPARE(w.tokenChips()->chipText(0), QStringLiteral("<s>"));
        QCOMPARE(w.tokenChips()->chipText(1), QStringLiteral("▁the"));
        const SnapshotPtr snap = w.document()->snapshot();
        Result<ForwardTrace> core = forward(*w.document()->model(), snap->tokens.ids, w.document()->settings());
        QVERIFY(core);
        w.document()->setFocus({1, 3});
        numericcheck::Worst worst;
        worst.label("heatmap of layer 1 head 3");
        const Matrix& weights = core->weights(1, 3);
        for (int q = 0; q < weights.rows(); ++q)
            for (int k = 0; k < weights.cols(); ++k) worst.add(w.heatmap()->cellValue(q, k), double(weights(q, k)), q, k);
        QVERIFY2(worst.within(1e-6), worst.message().c_str());

        // 4 query heads over 2 key/value heads: groups {0, 1} and {2, 3}, each outlined around its cells.
        HeadGridView* grid = w.grid();
        QCOMPARE(grid->groupSize(), 2);
        const QRect group = grid->groupRect({1, 3});
        QVERIFY(group.contains(grid->cellRect({1, 2})) && group.contains(grid->cellRect({1, 3})));
        QVERIFY(!group.intersects(grid->cellRect({1, 1})));
        QCOMPARE(grid->groupRect({1, 2}), group);
        // The tooltip's attention sink is the core's first-token share of that head.
        for (int l = 0; l < 2; ++l)
            for (int h = 0; h < 4; ++h) {
                const double expected = firstTokenShare(core->weights(l, h));
                QVERIFY(std::abs(grid->firstTokenShare({l, h}) - expected) < 1e-6);
                QVERIFY2(grid->headToolTip({l, h}).contains(QStringLiteral("%1%").arg(100.0 * expected, 0, 'f', 1)),
                         qPrintable(grid->headToolTip({l, h})));
            }
        QVERIFY(grid->headToolTip({0, 1}).contains(QStringLiteral("K/V head 0) with heads 0–1")));
    }

    void gridOfAModelWithoutSharingHasNoGroups()
    {
        MainWindow w;  // the default random model: every head has its own keys and values
        w.sentenceEdit()->setText(QStringLiteral("one two three"));
        QCOMPARE(w.grid()->groupSize(), 1);
        QVERIFY(w.grid()->groupRect({0, 0}).isNull());
        QVERIFY(!w.grid()->headToolTip({0, 0}).contains(QStringLiteral("K/V")));
    }

    void heatmapTitleNamesTheGroup()
    {
        MainWindow w;
        QVERIFY(w.openModel(QString::fromStdString(m_folder)).ok());
        w.sentenceEdit()->setText(QStringLiteral("the llama hums"));
        w.document()->setFocus({1, 3});
        QVERIFY2(w.heatmap()->title().startsWith(QStringLiteral("Layer 1 · query head 3 of KV group 1 (shares keys and values with heads 2–3)")),
                 qPrintable(w.heatmap()->title()));
        MainWindow plain;  // the default model shares nothing: plain head numbers
        plain.sentenceEdit()->setText(QStringLiteral("one two"));
        QVERIFY2(plain.heatmap()->title().startsWith(QStringLiteral("Layer 0 · head 0 · ")), qPrintable(plain.heatmap()->title()));
    }

    // Each key/value head's K and V once, equal to what the focused query head of that group read (the
    // core's own pipeline of that head, run apart), and none for a model that shares nothing.
    void headsViewShowsKeysAndValuesOncePerGroup()
    {
        Document doc;
        doc.setModel(*loadModel(m_folder));
        doc.setText(QStringLiteral("the llama hums and the llama sleeps"));
        HeadsView view(&doc);
        QCOMPARE(view.groupCount(), 2);
        for (const HeadSelection focus : {HeadSelection{0, 1}, HeadSelection{1, 2}}) {
            doc.setFocus(focus);
            CaptureRequest capture;
            capture.detail = focus;
            Result<ForwardTrace> core = forward(*doc.model(), doc.snapshot()->tokens.ids, doc.settings(), capture);
            QVERIFY(core && core->hasDetail);
            const int group = doc.model()->config.kvHeadOf(focus.head);
            QVERIFY(view.groupKeyPlot(group)->shown() == core->detail.k);
            QVERIFY(view.groupValuePlot(group)->shown() == core->detail.v);
            QVERIFY(view.groupKeyPlot(group)->title().contains(QStringLiteral("read by heads %1–%2").arg(2 * group).arg(2 * group + 1)));
            QVERIFY(view.groupKeyPlot(1 - group)->shown() != core->detail.k);
            QVERIFY(view.headPlot(focus.head)->title().contains(QStringLiteral("KV %1").arg(group)));
        }
        doc.setModel(*loadModel("builtin"));
        QCOMPARE(view.groupCount(), 0);
    }

    // A click in the ablation grid takes one query head, or with the group chosen every head of its group;
    // a second click on a fully ablated group brings it back.
    void ablationTakesAWholeGroup()
    {
        Document doc;
        doc.setModel(*loadModel(m_folder));
        doc.setText(QStringLiteral("the llama hums"));
        AblationView view(&doc);
        view.show();
        view.waitForResult();
        QVERIFY(view.unitBox()->isVisibleTo(&view));
        view.unitBox()->setCurrentIndex(1);
        emit view.grid()->headClicked({1, 3});
        QCOMPARE(doc.settings().ablated, (std::vector<AblatedHead>{{1, 2}, {1, 3}}));
        emit view.grid()->headClicked({1, 2});
        QVERIFY(doc.settings().ablated.empty());
        view.unitBox()->setCurrentIndex(0);
        emit view.grid()->headClicked({0, 0});
        QCOMPARE(doc.settings().ablated, (std::vector<AblatedHead>{{0, 0}}));
        doc.toggleAblatedGroup({0, 1});  // half out: the whole group goes out
        QCOMPARE(doc.settings().ablated, (std::vector<AblatedHead>{{0, 0}, {0, 1}}));
        doc.setModel(*loadModel("builtin"));
        view.waitForResult();
        QVERIFY(!view.unitBox()->isVisibleTo(&view));
    }

    void ropeViewShowsCoreNumbers()
    {
        Document doc;
        Result<ModelPtr> model = loadModel(m_scaled);
        QVERIFY2(model, model.error().c_str());
        doc.setModel(*model);
        RopeView view(&doc);
        const RopeProfile expected = ropeProfile((*model)->config, std::min(RopeView::kMaxDistance, (*model)->config.contextLength - 1));
        QVERIFY(view.profile().modelIsRotary && view.profile().scaled);
        auto same = [](QCPGraph* g, const Eigen::VectorXd& v) {
            if (g->data()->size() != int(v.size())) return false;
            for (int i = 0; i < v.size(); ++i)
                if (g->data()->at(i)->key != i || g->data()->at(i)->value != v[i]) return false;
            return true;
        };
        QVERIFY(same(view.frequencyPlot()->graph(0), expected.baseFrequency));
        QVERIFY(same(view.frequencyPlot()->graph(1), expected.frequency));
        QVERIFY(view.frequencyPlot()->graph(0)->visible());  // the unscaled frequencies are shown beside
        QVERIFY(same(view.scorePlot()->graph(0), expected.onesScore));
        QVERIFY(same(view.scorePlot()->graph(1), expected.randomScore));
        QVERIFY(view.caption().contains(QStringLiteral("θ = 500000")));
        // Another model: the panel follows it.
        doc.setModel(*loadModel("builtin"));
        QVERIFY(!view.profile().modelIsRotary);
        QVERIFY(view.caption().contains(QStringLiteral("no rotary positions")));
    }

    // The block names Llama's steps by their names.
    void blockViewNamesRmsNormAndSwiGlu()
    {
        Document doc;
        doc.setModel(*loadModel(m_folder));
        doc.setText(QStringLiteral("the llama hums"));
        BlockView view(&doc);
        QVERIFY2(view.plot("ln2")->title().startsWith(QStringLiteral("RMSNorm")), qPrintable(view.plot("ln2")->title()));
        QVERIFY2(view.plot("ff_hidden")->title().contains(QStringLiteral("SwiGLU")), qPrintable(view.plot("ff_hidden")->title()));
        QCOMPARE(view.plot("ff_hidden")->shown().cols(), Eigen::Index(48));  // d_ff
    }

    void rendersTheRopePanelAndTheGrid()
    {
        Document doc;
        doc.setModel(*loadModel(m_folder));
        doc.setText(QStringLiteral("the llama hums"));
        const QString path = m_tmp.filePath(QStringLiteral("rope.png"));
        RenderOptions options;
        options.outPath = path;
        options.width = 1200;
        options.height = 600;
        const Status drawn = renderView(QStringLiteral("rope"), doc, options);
        QVERIFY2(drawn.ok(), drawn.error().c_str());
        QCOMPARE(QImage(path).size(), QSize(1200, 600));
    }
};

QTEST_MAIN(TestLlamaViews)
#include "tst_llamaviews.moc"
