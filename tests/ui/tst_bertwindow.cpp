// The window on BERT-family encoders: a folder opens without a mask, says it is an encoder trained
// bidirectionally, labels the causal toggle as a counterfactual, lists the fillers of every [MASK] with
// exactly the core's numbers (greyed with the reason when the checkpoint has no head), and every view
// the renderer knows draws an encoder. Then BART, an encoder with a decoder: the Cross-attention view shows
// the decoder's own sublayer, the Generation view translates the sentence with the core's alignment built
// row by row, and every view draws. Then T5: the √dₖ box says the factor is folded into W_Q, and every view
// draws a model whose positions are relative buckets.
#include <QDir>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QCheckBox>
#include <QLineEdit>
#include <QTemporaryDir>
#include <QtTest>
#include <qcustomplot.h>

#include "ui/attention/nexttokenview.h"
#include "ui/document/document.h"
#include "ui/attention/headgridview.h"
#include "ui/common/matrixplot.h"
#include "core/model/maskedlm.h"
#include "ui/steps/blockview.h"
#include "core/model/encoderdecoder.h"
#include "core/model/generate.h"
#include "ui/research/generationview.h"
#include "ui/steps/crossattentionview.h"
#include "ui/steps/pipelineview.h"
#include "ui/steps/positionalview.h"
#include "numericcheck.h"
#include "tinybart.h"
#include "tinybert.h"
#include "tinyt5.h"
#include "ui/window/controlpanel.h"
#include "ui/window/mainwindow.h"
#include "ui/export/renderer.h"
#include "waits.h"
#include "core/open/openmodel.h"

using namespace attnscope;

class TestBertWindow : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    QString m_bert, m_headless, m_bart;

    ModelPtr bart() const
    {
        Result<ModelPtr> model = loadModel(m_bart.toStdString());
        return model ? *model : nullptr;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        m_bert = QString::fromStdString(tinybert::writeFolder(m_tmp, "tiny-bert", tinybert::Family::Bert));
        const int V = int(tinybert::vocabulary().size());
        m_headless = QString::fromStdString(tinybert::writeFolder(
            m_tmp, "headless", tinybert::Family::DistilBert, tinybert::tensors(tinybert::Family::DistilBert, V, 3, false)));
        m_bart = QString::fromStdString(tinybart::writeFolder(m_tmp, "tiny-bart"));
        // An empty Hugging Face cache, whatever this machine's holds: Research > Checkpoints then has no series
        // and refuses with its sentence (tst_checkpoints draws it from a cache of its own).
        QVERIFY(QDir(m_tmp.path()).mkpath(QStringLiteral("empty-hf-cache")));
        qputenv("HF_HUB_CACHE", m_tmp.filePath(QStringLiteral("empty-hf-cache")).toUtf8());
        qputenv("HF_HUB_OFFLINE", "1");
    }

    void opensAsAnUnmaskedEncoder()
    {
        MainWindow w;
        QVERIFY(w.document()->settings().mask == MaskKind::Causal);  // the default model is a decoder
        const Status s = w.openModel(m_bert);
        QVERIFY2(s.ok(), s.error().c_str());
        QVERIFY(w.document()->settings().mask == MaskKind::None);
        QVERIFY(!w.controls()->causalBox()->isChecked());
        QVERIFY2(w.controls()->maskNote()->text().contains(QStringLiteral("bidirectional")), qPrintable(w.controls()->maskNote()->text()));
        // The model named as it was opened (its folder), not the layout its weights follow.
        QVERIFY2(w.controls()->maskNote()->text().startsWith(QStringLiteral("Tiny-bert was trained")), qPrintable(w.controls()->maskNote()->text()));
        w.sentenceEdit()->setText(QStringLiteral("the cat sat"));
        w.document()->waitForIdle();
        QTRY_VERIFY_WITH_TIMEOUT(w.statusLabel()->text().contains(QStringLiteral("bert, encoder")), testing::kWorkTimeoutMs);
        // Back to a decoder: causal again.
        QVERIFY(w.openModel(QStringLiteral("builtin")).ok());
        QVERIFY(w.document()->settings().mask == MaskKind::Causal);
        QCOMPARE(w.controls()->maskNote()->text(), QStringLiteral("AttnScope's built-in model was trained with the causal mask."));
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
                                                 {QStringLiteral("patching"), "this model is an encoder"},
                                                 {QStringLiteral("checkpoints"), "no repository with two or more revisions"}};
        for (const QString& view : renderViewNames()) {
            RenderOptions options;
            options.outPath = m_tmp.filePath(view + QStringLiteral(".png"));
            options.width = 640;
            options.height = 480;
            const Status status = renderView(view, doc, options);
            if (refused.contains(view)) {
                // A sentence saying why, as the window's view shows it, and no picture.
                QVERIFY2(!status.ok() && checkRenderRequest(view, options).ok() && status.error().find(refused.value(view)) != std::string::npos,
                         qPrintable(view + QStringLiteral(": ") + QString::fromStdString(status.error())));
                QVERIFY(!QFile::exists(options.outPath));
                continue;
            }
            QVERIFY2(status.ok(), qPrintable(view + QStringLiteral(": ") + QString::fromStdString(status.error())));
            const QImage image(options.outPath);
            QCOMPARE(image.size(), QSize(640, 480));
        }
    }

    // BART's Cross-attention view is the decoder's own sublayer: the source (the window's sentence until one is
    // typed) through encodeSource, the target after the start token (the model's own greedy answer until one is
    // typed), the focused layer as a decoder layer, the decoder under its causal mask, and the weights exactly
    // forwardEncoderDecoder's; the grid below holds every decoder head of either kind.
    void bartCrossAttentionViewIsTheDecoders()
    {
        Document doc;
        doc.setModel(bart());
        doc.setText(QStringLiteral("the cat sat on the mat"));
        doc.setFocus({1, 1});
        CrossAttentionView view(&doc);
        view.resize(800, 600);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QTRY_VERIFY(view.hasResult());
        QVERIFY(view.result().real);
        QCOMPARE(view.source(), doc.text());
        const Model& m = *doc.model();
        AttentionSettings causal = doc.settings();
        causal.mask = MaskKind::Causal;
        const TokenizedText source = *encodeSource(m, "the cat sat on the mat");
        const TokenizedText answer = *greedyTarget(m, source.ids, CrossAttentionView::kMaxAnswerTokens, causal);
        QCOMPARE(view.targetTokens().ids, answer.ids);
        QCOMPARE(view.sourceTokens().ids, source.ids);
        EncoderDecoderTrace answered;
        QVERIFY(forwardEncoderDecoder(m, source.ids, answer.ids, causal, false, answered).ok());
        const numericcheck::Worst shownAnswer = numericcheck::difference(view.weightsPlot()->shown(), answered.cross(1, 1));
        QVERIFY2(shownAnswer.within(1e-6f), shownAnswer.message("drawn cross-attention").c_str());
        QCOMPARE(view.grid()->layers(), answered.decoderLayers);
        // An export of the view (render's options) keeps nothing: both sentences follow the window.
        QVERIFY(view.sourceToKeep().isEmpty() && view.targetToKeep().isEmpty());
        QCOMPARE(view.grid()->headImage({0, 1}).height(), int(answer.ids.size()));
        QCOMPARE(view.grid()->headImage({0, 1}).width(), int(source.ids.size()));

        // A typed target and a typed source replace the answer and the sentence.
        view.setSource(QStringLiteral("the cat sat on the mat today"));
        view.setTarget(QStringLiteral("the cat sat"));
        QTRY_COMPARE(view.targetTokens().ids, encodeTarget(m, "the cat sat")->ids);
        QCOMPARE(view.sourceToKeep(), QStringLiteral("the cat sat on the mat today"));
        QCOMPARE(view.targetToKeep(), QStringLiteral("the cat sat"));
        const TokenizedText typedSource = *encodeSource(m, "the cat sat on the mat today"), target = *encodeTarget(m, "the cat sat");
        EncoderDecoderTrace trace;
        QVERIFY(forwardEncoderDecoder(m, typedSource.ids, target.ids, causal, false, trace).ok());
        const Matrix expected = trace.cross(1, 1);
        QCOMPARE(view.result().weights.rows(), expected.rows());
        QCOMPARE(view.result().weights.cols(), expected.cols());
        const numericcheck::Worst typed = numericcheck::difference(view.result().weights, expected),
                                  typedShown = numericcheck::difference(view.weightsPlot()->shown(), expected);
        QVERIFY2(typed.within(1e-6f), typed.message("cross-attention").c_str());
        QVERIFY2(typedShown.within(1e-6f), typedShown.message("drawn cross-attention").c_str());
        doc.setText(QStringLiteral("something else"));  // a typed source no longer follows the sentence
        QTest::qWait(50);
        QCOMPARE(view.source(), QStringLiteral("the cat sat on the mat today"));
        // The grid's other kind: the decoder's self-attention, target × target.
        view.setGridKind(1);
        QCOMPARE(view.grid()->headImage({1, 0}).width(), int(target.ids.size()));
        // It follows the focus.
        doc.setFocus({0, 0});
        QTRY_VERIFY2(numericcheck::difference(view.result().weights, trace.cross(0, 0)).within(1e-6f),
                     numericcheck::difference(view.result().weights, trace.cross(0, 0)).message("cross-attention").c_str());
        // The decoder's own mask box: unticked, its self-attention sees the whole target (a counterfactual),
        // which changes what the later layers' cross-attention reads.
        AttentionSettings unmasked = causal;
        unmasked.mask = MaskKind::None;
        EncoderDecoderTrace open;
        QVERIFY(forwardEncoderDecoder(m, typedSource.ids, target.ids, unmasked, false, open).ok());
        QVERIFY(numericcheck::difference(open.cross(1, 1), trace.cross(1, 1)).exceeds(1e-4f));
        doc.setFocus({1, 1});
        view.setDecoderCausal(false);
        QTRY_VERIFY2(numericcheck::difference(view.result().weights, open.cross(1, 1)).within(1e-6f),
                     numericcheck::difference(view.result().weights, open.cross(1, 1)).message("cross-attention").c_str());
        QVERIFY(view.weightsPlot()->title().contains(QStringLiteral("counterfactual")));
    }

    // A decoder deeper (3 layers against 2) or wider (4 heads against 2) than its encoder: the view's grid
    // reaches every decoder head, though the window's focus stops at the encoder's; a focus chosen elsewhere
    // takes over again.
    void bartDecoderHeadsPastTheEncoders()
    {
        tinybart::Options wide;
        wide.decoderHeads = 4;
        Document doc;
        doc.setModel(*loadModel(tinybart::writeFolder(m_tmp, "tiny-bart-wide-decoder", wide)));
        doc.setText(QStringLiteral("the cat sat on the mat"));
        CrossAttentionView view(&doc);
        view.setTarget(QStringLiteral("the cat sat"));
        view.waitForResult();
        QTRY_VERIFY(view.hasResult());
        QCOMPARE(view.grid()->layers(), tinybart::kDecL);
        const Model& m = *doc.model();
        AttentionSettings causal = doc.settings();
        causal.mask = MaskKind::Causal;
        EncoderDecoderTrace trace;
        QVERIFY(forwardEncoderDecoder(m, encodeSource(m, "the cat sat on the mat")->ids, encodeTarget(m, "the cat sat")->ids, causal,
                                      false, trace)
                    .ok());
        for (const HeadSelection head : {HeadSelection{2, 3}, HeadSelection{2, 0}, HeadSelection{0, 3}}) {
            emit view.grid()->headClicked(head);
            view.waitForResult();
            QTRY_COMPARE(view.result().selection, head);
            const numericcheck::Worst shown = numericcheck::difference(view.result().weights, trace.cross(head.layer, head.head));
            QVERIFY2(shown.within(1e-6f), shown.message("cross-attention").c_str());
        }
        QCOMPARE(doc.focus(), (HeadSelection{0, 1}));  // the encoder's nearest head
        doc.setFocus({1, 0});
        view.waitForResult();
        QTRY_COMPARE(view.result().selection, (HeadSelection{1, 0}));
    }

    // The Generation view translates the sentence: each written token's cross-attention row over the source
    // (the core's generateTokens under the decoder's causal mask), shown up to the step and not beyond.
    void bartGenerationBuildsTheAlignment()
    {
        Document doc;
        doc.setModel(bart());
        doc.setText(QStringLiteral("the cat sat on the mat"));
        doc.setFocus({1, 0});
        GenerationView view(&doc);
        view.resize(900, 700);
        view.countBox()->setValue(4);
        view.waitForResult();
        AttentionSettings s = doc.settings();
        s.mask = MaskKind::Causal;
        const TokenGeneration core = *generateTokens(*doc.model(), ids(doc), 4, s);
        QCOMPARE(view.stepSlider()->maximum(), core.generated());
        const int S = int(core.source.size()), H = core.heads;
        const auto check = [&](int step) {
            const Matrix shown = view.timeline()->shown();
            QCOMPARE(shown.rows(), Eigen::Index(core.generated()));
            QCOMPARE(shown.cols(), Eigen::Index(S));
            for (int i = 0; i < core.generated(); ++i)
                for (int j = 0; j < S; ++j) {
                    if (i >= step) {
                        QVERIFY(std::isinf(shown(i, j)));  // not written yet
                        continue;
                    }
                    QVERIFY(std::abs(shown(i, j) - core.steps[std::size_t(i)].attention[std::size_t(1 * H + 0)][j]) < 1e-6f);
                }
            QCOMPARE(view.keptBars()->data()->size(), S);
            for (int j = 0; j < S; ++j)
                QVERIFY(std::abs(view.keptBars()->data()->at(j)->value - core.steps[std::size_t(step - 1)].attention[std::size_t(H)][j]) < 1e-6);
        };
        check(core.generated());
        view.setStep(2);
        check(2);
        QVERIFY(view.textLabel()->text().contains(QStringLiteral("candidates")));
    }

    void everyViewDrawsBart()
    {
        Document doc;
        doc.setModel(bart());
        doc.setText(QStringLiteral("the cat sat on the mat"));
        renderEveryEncoderDecoderView(doc, QStringLiteral("bart-"));
    }

    void t5SaysTheScaleIsFoldedAndEveryViewDraws()
    {
        tinyt5::Options gated;
        gated.gated = true;
        const QString t5 = QString::fromStdString(tinyt5::writeFolder(m_tmp, "tiny-t5", gated));
        {
            MainWindow w;
            QVERIFY(w.openModel(t5).ok());
            const auto* box = w.findChild<QCheckBox*>(QStringLiteral("sqrt-dk"));
            QVERIFY(box);
            QVERIFY2(box->text().contains(QStringLiteral("folded into W_Q")), qPrintable(box->text()));
            QVERIFY(box->isChecked());
            QVERIFY(w.document()->settings().mask == MaskKind::None);
            // Back to a model that divides: the box says so again.
            QVERIFY(w.openModel(QStringLiteral("builtin")).ok());
            QCOMPARE(box->text(), QStringLiteral("Divide by √dₖ"));
        }
        Result<ModelPtr> model = loadModel(t5.toStdString());
        QVERIFY(model);
        Document doc;
        doc.setModel(*model);
        doc.setText(QStringLiteral("the cat sat on the mat and the dog sat on the log"));
        {
            // Step by step says what T5's scores hold and which multiplier they get.
            PipelineView pipeline(&doc);
            pipeline.resize(1200, 800);
            QCOMPARE(pipeline.plot(QStringLiteral("scores"))->title().section(QLatin1Char('\n'), 0, 0), QStringLiteral("scores Q Kᵀ + bias"));
            QCOMPARE(pipeline.plot(QStringLiteral("scaled"))->title().section(QLatin1Char('\n'), 0, 0), QStringLiteral("scaled × 1"));
            const auto labels = pipeline.findChildren<QLabel*>();
            QVERIFY(std::any_of(labels.begin(), labels.end(), [](const QLabel* l) { return l->text() == QStringLiteral("→\n× 1"); }));
        }
        {
            // The Positional view draws the bias each head adds by offset: entry (h, 32 + o) is the table's value
            // for the bucket of offset o, looked up here by hand from the tiny model's 8 buckets and distance 12
            // (bidirectional: offsets 0 and -1 exact, -2..-4 bucket 2, further back 3; after the query 4 + that).
            PositionalView positional(&doc);
            const Matrix shown = positional.learnedPlot()->shown();
            QCOMPARE(shown.rows(), Eigen::Index(tinyt5::kH));
            QCOMPARE(shown.cols(), Eigen::Index(65));
            const Matrix& table = (*model)->weights.relativeBias;
            const std::pair<int, int> offsetBucket[] = {{0, 0}, {-1, 1}, {-3, 2}, {-20, 3}, {1, 5}, {3, 6}, {32, 7}};
            for (int h = 0; h < tinyt5::kH; ++h)
                for (auto [offset, bucket] : offsetBucket) QCOMPARE(shown(h, 32 + offset), table(bucket, h));
        }
        renderEveryEncoderDecoderView(doc, QStringLiteral("t5-"));
    }

private:
    // Every view the renderer knows, on an encoder-decoder model with a head ablated. The encoder is what the
    // views run: the next-token measurements refuse as for BERT, and the logit lens finds no masked-LM head
    // to read the encoder through; generation translates.
    void renderEveryEncoderDecoderView(Document& doc, const QString& prefix)
    {
        attnscope::AttentionSettings settings = doc.settings();
        settings.ablated = {{0, 1}};
        doc.setSettings(settings);
        const QMap<QString, std::string> refused{{QStringLiteral("importance"), "not trained to predict"},
                                                 {QStringLiteral("attribution"), "no next-token logits"},
                                                 {QStringLiteral("logit-lens"), "masked-language-model head"},
                                                 {QStringLiteral("patching"), "this model is an encoder"},
                                                 {QStringLiteral("checkpoints"), "no repository with two or more revisions"}};
        for (const QString& view : renderViewNames()) {
            RenderOptions options;
            options.outPath = m_tmp.filePath(prefix + view + QStringLiteral(".png"));
            options.width = 640;
            options.height = 480;
            const Status status = renderView(view, doc, options);
            if (refused.contains(view)) {
                QVERIFY2(!status.ok() && status.error().find(refused.value(view)) != std::string::npos,
                         qPrintable(view + QStringLiteral(": ") + QString::fromStdString(status.error())));
                continue;
            }
            QVERIFY2(status.ok(), qPrintable(view + QStringLiteral(": ") + QString::fromStdString(status.error())));
            QCOMPARE(QImage(options.outPath).size(), QSize(640, 480));
        }
    }

    static std::vector<int> ids(const Document& doc) { return doc.snapshot()->tokens.ids; }
};

QTEST_MAIN(TestBertWindow)
#include "tst_bertwindow.moc"
