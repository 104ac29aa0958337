// The window against the core: every number the views display must be the snapshot's, and the
// controls must change the document the way the core says they do.
#include "tst_mainwindow.h"
#include "core/open/openmodel.h"

void TestMainWindow::titleBeginsWithAttnScope()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    QVERIFY(w.windowTitle().startsWith(QStringLiteral("AttnScope")));
}

void TestMainWindow::typingUpdatesChipsAndHeatmap()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.show();
    QSignalSpy spy(w.document(), &Document::snapshotChanged);
    QTest::keyClicks(w.sentenceEdit(), kSentence);
    QCOMPARE(spy.count(), kSentence.size());  // one computation per keystroke
    QCOMPARE(w.document()->text(), kSentence);
    QCOMPARE(w.tokenChips()->chipCount(), 9);
    QCOMPARE(w.tokenChips()->chipText(3), QStringLiteral("fox"));
    QCOMPARE(w.tokenChips()->chipId(3), w.document()->snapshot()->tokens.ids[3]);
    QCOMPARE(w.heatmap()->tokenCount(), 9);
    const numericcheck::Worst worst = worstDifference(*w.heatmap(), coreTrace(*w.document()), w.document()->focus());
    QVERIFY2(worst.within(1e-6), worst.message().c_str());
    // The grid shows one pixel per pair at this length.
    QCOMPARE(w.grid()->headImage({1, 2}).size(), QSize(9, 9));
}

// The grid colours its cells only when it is painted or asked, and keeps the image of every head whose
// weights did not change; what it keeps is exactly what colouring afresh gives.
void TestMainWindow::gridColoursWhenShownAndKeepsUnchangedHeads()
{
    const ModelPtr model = *loadModel("random:layers=3,heads=4,d_model=64,seed=2");
    auto snapshot = [&](const AttentionSettings& s) { return computeSnapshot(model, kSentence, s, HeadSelection{0, 0}, 1).first; };
    const SnapshotPtr first = snapshot(AttentionSettings{});
    HeadGridView grid;
    grid.resize(400, 300);
    grid.setSnapshot(first);
    grid.setSnapshot(snapshot(AttentionSettings{}));  // typing while the grid's tab is hidden
    grid.setSnapshot(first);
    QCOMPARE(grid.colouredImages(), 0);
    grid.show();
    QVERIFY(QTest::qWaitForWindowExposed(&grid));
    QTRY_COMPARE_WITH_TIMEOUT(grid.colouredImages(), 12, testing::kWorkTimeoutMs);
    // Ablating head 1 of layer 1 changes what layer 2 reads, and none of the weights of layers 0 and 1.
    AttentionSettings ablated;
    ablated.ablated = {AblatedHead{1, 1}};
    const SnapshotPtr second = snapshot(ablated);
    QVERIFY(first->trace.weights(2, 0) != second->trace.weights(2, 0));
    grid.setSnapshot(second);
    QVERIFY(!grid.headImage({2, 3}).isNull());
    QCOMPARE(grid.reusedImages(), 8);
    QCOMPARE(grid.colouredImages(), 16);
    HeadGridView fresh;
    fresh.setSnapshot(second);
    for (int l = 0; l < 3; ++l)
        for (int h = 0; h < 4; ++h) {
            QCOMPARE(grid.headImage({l, h}), fresh.headImage({l, h}));
            QCOMPARE(grid.firstTokenShare({l, h}), fresh.firstTokenShare({l, h}));
        }
    // A new length colours every head again.
    grid.setSnapshot(computeSnapshot(model, QStringLiteral("a shorter text"), ablated, HeadSelection{0, 0}, 2).first);
    QCOMPARE(grid.headImage({0, 0}).size(), QSize(3, 3));
    QCOMPARE(grid.reusedImages(), 0);
    // The grid keeps its images, never the snapshot they came from: one it no longer shows is freed even
    // before its next colouring (a grid on a hidden tab would otherwise hold a second whole trace while
    // the next one is computed).
    SnapshotPtr shown = computeSnapshot(model, kSentence, AttentionSettings{}, HeadSelection{0, 0}, 3).first;
    const std::weak_ptr<const Snapshot> shownAlive = shown;
    grid.setSnapshot(shown);
    QCOMPARE(grid.headImage({0, 0}).size(), QSize(9, 9));
    grid.setSnapshot(second);
    shown.reset();
    QVERIFY(shownAlive.expired());
    QVERIFY(!grid.headImage({2, 3}).isNull());
    QCOMPARE(grid.reusedImages(), 8);  // layers 0 and 1 as coloured from `shown`
}

// The list under the grid shows the core's top-k, computed independently here from a fresh forward.
void TestMainWindow::nextTokenListIsTheCoresPrediction()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.sentenceEdit()->setText(kSentence);
    const std::vector<NextToken>& shown = w.nextTokens()->shown();
    QCOMPARE(int(shown.size()), Snapshot::kNextTokens);
    const Model& model = *w.document()->model();
    CaptureRequest capture;
    capture.nextTokenLogits = true;
    Result<ForwardTrace> trace =
        forward(model, model.tokenizer->encode(kSentence.toStdString())->ids, w.document()->settings(), capture);
    QVERIFY(trace.hasValue());
    const std::vector<NextToken> expected = topK(*trace, *model.tokenizer, Snapshot::kNextTokens);
    for (std::size_t i = 0; i < shown.size(); ++i) {
        QCOMPARE(shown[i].id, expected[i].id);
        QVERIFY(std::abs(shown[i].p - expected[i].p) < 1e-9);
        if (i > 0) QVERIFY(shown[i].p <= shown[i - 1].p);
    }
    // An empty sentence predicts nothing rather than something stale.
    w.sentenceEdit()->clear();
    QVERIFY(w.nextTokens()->shown().empty());
}

void TestMainWindow::causalOffAndOnZeroesUpperTriangle()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.sentenceEdit()->setText(kSentence);
    HeatmapView* map = w.heatmap();
    QVERIFY(w.controls()->causalBox()->isChecked());
    QVERIFY(map->cellValue(0, 5) == 0.0);
    QVERIFY(map->isMaskedCell(0, 5));

    w.controls()->causalBox()->click();
    QVERIFY(w.document()->settings().mask == MaskKind::None);
    bool anyUpperNonZero = false;
    for (int q = 0; q < 9; ++q)
        for (int k = q + 1; k < 9; ++k) {
            QVERIFY(!map->isMaskedCell(q, k));
            anyUpperNonZero = anyUpperNonZero || map->cellValue(q, k) > 0.0;
        }
    QVERIFY(anyUpperNonZero);

    w.controls()->causalBox()->click();
    for (int q = 0; q < 9; ++q)
        for (int k = 0; k < 9; ++k) {
            QCOMPARE(map->isMaskedCell(q, k), k > q);
            if (k > q) QVERIFY(map->cellValue(q, k) == 0.0);
        }
    const numericcheck::Worst worst = worstDifference(*map, coreTrace(*w.document()), w.document()->focus());
    QVERIFY2(worst.within(1e-6), worst.message().c_str());
}

// The Words switch: the heatmap and grid show words ("dog," and "cat." are two tokens each), each cell the
// rule worked here from the core's token weights, a word pair masked exactly when all its token pairs are;
// switched off, the tokens come back.
void TestMainWindow::wordsSwitchMergesTokensByTheRule()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.sentenceEdit()->setText(QStringLiteral("The dog, it barked at the cat."));
    HeatmapView* map = w.heatmap();
    QCOMPARE(map->tokenCount(), 9);
    w.controls()->wordsBox()->click();
    QVERIFY(w.document()->wordLevel());
    QTRY_VERIFY_WITH_TIMEOUT(map->shownSnapshot() && map->shownSnapshot()->wordLevel, testing::kWorkTimeoutMs);
    QCOMPARE(map->tokenCount(), 7);
    QCOMPARE(map->shownSnapshot()->tokens.tokens[1], std::string("dog,"));
    QCOMPARE(w.grid()->shownSnapshot()->trace.tokens, 7);  // the grid of all heads shows the words too
    const std::vector<int> wordOf = {0, 1, 1, 2, 3, 4, 5, 6, 6};  // The | dog , | it | barked | at | the | cat .
    const ForwardTrace trace = coreTrace(*w.document());
    const Matrix& a = trace.weights(w.document()->focus().layer, w.document()->focus().head);
    numericcheck::Worst worst;
    for (int i = 0; i < 7; ++i)
        for (int j = 0; j < 7; ++j) {
            double sum = 0.0;
            int queries = 0;
            bool allMasked = true;
            for (int q = 0; q < 9; ++q) {
                if (wordOf[std::size_t(q)] != i) continue;
                ++queries;
                for (int k = 0; k < 9; ++k)
                    if (wordOf[std::size_t(k)] == j) {
                        sum += a(q, k);
                        allMasked = allMasked && k > q;
                    }
            }
            QCOMPARE(map->isMaskedCell(i, j), allMasked);
            worst.add(map->cellValue(i, j), sum / queries, i, j);
        }
    QVERIFY2(worst.within(1e-6), worst.message("word heatmap").c_str());
    QVERIFY(map->cellToolTip(1, 1).contains(QStringLiteral("Clark")));
    QVERIFY(map->title().contains(QStringLiteral("words")));
    w.controls()->wordsBox()->click();
    QCOMPARE(map->tokenCount(), 9);
    QVERIFY(!map->shownSnapshot()->wordLevel);
}

// A text so long that the pass keeps only the focused head's weights: at word level the heatmap still shows
// that head's words, and the grid, which has no words for the heads the pass did not keep, says so.
void TestMainWindow::wordsOnAPassThatKeptOnlyTheFocusedHead()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.document()->setEveryHeadBytes(1000.0);
    w.resize(1300, 850);
    w.show();
    w.sentenceEdit()->setText(QStringLiteral("The dog, it barked at the cat."));
    w.controls()->wordsBox()->click();
    w.document()->waitForIdle();
    QTRY_VERIFY_WITH_TIMEOUT(w.heatmap()->shownSnapshot() && w.heatmap()->shownSnapshot()->wordLevel, testing::kWorkTimeoutMs);
    QCOMPARE(w.heatmap()->tokenCount(), 7);
    QVERIFY(!w.document()->snapshot()->trace.keepsEveryHead());
    QVERIFY(w.heatmap()->cellValue(1, 1) > 0.0);
    QVERIFY2(!onlyFocusKept(*w.grid()->shownSnapshot()).isEmpty(), "the grid's snapshot says which heads it lacks");
    w.grab();  // every view draws without a head's words
}

// The Window and Sinks boxes: the heatmap greys exactly the pairs the core masks, its numbers are the core's,
// the note calls it a counterfactual, and switching the causal mask off and on keeps the window.
void TestMainWindow::windowAndSinksHideTheKeysTheySay()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.sentenceEdit()->setText(kSentence);
    HeatmapView* map = w.heatmap();
    QVERIFY(!w.controls()->sinksBox()->isEnabled());
    w.controls()->windowBox()->setValue(3);
    QCOMPARE(w.document()->settings().window, 3);
    QVERIFY(w.controls()->sinksBox()->isEnabled());
    w.controls()->sinksBox()->setValue(1);
    QCOMPARE(w.document()->settings().sinks, 1);
    for (int q = 0; q < 9; ++q)
        for (int k = 0; k < 9; ++k) {
            const bool hidden = k > q || (k >= 1 && k <= q - 3);  // by hand: sink 0, window q-2..q
            QVERIFY2(map->isMaskedCell(q, k) == hidden, qPrintable(QStringLiteral("query %1, key %2").arg(q).arg(k)));
            if (hidden) QVERIFY(map->cellValue(q, k) == 0.0);
        }
    const numericcheck::Worst worst = worstDifference(*map, coreTrace(*w.document()), w.document()->focus());
    QVERIFY2(worst.within(1e-6), worst.message().c_str());
    QVERIFY2(w.controls()->maskNote()->text().contains(QStringLiteral("window of 3 keys and 1 sink")), qPrintable(w.controls()->maskNote()->text()));

    w.controls()->causalBox()->click();
    QVERIFY(!w.controls()->windowBox()->isEnabled());
    QVERIFY(!map->isMaskedCell(8, 1));
    w.controls()->causalBox()->click();
    QVERIFY(map->isMaskedCell(8, 1) && !map->isMaskedCell(8, 0));
    w.controls()->windowBox()->setValue(0);
    QCOMPARE(w.document()->settings().sinks, 0);
    QVERIFY(!map->isMaskedCell(8, 1));
}

void TestMainWindow::clickingChipBlocksKey()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.show();
    w.sentenceEdit()->setText(kSentence);
    TokenChips* chips = w.tokenChips();
    QTest::mouseClick(chips, Qt::LeftButton, {}, chips->chipRect(2).center());
    QCOMPARE(w.document()->settings().blockedKeys, std::vector<int>{2});
    QVERIFY(chips->isBlocked(2));
    for (int q = 2; q < 9; ++q) QVERIFY(w.heatmap()->isMaskedCell(q, 2));
    QVERIFY(!w.heatmap()->isMaskedCell(3, 1));
    w.controls()->clearBlockedButton()->click();
    QVERIFY(w.document()->settings().blockedKeys.empty());
    QVERIFY(!chips->isBlocked(2));
    QVERIFY(!w.heatmap()->isMaskedCell(3, 2));
}

void TestMainWindow::sqrtDkOffChangesWeightsAsCoreSays()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.sentenceEdit()->setText(kSentence);
    const double before = w.heatmap()->cellValue(5, 1);
    w.controls()->sqrtDkBox()->click();
    QVERIFY(w.document()->settings().scaling == Scaling::None);
    QVERIFY(w.heatmap()->cellValue(5, 1) != before);
    const ForwardTrace core = coreTrace(*w.document());
    QCOMPARE(core.multiplier, 1.0);
    const numericcheck::Worst worst = worstDifference(*w.heatmap(), core, w.document()->focus());
    QVERIFY2(worst.within(1e-6), worst.message().c_str());
}

void TestMainWindow::clickingGridCellFocusesHead()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.show();
    w.sentenceEdit()->setText(kSentence);
    HeadGridView* grid = w.grid();
    QCOMPARE(grid->layers(), 2);
    QCOMPARE(grid->heads(), 4);
    QSignalSpy spy(w.document(), &Document::focusChanged);
    QTest::mouseClick(grid, Qt::LeftButton, {}, grid->cellRect({1, 3}).center());
    QCOMPARE(spy.count(), 1);
    QCOMPARE(w.document()->focus(), (HeadSelection{1, 3}));
    QCOMPARE(grid->focusedHead(), (HeadSelection{1, 3}));
    QCOMPARE(w.heatmap()->shownHead(), (HeadSelection{1, 3}));
    QCOMPARE(w.controls()->layerBox()->value(), 1);
    QCOMPARE(w.controls()->headBox()->value(), 3);
    const numericcheck::Worst worst = worstDifference(*w.heatmap(), coreTrace(*w.document()), {1, 3});
    QVERIFY2(worst.within(1e-6), worst.message().c_str());
}

void TestMainWindow::keyboardMovesBetweenHeadsAndLayers()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.show();
    w.sentenceEdit()->setText(kSentence);
    QTest::keyClick(w.grid(), Qt::Key_Right);
    QCOMPARE(w.document()->focus(), (HeadSelection{0, 1}));
    QTest::keyClick(w.grid(), Qt::Key_PageDown);
    QCOMPARE(w.document()->focus(), (HeadSelection{1, 1}));
    QTest::keyClick(w.grid(), Qt::Key_PageDown);  // already the last layer: stays
    QCOMPARE(w.document()->focus(), (HeadSelection{1, 1}));
    QTest::keyClick(w.grid(), Qt::Key_Left);
    QTest::keyClick(w.grid(), Qt::Key_Left);
    QCOMPARE(w.document()->focus(), (HeadSelection{1, 0}));
    QTest::keyClick(w.grid(), Qt::Key_PageUp);
    QCOMPARE(w.document()->focus(), (HeadSelection{0, 0}));
    QCOMPARE(w.heatmap()->shownHead(), (HeadSelection{0, 0}));
    // In the sentence box Left/Right move the cursor, not the head.
    w.sentenceEdit()->setFocus();
    QTest::keyClick(w.sentenceEdit(), Qt::Key_Left);
    QCOMPARE(w.document()->focus(), (HeadSelection{0, 0}));
}

void TestMainWindow::temperatureSliderIsLogarithmic_data()
{
    QTest::addColumn<int>("position");
    QTest::addColumn<double>("temperature");
    QTest::newRow("left end is 0.05") << 0 << 0.05;
    QTest::newRow("middle is 1") << 500 << 1.0;
    QTest::newRow("right end is 20") << 1000 << 20.0;
    QTest::newRow("a quarter is sqrt(0.05)") << 250 << std::sqrt(0.05);
}

void TestMainWindow::temperatureSliderIsLogarithmic()
{
    QFETCH(int, position);
    QFETCH(double, temperature);
    QVERIFY(std::abs(ControlPanel::temperatureForSlider(position) - temperature) < 1e-9);
    QCOMPARE(ControlPanel::sliderForTemperature(temperature), position);
}

void TestMainWindow::temperatureSliderUpdatesWhileDragging()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.sentenceEdit()->setText(kSentence);
    QSlider* slider = w.controls()->temperatureSlider();
    QCOMPARE(slider->value(), 500);
    QSignalSpy spy(w.document(), &Document::snapshotChanged);
    slider->setSliderDown(true);  // a drag in progress: no release yet
    slider->setValue(750);
    QCOMPARE(spy.count(), 1);
    QVERIFY(std::abs(w.document()->settings().temperature - ControlPanel::temperatureForSlider(750)) < 1e-12);
    QCOMPARE(w.controls()->temperatureLabel()->text(), QStringLiteral("T = 4.47"));
    const numericcheck::Worst worst = worstDifference(*w.heatmap(), coreTrace(*w.document()), w.document()->focus());
    QVERIFY2(worst.within(1e-6), worst.message().c_str());
    slider->setSliderDown(false);
}

void TestMainWindow::workerPathGivesTheSameWeights()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.document()->setForceAsync(true);
    QSignalSpy spy(w.document(), &Document::snapshotChanged);
    w.sentenceEdit()->setText(kSentence);
    QTRY_COMPARE_WITH_TIMEOUT(w.heatmap()->tokenCount(), 9, testing::kWorkTimeoutMs);
    w.controls()->causalBox()->click();
    QTRY_VERIFY_WITH_TIMEOUT(!w.heatmap()->isMaskedCell(0, 5), testing::kWorkTimeoutMs);
    const numericcheck::Worst worst = worstDifference(*w.heatmap(), coreTrace(*w.document()), w.document()->focus());
    QVERIFY2(worst.within(1e-6), worst.message().c_str());
}

void TestMainWindow::tooltipShowsWeightAndScoresFromSnapshot()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.sentenceEdit()->setText(kSentence);
    const SnapshotPtr snap = w.document()->snapshot();
    QVERIFY(snap->trace.hasDetail);
    const HeadDetail& d = snap->trace.detail;
    const QString tip = w.heatmap()->cellToolTip(4, 2);
    QVERIFY2(tip.contains(QStringLiteral("weight %1").arg(QString::number(double(snap->trace.weights(0, 0)(4, 2)), 'g', 6))), qPrintable(tip));
    QVERIFY2(tip.contains(QString::number(double(d.scores(4, 2)), 'g', 6)), qPrintable(tip));
    QVERIFY2(tip.contains(QString::number(double(d.scaled(4, 2)), 'g', 6)), qPrintable(tip));
    QVERIFY(tip.contains(QStringLiteral("jumps")));
    // Hovering the cell shows that text.
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    HeatmapView* map = w.heatmap();
    map->replot();
    const QPoint centre(int(map->xAxis->coordToPixel(2)), int(map->yAxis->coordToPixel(4)));
    QCOMPARE(map->cellAt(centre), QPoint(4, 2));
    QVERIFY(map->yAxis->coordToPixel(0) < map->yAxis->coordToPixel(8));  // the first query is at the top
    QVERIFY(map->xAxis->coordToPixel(0) < map->xAxis->coordToPixel(8));  // the first key at the left
    QTest::mouseMove(map, centre);
    QTRY_COMPARE_WITH_TIMEOUT(QToolTip::text(), tip, testing::kWorkTimeoutMs);
    const QString masked = w.heatmap()->cellToolTip(1, 6);
    QVERIFY2(masked.contains(QStringLiteral("masked")), qPrintable(masked));
    QVERIFY(!masked.contains(QStringLiteral("nan"), Qt::CaseInsensitive) && !masked.contains(QStringLiteral("inf")));
}

// "Show: weight × ‖value‖" makes the heatmap and the grid colour α_ij · ‖v_j W_O^h‖ as the core computes it
// (checked against a fresh forward here), with the scale, title and tooltip saying so; "weights" puts the
// weights back. The norms are computed only while the display asks for them.
void TestMainWindow::valueWeightedDisplayShowsTheCoresProducts()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.sentenceEdit()->setText(kSentence);
    Document* doc = w.document();
    QVERIFY(!doc->snapshot()->trace.hasValueNorms);
    QComboBox* display = w.controls()->displayBox();
    QCOMPARE(display->currentText(), displayLabel(AttentionDisplay::Weights));
    display->setCurrentIndex(display->findData(int(AttentionDisplay::ValueWeighted)));
    doc->waitForIdle();
    QCOMPARE(doc->attentionDisplay(), AttentionDisplay::ValueWeighted);
    QVERIFY(doc->snapshot()->trace.hasValueNorms);

    const QByteArray utf8 = kSentence.toUtf8();
    CaptureRequest capture;
    capture.valueNorms = true;
    Result<ForwardTrace> core = forward(*doc->model(), doc->model()->tokenizer->encode(utf8.toStdString())->ids, doc->settings(), capture);
    QVERIFY(core.hasValue());
    const HeadSelection f = doc->focus();
    const Matrix& weights = core->weights(f.layer, f.head);
    const RowVector& norms = core->valueNorm(f.layer, f.head);
    HeatmapView* map = w.heatmap();
    QVERIFY(map->showsValueWeighted());
    numericcheck::Worst worst;
    worst.label("value-weighted heatmap");
    double top = 0.0;
    for (int q = 0; q < map->tokenCount(); ++q)
        for (int k = 0; k < map->tokenCount(); ++k) {
            const double want = double(weights(q, k)) * double(norms[k]);
            top = std::max(top, want);
            worst.addRelative(map->cellValue(q, k), want, 1.0, q, k);
        }
    QVERIFY2(worst.within(1e-5), worst.message().c_str());
    QVERIFY(std::abs(map->colourRange().upper - top) <= 1e-5 * top);
    QVERIFY(map->title().contains(displayLabel(AttentionDisplay::ValueWeighted)));
    const QString tip = map->cellToolTip(4, 2);
    QVERIFY2(tip.contains(QString::number(double(weights(4, 2)), 'g', 6)) && tip.contains(QString::number(double(norms[2]), 'g', 6)),
             qPrintable(tip));
    QVERIFY(map->isMaskedCell(1, 6));  // the causal mask still greys the future

    // The grid: every pixel is the product over the head's largest, on the same colour map.
    const Matrix product = weights * norms.asDiagonal();
    const QImage& image = w.grid()->headImage(f);
    QCOMPARE(image.size(), QSize(9, 9));
    QCOMPARE(QColor(image.pixel(2, 4)), ColorMap::weightColor(product(4, 2) * (1.0f / product.maxCoeff())));
    QVERIFY(w.grid()->headToolTip(f).contains(QStringLiteral("value-weighted")));
    QVERIFY(std::abs(w.grid()->firstTokenShare(f) - double(product.col(0).sum() / product.sum())) < 1e-5);

    // Back to the weights: the plain numbers, the fixed [0, 1] scale, and no norms kept.
    display->setCurrentIndex(display->findData(int(AttentionDisplay::Weights)));
    doc->waitForIdle();
    QVERIFY(!map->showsValueWeighted() && !doc->snapshot()->trace.hasValueNorms);
    QCOMPARE(map->colourRange().upper, 1.0);
    const numericcheck::Worst plain = worstDifference(*map, coreTrace(*doc), f);
    QVERIFY2(plain.within(1e-6), plain.message().c_str());
    QCOMPARE(QColor(w.grid()->headImage(f).pixel(2, 4)), ColorMap::weightColor(weights(4, 2)));
}

void TestMainWindow::statusBarNamesTokensModelAndTimes()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.show();
    w.sentenceEdit()->setText(kSentence);
    QTRY_VERIFY_WITH_TIMEOUT(w.lastRenderMs() > 0.0, testing::kWorkTimeoutMs);  // set when the heatmap's queued replot has finished
    const QString status = w.statusLabel()->text();
    QVERIFY2(status.startsWith(QStringLiteral("9 tokens")), qPrintable(status));
    QVERIFY(status.contains(QString::fromStdString(w.document()->model()->config.name)));
    QVERIFY(status.contains(QStringLiteral("compute")) && status.contains(QStringLiteral("render")));
}

void TestMainWindow::positionalSelectorOffersWhatTheModelHas()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    QComboBox* box = w.controls()->positionalBox();
    const bool hasLearned = w.document()->model()->weights.positionEmbedding.rows() > 0;
    QCOMPARE(box->findData(int(PositionalOverride::Learned)) >= 0, hasLearned);
    QCOMPARE(box->count(), hasLearned ? 4 : 3);
    w.sentenceEdit()->setText(kSentence);
    const double before = w.heatmap()->cellValue(5, 2);
    box->setCurrentIndex(box->findData(int(PositionalOverride::None)));
    QVERIFY(w.document()->settings().positional == PositionalOverride::None);
    QVERIFY(w.heatmap()->cellValue(5, 2) != before);
    const numericcheck::Worst worst = worstDifference(*w.heatmap(), coreTrace(*w.document()), w.document()->focus());
    QVERIFY2(worst.within(1e-6), worst.message().c_str());
}

QTEST_MAIN(TestMainWindow)
