#pragma once
// tst_mainwindow's test class and helpers, shared by its four files: tst_mainwindow.cpp (the views and
// controls against the core), tst_mainwindow_input.cpp (long, hostile and over-long text in the sentence box),
// tst_mainwindow_models.cpp (opening models: folders, the menu, the hub cache, downloads, drops) and
// tst_mainwindow_lines.cpp (the lines picture against the core's weights and filters).
#include <QCheckBox>
#include <QMenu>
#include <QProgressBar>
#include <QMessageBox>
#include <QPushButton>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTimer>
#include <QComboBox>
#include <QLabel>
#include <QMimeData>
#include <QTemporaryDir>
#include <QToolTip>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QtTest>
#include <cmath>

#include "ui/window/controlpanel.h"
#include "ui/drawing/colormap.h"
#include "ui/document/document.h"
#include "randomdefault.h"
#include "core/model/forward.h"
#include "ui/attention/headgridview.h"
#include "ui/attention/heatmapview.h"
#include "ui/window/mainwindow.h"
#include "core/model/nexttokens.h"
#include "ui/attention/nexttokenview.h"
#include "ui/models/downloaddialog.h"
#include "ui/models/hubcachedialog.h"
#include "hubserver.h"
#include "ui/window/modelmenu.h"
#include "ui/models/randommodeldialog.h"
#include "ui/document/preferences.h"
#include "ui/document/sentence.h"
#include "hubcache.h"
#include "ui/window/sentencevalidator.h"
#include "hostiletext.h"
#include "numericcheck.h"
#include "tinygpt2.h"
#include "ui/window/tokenchips.h"
#include "waits.h"

using namespace attnscope;

namespace mainwindowtest {

const QString kSentence = QStringLiteral("The quick brown fox jumps over the lazy dog");

// The core's answer for what the window is showing, computed independently of the window.
inline ForwardTrace coreTrace(const Document& doc)
{
    const QByteArray utf8 = doc.text().toUtf8();
    Result<TokenizedText> tokens = doc.model()->tokenizer->encode(utf8.toStdString());
    Result<ForwardTrace> trace = forward(*doc.model(), tokens->ids, doc.settings());
    return std::move(*trace);
}

// Worst absolute difference between the displayed heatmap and the core's weights of the focused head.
inline numericcheck::Worst worstDifference(const HeatmapView& view, const ForwardTrace& trace, HeadSelection head)
{
    const Matrix& w = trace.weights(head.layer, head.head);  // (T, T)
    numericcheck::Worst worst;
    worst.label("heatmap of layer %d head %d", head.layer, head.head);
    for (int q = 0; q < w.rows(); ++q)
        for (int k = 0; k < w.cols(); ++k) worst.add(view.cellValue(q, k), double(w(q, k)), q, k);
    return worst;
}

} // namespace mainwindowtest
using namespace mainwindowtest;

class TestMainWindow : public QObject {
    Q_OBJECT
private slots:
    void titleBeginsWithAttnScope();
    void gridColoursWhenShownAndKeepsUnchangedHeads();
    void typingUpdatesChipsAndHeatmap();
    void nextTokenListIsTheCoresPrediction();
    void opensAGpt2FolderAndShowsItsNumbers();
    void menuOpenLoadsInTheBackgroundAndTheNewestWins();
    void causalOffAndOnZeroesUpperTriangle();
    void wordsSwitchMergesTokensByTheRule();
    void wordsOnAPassThatKeptOnlyTheFocusedHead();
    void windowAndSinksHideTheKeysTheySay();
    void sparsePatternControlsHideTheKeysTheySay();  // tst_mainwindow_masks.cpp
    void sparsePatternFollowsTheModelsMask();        // tst_mainwindow_masks.cpp
    void clickingChipBlocksKey();
    void sqrtDkOffChangesWeightsAsCoreSays();
    void clickingGridCellFocusesHead();
    void keyboardMovesBetweenHeadsAndLayers();
    void temperatureSliderIsLogarithmic_data();
    void temperatureSliderIsLogarithmic();
    void temperatureSliderUpdatesWhileDragging();
    void thousandTokensDoNotCrash();
    void tooLongInputShowsErrorNotNumbers();
    void tokenLimitBelowContextOffersToKeepWhatFits();
    void hostileTextNeverCrashesTheWindow();
    void longRunsOfCombiningMarksAreCut();
    void theSentenceBoxCutsMarksFromEveryPath();
    void theHubCacheDialogListsWhatOpens();
    void modelsOpenedFromTheMenuAreRecent();
    void aDownloadRunsWhileTheWindowWorks();
    void workerPathGivesTheSameWeights();
    void tooltipShowsWeightAndScoresFromSnapshot();
    void valueWeightedDisplayShowsTheCoresProducts();
    void statusBarNamesTokensModelAndTimes();
    void positionalSelectorOffersWhatTheModelHas();
    void randomModelDialogBuildsSpec();
    void acceptsDraggedFolderOnly();
    void theTranslatorOpensOnASentenceItReads();
    // tst_mainwindow_lines.cpp
    void linesHoverIsolatesOneQueryWithTheCoresWeights();
    void linesHoverOnAKeyKeepsTheLinesThatReachIt();
    void linesClickPinsAndKeysMoveIt();
    void linesMaskedPairsDrawNoLine();
    void linesCtrlClickAndWholeLayerOverlayHeads();
    void linesFiltersAreTheCores();
    void linesHideSpecialIsTheRenormalisedPicture();
    void linesBetweenWordsAreTheRuleAndRenormaliseFirst();
    void linesLongInputShowsAWindowAndSaysSo();
    void linesOnlyFocusKeptStillDrawsTheFocusedHead();
    void linesLargePictureIsBlendedBesideTheWindow();
};
