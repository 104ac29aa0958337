// The window on BERT-family encoders: a folder opens without a mask, says it is an encoder trained
// bidirectionally, labels the causal toggle as a counterfactual, lists the fillers of every [MASK] with
// exactly the core's numbers (greyed with the reason when the checkpoint has no head), and every view
// the renderer knows draws an encoder.
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QCheckBox>
#include <QLineEdit>
#include <QTemporaryDir>
#include <QtTest>
#include <qcustomplot.h>

#include "attention/nexttokenview.h"
#include "common/document.h"
#include "model/maskedlm.h"
#include "steps/blockview.h"
#include "tinybert.h"
#include "window/controlpanel.h"
#include "window/mainwindow.h"
#include "window/renderer.h"
#include "waits.h"

using namespace attnscope;

class TestBertWindow : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    QString m_bert, m_headless;

private slots:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        m_bert = QString::fromStdString(tinybert::writeFolder(m_tmp, "tiny-bert", tinybert::Family::Bert));
        const int V = int(tinybert::vocabulary().size());
        m_headless = QString::fromStdString(tinybert::writeFolder(
            m_tmp, "headless", tinybert::Family::DistilBert, tinybert::tensors(tinybert::Family::DistilBert, V, 3, false)));
    }

    void opensAsAnUnmaskedEncoder()
    {
        MainWindow w;
        QVERIFY(w.document()->settings().mask == MaskKind::Causal);  // the default model is a decoder
        const Status s = w.openModel(m_bert);
        QVERIFY2(s.ok(), s.error.c_str());
        QVERIFY(w.document()->settings().mask == MaskKind::None);
        QVERIFY(!w.controls()->causalBox()->isChecked());
        QVERIFY2(w.controls()->maskNote()->text().contains(QStringLiteral("bidirectional")), qPrintable(w.controls()->maskNote()->text()));
        w.sentenceEdit()->setText(QStringLiteral("the cat sat"));
        w.document()->waitForIdle();
        QTRY_VERIFY_WITH_TIMEOUT(w.statusLabel()->text().contains(QStringLiteral("bert, encoder")), testing::kWorkTimeoutMs);
        // Back to a decoder: causal again.
        QVERIFY(w.openModel(QStringLiteral("builtin")).ok());
        QVERIFY(w.document()->settings().mask == MaskKind::Causal);
        QVERIFY(w.controls()->maskNote()->text().contains(QStringLiteral("causal")));
    }

    void causalToggleIsLabelledCounterfactual()
    {
        MainWindow w;
        QVERIFY(w.openModel(m_bert).ok());
        w.controls()->causalBox()->setChecked(true);
        QVERIFY(w.document()->settings().mask == MaskKind::Causal);
        const QString note = w.controls()->maskNote()->text();
        QVERIFY2(note.startsWith(QStringLiteral("Counterfactual")) && note.contains(QStringLiteral("without a mask")), qPrintable(note));
        w.controls()->causalBox()->setChecked(false);
        QVERIFY(!w.controls()->maskNote()->text().contains(QStringLiteral("ounterfactual")));
    }

    void masksShowTheCoresFillers()
    {
        MainWindow w;
        QVERIFY(w.openModel(m_bert).ok());
        w.sentenceEdit()->setText(QStringLiteral("the [MASK] sat on the [MASK]."));
        w.document()->waitForIdle();
        QCoreApplication::processEvents();
        const NextTokenView* view = w.nextTokens();
        QVERIFY(view->showsMaskedTokens());
        QVERIFY(view->isEnabled());
        QCOMPARE(view->shownMasked().size(), std::size_t(2));
        // The numbers on screen are the core's, computed here again from a fresh forward pass.
        const Model& m = *w.document()->model();
        const std::vector<int> ids = m.tokenizer->encode("the [MASK] sat on the [MASK].")->ids;
        CaptureRequest capture;
        capture.finalHidden = true;
        AttentionSettings settings;
        settings.mask = MaskKind::None;
        Result<ForwardTrace> trace = forward(m, ids, settings, capture);
        QVERIFY(trace);
        const std::vector<MaskedPrediction> core = predictMasked(m, *trace, ids, Snapshot::kNextTokens);
        QCOMPARE(core.size(), std::size_t(2));
        for (std::size_t i = 0; i < core.size(); ++i) {
            QCOMPARE(view->shownMasked()[i].position, core[i].position);
            QCOMPARE(view->shownMasked()[i].top.size(), std::size_t(Snapshot::kNextTokens));
            for (std::size_t k = 0; k < core[i].top.size(); ++k) {
                QCOMPARE(view->shownMasked()[i].top[k].id, core[i].top[k].id);
                QCOMPARE(view->shownMasked()[i].top[k].p, core[i].top[k].p);
            }
        }
        QVERIFY(view->shown().empty());  // no next-token list for an encoder
        // Painting a list of masks must not fail at any width.
        QWidget* widget = const_cast<NextTokenView*>(view);
        for (int width : {120, 360, 900}) {
            widget->resize(width, 200);
            QVERIFY(!widget->grab().isNull());
        }
    }

    void noHeadGreysTheListWithTheReason()
    {
        MainWindow w;
        QVERIFY(w.openModel(m_headless).ok());
        w.sentenceEdit()->setText(QStringLiteral("the [MASK] sat"));
        w.document()->waitForIdle();
        QCoreApplication::processEvents();
        const NextTokenView* view = w.nextTokens();
        QVERIFY(view->showsMaskedTokens());
        QVERIFY(!view->isEnabled());
        QVERIFY2(view->unavailableReason().contains(QStringLiteral("no masked-language-model head")), qPrintable(view->unavailableReason()));
        QCOMPARE(view->toolTip(), view->unavailableReason());
        QVERIFY(view->shownMasked().empty());
        QVERIFY(w.errorLabel()->isHidden());  // attention itself still works
    }

    void blockViewNamesPostLnSteps()
    {
        // BERT normalises after each residual addition: the block view must not call that a plain residual.
        Document doc;
        doc.setModel(*loadModel(m_bert.toStdString()));
        doc.setText(QStringLiteral("the cat sat"));
        doc.waitForIdle();
        BlockView view(&doc);
        QCOMPARE(view.normsPlot()->graph(2)->name(), QStringLiteral("= layer norm(in + attention)"));
        QCOMPARE(view.normsPlot()->graph(4)->name(), QStringLiteral("= layer norm(mid + feed-forward)"));
        const HeadDetail& d = doc.snapshot()->trace.detail;
        QVERIFY(d.ln2 == d.residualMid);  // post-LN: the feed-forward reads the normalised residual itself
    }

    void everyViewDrawsAnEncoder()
    {
        Document doc;
        Result<ModelPtr> model = loadModel(m_bert.toStdString());
        QVERIFY2(model, model.error().c_str());
        doc.setModel(*model);
        doc.setText(QStringLiteral("The quick brown fox [MASK] over the lazy dog."));
        doc.setFocus({1, 1});
        // The ablation view compares against ablated heads, so knock one out (as `render --ablate` does).
        attnscope::AttentionSettings settings = doc.settings();
        settings.ablated = {{0, 1}};
        doc.setSettings(settings);
        // Four measurements do not exist for an encoder, and say so instead of drawing: head importance is a
        // change in next-token loss, direct logit attribution explains a next-token logit, generation writes
        // next tokens, and activation patching compares next-token logits.
        const QMap<QString, std::string> refused{{QStringLiteral("importance"), "not trained to predict"},
                                                 {QStringLiteral("attribution"), "no next-token logits"},
                                                 {QStringLiteral("generation"), "needs a decoder"},
                                                 {QStringLiteral("patching"), "this model is an encoder"}};
        for (const QString& view : renderViewNames()) {
            RenderOptions options;
            options.outPath = m_tmp.filePath(view + QStringLiteral(".png"));
            options.width = 640;
            options.height = 480;
            const Status status = renderView(view, doc, options);
            if (refused.contains(view)) {
                // A sentence saying why, as the window's view shows it, and no picture.
                QVERIFY2(!status.ok() && checkRenderRequest(view, options).ok() && status.error.find(refused.value(view)) != std::string::npos,
                         qPrintable(view + QStringLiteral(": ") + QString::fromStdString(status.error)));
                QVERIFY(!QFile::exists(options.outPath));
                continue;
            }
            QVERIFY2(status.ok(), qPrintable(view + QStringLiteral(": ") + QString::fromStdString(status.error)));
            const QImage image(options.outPath);
            QCOMPARE(image.size(), QSize(640, 480));
        }
    }
};

QTEST_MAIN(TestBertWindow)
#include "tst_bertwindow.moc"
