// The Research tab on a real Document: every number a view draws is the core's, ablation is a document
// setting every view follows, the worker path gives the same numbers, and every view renders headless.
#include <QtTest>

#include <QComboBox>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QSlider>
#include <QSpinBox>
#include <QTabBar>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <cmath>
#include <qcustomplot.h>

#include "numericcheck.h"
#include "ui/attention/headgridview.h"
#include "ui/drawing/colormap.h"
#include "ui/document/document.h"
#include "ui/common/matrixplot.h"
#include "ui/research/interventions/ablationview.h"
#include "ui/research/readouts/attributionview.h"
#include "ui/research/corpus/corpusview.h"
#include "ui/research/generationview.h"
#include "ui/research/readouts/logitlensview.h"
#include "ui/research/interventions/patchingview.h"
#include "ui/research/corpus/headrolesview.h"
#include "ui/research/interventions/importanceview.h"
#include "ui/research/readouts/qkmapview.h"
#include "ui/research/researchviews.h"
#include "ui/export/renderer.h"
#include "ui/research/researchtab.h"
#include "core/limits.h"
#include "core/research/rollout.h"
#include "ui/research/readouts/rolloutview.h"
#include "ui/research/weights/circuitsview.h"
#include "core/research/circuits.h"
#include "ui/window/mainwindow.h"
#include "randomdefault.h"
#include "core/open/openmodel.h"

using namespace attnscope;

namespace {

const QString kText = QStringLiteral("the cat sat on the mat and the cat slept");
const QString kCorrupted = QStringLiteral("the dog sat on the mat and the cat slept");  // as many tokens, one changed

std::vector<int> ids(const Document& doc) { return doc.snapshot()->tokens.ids; }

ResearchTab* researchTabOf(MainWindow& window)
{
    for (int i = 0; i < window.tabs()->count(); ++i)
        if (auto* tab = qobject_cast<ResearchTab*>(window.tabs()->widget(i))) return tab;
    return nullptr;
}

} // namespace

class TestResearch : public QObject {
    Q_OBJECT
private slots:
    void windowHasTheResearchTab();
    void rolesTableAndBadgesAreTheCores();
    void gridDrawsBadgesInTheirCell();
    void ablationIsADocumentSettingEveryViewFollows();
    void ablationViewNumbers();
    void ablatedHeadsTheNewModelLacksAreDropped();
    void importanceGridIsTheCores_data();
    void importanceGridIsTheCores();
    void rolloutMatrixAndBars();
    void attributionGridAndSum();
    void qkMapPointsAndHighlight();
    void circuitsViewIsTheCores();
    void generationTimelineIsTheCores();
    void logitLensTableIsTheCores();
    void patchingGridsAreTheCores();
    void corpusPlotsAreTheCoresAndIgnoreTyping();
    void corpusFilesAreCheckedWithASentence();
    void qkMapTakesSentencesUpTo2000Tokens();
    void renderEveryView_data();
    void renderEveryView();
};

void TestResearch::windowHasTheResearchTab()
{
    MainWindow window;
    QTabWidget* tabs = window.tabs();
    int index = -1;
    for (int i = 0; i < tabs->count(); ++i)
        if (tabs->tabText(i) == QStringLiteral("&Research")) index = i;
    QVERIFY(index >= 0);
    auto* research = qobject_cast<ResearchTab*>(tabs->widget(index));
    QVERIFY(research);
    QCOMPARE(research->count(), 12);
    // With room, the instruments are listed down the left side, each title whole and read as written.
    window.resize(1280, 720);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    tabs->setCurrentIndex(index);
    QApplication::processEvents();
    QVERIFY(research->width() >= research->sideListWidth());
    QCOMPARE(research->tabPosition(), QTabWidget::West);
    const QFontMetrics metrics = research->tabBar()->fontMetrics();
    for (int i = 0; i < research->count(); ++i) {
        const QRect rect = research->tabBar()->tabRect(i);
        QVERIFY2(rect.width() > metrics.horizontalAdvance(research->tabText(i)) && rect.height() < 2 * rect.width(),
                 qPrintable(research->tabText(i)));
    }
    // A narrow tab gives its width to the page and keeps the bar along the top.
    window.resize(800, 700);
    QApplication::processEvents();
    QVERIFY(research->width() < research->sideListWidth());
    QCOMPARE(research->tabPosition(), QTabWidget::North);
}

void TestResearch::rolesTableAndBadgesAreTheCores()
{
    Document doc;
    testing::useRandomModel(doc);  // the hand-worked expectations assume the random model
    doc.setText(kText);
    HeadRolesView view(&doc);
    view.seedBox()->setValue(4);
    view.waitForResult();
    const HeadRoleScores core = *computeHeadRoles(*doc.model(), ids(doc), doc.settings(), 4);
    QTableWidget* t = view.table();
    QCOMPARE(t->rowCount(), core.layers * core.heads);
    numericcheck::Worst gap;
    for (int row = 0; row < t->rowCount(); ++row) {
        const int l = t->item(row, 0)->text().toInt(), h = t->item(row, 1)->text().toInt();
        for (int r = 0; r < kHeadRoleCount; ++r) {
            // A role with nothing to measure is not a finite number in the core and is shown as "—": that pair
            // is compared as text.
            const double expected = roleScore(core.at(l, h), HeadRole(r));
            const QString text = t->item(row, 2 + r)->text();
            gap.label("head %d.%d role %d", l, h, r);
            if (std::isfinite(expected)) gap.add(text.toDouble(), expected);
            else if (text != QStringLiteral("—")) gap.fail("a role with no score is not shown as —");
        }
    }
    QVERIFY2(gap.atMost(5e-4), gap.message("the table against the core (3 decimals shown)").c_str());
    // Sorting by the induction column puts the largest score first.
    t->sortItems(2 + int(HeadRole::Induction), Qt::DescendingOrder);
    double best = -1.0;
    for (const RoleScores& s : core.scores) best = std::max(best, s.induction);
    QCOMPARE(t->item(0, 2 + int(HeadRole::Induction))->text(), QString::number(best, 'f', 3));
    // The grid's badges are roleBadges of the same scores.
    const auto badges = roleBadges(core);
    QCOMPARE(view.grid()->badges().size(), badges.size());
    for (std::size_t i = 0; i < badges.size(); ++i) QCOMPARE(view.grid()->badges()[i].size(), qsizetype(badges[i].size()));
    // Hovering a head shows all five of its scores.
    const QString tip = view.grid()->headToolTip({1, 3});
    QCOMPARE(tip, QStringLiteral("Layer 1, head 3\n") + describeRoles(core.at(1, 3)));
    QVERIFY(tip.contains(QStringLiteral("induction %1").arg(core.at(1, 3).induction, 0, 'f', 2)));
}

// Badges are drawn: the same grid with and without one differs exactly inside that head's cell.
void TestResearch::gridDrawsBadgesInTheirCell()
{
    Document doc;
    testing::useRandomModel(doc);  // the hand-worked expectations assume the random model
    doc.setText(kText);
    HeadGridView grid;
    grid.resize(400, 300);
    grid.setSnapshot(doc.snapshot());
    const QImage plain = grid.grab().toImage();
    std::vector<QStringList> badges(std::size_t(grid.layers() * grid.heads()));
    badges[std::size_t(1 * grid.heads() + 2)] = QStringList{QStringLiteral("ind"), QStringLiteral("prev")};
    grid.setBadges(badges);
    const QImage marked = grid.grab().toImage();
    const QRect cell = grid.cellRect({1, 2});
    int inside = 0, outside = 0;
    for (int y = 0; y < plain.height(); ++y)
        for (int x = 0; x < plain.width(); ++x)
            if (plain.pixel(x, y) != marked.pixel(x, y)) ++(cell.contains(x, y) ? inside : outside);
    QVERIFY(inside > 20);
    QCOMPARE(outside, 0);
}

void TestResearch::ablationIsADocumentSettingEveryViewFollows()
{
    MainWindow window;
    Document* doc = window.document();
    doc->setText(kText);
    auto* research = researchTabOf(window);
    AblationView* view = research->ablation();
    view->resize(900, 600);
    view->grid()->resize(400, 300);
    QSignalSpy settings(doc, &Document::settingsChanged);
    QTest::mouseClick(view->grid(), Qt::LeftButton, {}, view->grid()->cellRect({1, 2}).center());
    QCOMPARE(settings.count(), 1);
    QCOMPARE(doc->settings().ablated, (std::vector<AblatedHead>{{1, 2}}));
    doc->waitForIdle();
    // The main window's status bar names it, and the snapshot every view reads carries it.
    QVERIFY2(window.statusLabel()->text().contains(QStringLiteral("ablated heads 1.2 (zero)")), qPrintable(window.statusLabel()->text()));
    QCOMPARE(doc->snapshot()->settings.ablated, doc->settings().ablated);
    view->modeBox()->setCurrentIndex(1);
    QVERIFY(doc->settings().ablationMode == AblationMode::Mean);
    QTest::mouseClick(view->grid(), Qt::LeftButton, {}, view->grid()->cellRect({1, 2}).center());
    QVERIFY(doc->settings().ablated.empty());
    QVERIFY(!window.statusLabel()->text().contains(QStringLiteral("ablated")));
}

void TestResearch::ablationViewNumbers()
{
    Document doc;
    testing::useRandomModel(doc);  // the hand-worked expectations assume the random model
    doc.setText(kText);
    doc.toggleAblatedHead({0, 1});
    doc.toggleAblatedHead({0, 3});
    AblationView view(&doc);
    view.waitForResult();
    const Model& model = *doc.model();
    const AblationEffect e = *ablationEffect(model, ids(doc), doc.settings(), *model.tokenizer, AblationView::kTopCount);
    QTableWidget* t = view.predictions();
    QCOMPARE(t->rowCount(), AblationView::kTopCount);
    for (int i = 0; i < AblationView::kTopCount; ++i) {
        QCOMPARE(t->item(i, 0)->text(), QString::fromStdString(e.before[std::size_t(i)].token));
        QCOMPARE(t->item(i, 2)->text(), QString::fromStdString(e.after[std::size_t(i)].token));
    }
    QVERIFY(view.klLabel()->text().contains(QString::number(e.klDivergence, 'g', 4)));
    Matrix expected(e.layers, e.heads);
    for (int l = 0; l < e.layers; ++l)
        for (int h = 0; h < e.heads; ++h) expected(l, h) = float(e.at(l, h));
    const numericcheck::Worst change = numericcheck::difference(view.changePlot()->shown(), expected);
    QVERIFY2(change.within(1e-6), change.message("the change grid against the core's").c_str());
    QVERIFY(expected.row(1).maxCoeff() > 0.0f);  // layer 1 heads did move
    // Nothing ablated: a sentence saying so instead of numbers.
    doc.clearAblation();
    view.waitForResult();
    QVERIFY(view.statusLabel()->text().contains(QStringLiteral("No head is ablated")));
}

void TestResearch::ablatedHeadsTheNewModelLacksAreDropped()
{
    Document doc;
    testing::useRandomModel(doc);  // the hand-worked expectations assume the random model
    doc.setText(kText);
    doc.toggleAblatedHead({0, 1});
    doc.toggleAblatedHead({1, 3});
    QSignalSpy settings(&doc, &Document::settingsChanged);
    doc.setModel(*loadModel("random:layers=1,heads=2,d_model=32"));
    QCOMPARE(settings.count(), 1);
    QCOMPARE(doc.settings().ablated, (std::vector<AblatedHead>{{0, 1}}));
    doc.waitForIdle();
    QVERIFY2(doc.error().isEmpty(), qPrintable(doc.error()));
    doc.toggleAblatedHead({0, 5});  // not in the model: ignored
    QCOMPARE(settings.count(), 1);
}

void TestResearch::importanceGridIsTheCores_data()
{
    QTest::addColumn<bool>("worker");
    QTest::newRow("on the GUI thread") << false;
    QTest::newRow("on the thread pool") << true;
}

void TestResearch::importanceGridIsTheCores()
{
    QFETCH(bool, worker);
    Document doc;
    testing::useRandomModel(doc);  // the hand-worked expectations assume the random model
    doc.setForceAsync(worker);
    doc.setText(kText);
    ImportanceView view(&doc);
    view.waitForResult();
    const HeadImportance core = *headImportance(*doc.model(), ids(doc), doc.settings());
    Matrix expected(core.layers, core.heads);
    for (int l = 0; l < core.layers; ++l)
        for (int h = 0; h < core.heads; ++h) expected(l, h) = float(core.at(l, h));
    const numericcheck::Worst importance = numericcheck::difference(view.plot()->shown(), expected);
    QVERIFY2(importance.within(1e-5), importance.message("the importance grid against the core's").c_str());
    doc.setText(QStringLiteral("one"));
    view.waitForResult();
    QVERIFY(view.statusLabel()->text().contains(QStringLiteral("two tokens")));
}

void TestResearch::rolloutMatrixAndBars()
{
    Document doc;
    testing::useRandomModel(doc);  // the hand-worked expectations assume the random model
    doc.setText(kText);
    RolloutView view(&doc);
    view.waitForResult();
    const std::vector<Matrix> core = attentionRollout(doc.snapshot()->trace);
    QCOMPARE(view.layer(), int(core.size()) - 1);  // starts after the last layer
    const numericcheck::Worst last = numericcheck::difference(view.matrixPlot()->shown(), core.back());
    QVERIFY2(last.within(1e-6), last.message("the last layer's rollout").c_str());
    view.layerSlider()->setValue(0);
    view.tokenBox()->setCurrentIndex(3);
    const numericcheck::Worst first = numericcheck::difference(view.matrixPlot()->shown(), core.front());
    QVERIFY2(first.within(1e-6), first.message("the first layer's rollout").c_str());
    numericcheck::Worst gap;
    gap.label("bar");
    for (int j = 0; j < int(core.front().cols()); ++j) gap.add(view.bars()->data()->at(j)->value, core.front()(3, j), j);
    QVERIFY2(gap.within(1e-6), gap.message("the bars against row 3 of R_0").c_str());
}

void TestResearch::attributionGridAndSum()
{
    Document doc;
    testing::useRandomModel(doc);  // the hand-worked expectations assume the random model
    doc.setText(kText);
    AttributionView view(&doc);
    view.waitForResult();
    QCOMPARE(view.targetBox()->count(), AttributionView::kTargets);
    view.targetBox()->setCurrentIndex(2);
    emit view.targetBox()->activated(2);
    view.waitForResult();
    const int target = view.targetBox()->currentData().toInt();
    const LogitAttribution a = *directLogitAttribution(*doc.model(), ids(doc), doc.settings(), target);
    Matrix expected(a.layers, a.heads);
    for (int l = 0; l < a.layers; ++l)
        for (int h = 0; h < a.heads; ++h) expected(l, h) = float(a.head(l, h));
    const numericcheck::Worst heads = numericcheck::difference(view.headPlot()->shown(), expected);
    QVERIFY2(heads.within(1e-5), heads.message("the heads' grid against the core's").c_str());
    QVERIFY2(view.sumLabel()->text().contains(QString::number(a.logit, 'f', 4)), qPrintable(view.sumLabel()->text()));
    QCOMPARE(view.partBars()->data()->at(0)->value, a.embeddings);
}

// The timeline's heatmap, the step's bars and what the cache holds are the core's generation, for the
// focused head, following the count, the step and the focus; under a window the dropped keys are the ones
// the window and sinks leave out.
void TestResearch::generationTimelineIsTheCores()
{
    Document doc;
    testing::useRandomModel(doc);
    doc.setText(kText);
    AttentionSettings s = doc.settings();
    s.window = 4;
    s.sinks = 1;
    doc.setSettings(s);
    doc.setFocus({1, 2});
    GenerationView view(&doc);
    view.resize(900, 700);
    view.countBox()->setValue(6);
    view.waitForResult();
    const std::vector<int> prompt = ids(doc);
    const Generation core = *generateGreedy(*doc.model(), prompt, doc.settings(), 6);
    const int P = int(prompt.size()), T = P + 6;
    QCOMPARE(view.stepSlider()->maximum(), 6);
    QCOMPARE(view.step(), 6);  // a first result shows the last step
    const auto check = [&](int step, HeadSelection head) {
        const Matrix& w = core.trace.weights(head.layer, head.head);
        Matrix rows(6, T);
        for (int i = 0; i < 6; ++i)
            for (int j = 0; j < T; ++j)
                rows(i, j) = isMaskedPair(doc.settings(), P + i, j) ? -std::numeric_limits<float>::infinity() : w(P + i, j);
        const Matrix shown = view.timeline()->shown();
        QCOMPARE(shown.rows(), rows.rows());
        for (int i = 0; i < 6; ++i)
            for (int j = 0; j < T; ++j)
                QVERIFY(std::isinf(rows(i, j)) ? std::isinf(shown(i, j)) : std::abs(shown(i, j) - rows(i, j)) < 1e-6);
        const int p = P + step - 1;
        QCOMPARE(view.keptBars()->data()->size(), p + 1);
        for (int j = 0; j <= p; ++j) {
            const bool kept = cacheKeeps(doc.settings(), p, j);
            QCOMPARE(view.droppedBars()->data()->at(j)->value, kept ? 0.0 : 1.0);
            QVERIFY(std::abs(view.keptBars()->data()->at(j)->value - (kept ? double(w(p, j)) : 0.0)) < 1e-7);
        }
    };
    check(6, {1, 2});
    view.setStep(2);
    check(2, {1, 2});
    QVERIFY(view.textLabel()->text().contains(QStringLiteral("<b")));
    doc.setFocus({0, 1});
    check(2, {0, 1});
    // A longer run recomputes; the step chosen inside the text stays.
    view.countBox()->setValue(9);
    view.waitForResult();
    QCOMPARE(view.stepSlider()->maximum(), 9);
    QCOMPARE(view.step(), 2);
}

// Every cell is the core's lens: its top token and probability, coloured by that probability or by the
// next token's (the masked grey where there is none); the plot follows the position clicked.
void TestResearch::logitLensTableIsTheCores()
{
    Document doc;
    testing::useRandomModel(doc);
    doc.setText(kText);
    LogitLensView view(&doc);
    view.resize(1000, 600);
    view.waitForResult();
    const LogitLens core = *logitLens(*doc.model(), ids(doc), doc.settings(), LogitLensView::kTopCount);
    const int T = core.tokens;
    QCOMPARE(view.table()->rowCount(), doc.model()->config.layers + 1);
    QCOMPARE(view.table()->columnCount(), T);
    QCOMPARE(view.table()->verticalHeaderItem(0)->text(), QStringLiteral("embeddings"));
    const auto checkColours = [&](bool byTarget) {
        for (int r = 0; r < core.rows; ++r)
            for (int t = 0; t < T; ++t) {
                const QTableWidgetItem* item = view.table()->item(r, t);
                const NextToken& best = core.at(r, t).front();
                QVERIFY(item->text().startsWith(QString::fromStdString(best.token).left(9)));
                QVERIFY2(item->text().endsWith(QString::number(best.p, 'f', 3)) || best.p < 1e-3, qPrintable(item->text()));
                const double target = core.target(r, t);
                const QColor expected = byTarget && std::isnan(target) ? ColorMap::maskedColor()
                                                                       : QColor(ColorMap::weightColor(byTarget ? target : best.p));
                QCOMPARE(item->background().color(), expected);
            }
    };
    checkColours(false);
    view.colourBox()->setCurrentIndex(int(LogitLensView::Colour::TargetProbability));
    checkColours(true);
    QVERIFY(std::isnan(core.target(core.rows - 1, T - 1)));

    // A decoder starts on the last position that has a next token; a click moves the plot.
    const auto checkPlot = [&](int position) {
        QCOMPARE(view.position(), position);
        QCOMPARE(view.positionGraph()->data()->size(), core.rows);
        for (int r = 0; r < core.rows; ++r) {
            QVERIFY(std::abs(view.positionGraph()->data()->at(r)->value - core.target(r, position)) < 1e-12);
            double sum = 0.0;
            for (int t = 0; t + 1 < T; ++t) sum += core.target(r, t);
            QVERIFY(std::abs(view.meanGraph()->data()->at(r)->value - sum / (T - 1)) < 1e-12);
        }
        QVERIFY(view.table()->horizontalHeaderItem(position)->font().bold());
    };
    checkPlot(T - 2);
    emit view.table()->cellClicked(2, 1);
    checkPlot(1);
    QVERIFY(!view.table()->horizontalHeaderItem(T - 2)->font().bold());
}

// Both grids are the core's patching for the typed tokens; empty tokens are the sentence's top next token
// and what the corrupted prompt favours; a corrupted prompt of another length is a sentence, not a picture.
void TestResearch::patchingGridsAreTheCores()
{
    Document doc;
    testing::useRandomModel(doc);
    doc.setText(kText);
    PatchingView view(&doc);
    view.resize(1000, 600);
    view.waitForResult();
    QVERIFY(view.result() && view.result()->error.contains(QStringLiteral("Type a corrupted prompt")));
    view.corruptedEdit()->setText(kCorrupted);
    view.answerEdit()->setText(QStringLiteral("#3"));
    view.wrongEdit()->setText(QStringLiteral("#9"));
    view.waitForResult();
    const Model& model = *doc.model();
    const std::vector<int> corrupted = model.tokenizer->encode(kCorrupted.toStdString())->ids;
    const ActivationPatching core = *activationPatching(model, ids(doc), corrupted, doc.settings(), 3, 9);
    const numericcheck::Worst residual = numericcheck::difference(view.residualPlot()->shown(), core.residual.cast<float>()),
                              head = numericcheck::difference(view.headPlot()->shown(), core.head.cast<float>());
    QVERIFY2(residual.within(1e-6), residual.message("the residual grid against the core's").c_str());
    QVERIFY2(head.within(1e-6), head.message("the heads' grid against the core's").c_str());
    QVERIFY(view.metricLabel()->text().contains(QString::number(core.cleanDiff, 'f', 3)));
    // Both grids share one scale of at least ±1.
    const double reach = std::max({1.0, core.residual.cwiseAbs().maxCoeff(), core.head.cwiseAbs().maxCoeff()});
    for (MatrixPlot* plot : {view.residualPlot(), view.headPlot()}) {
        QCOMPARE(plot->colorMap()->dataRange().upper, reach);
        QCOMPARE(plot->colorMap()->dataRange().lower, -reach);
    }

    // Empty: the answer is the sentence's most probable next token.
    view.answerEdit()->clear();
    view.wrongEdit()->clear();
    view.waitForResult();
    const auto* r = dynamic_cast<const PatchingResult*>(view.result().get());
    QVERIFY2(r, qPrintable(view.result()->error));
    CaptureRequest logits;
    logits.nextTokenLogits = true;
    Eigen::Index top = 0;
    forward(model, ids(doc), doc.settings(), logits)->nextLogits.maxCoeff(&top);
    QCOMPARE(r->patching.answer, int(top));
    QVERIFY(r->patching.wrong != r->patching.answer);

    view.corruptedEdit()->setText(QStringLiteral("too short"));
    view.waitForResult();
    QVERIFY(view.result()->error.contains(QStringLiteral("same length")));
    QVERIFY(view.residualPlot()->shown().size() == 0);
}

// The Circuits view draws the core's numbers for the focused head, follows the focus, ignores typing, and a
// click on a head in the copying grid focuses it.
void TestResearch::circuitsViewIsTheCores()
{
    Document doc;
    testing::useRandomModel(doc);
    doc.setText(kText);
    doc.setFocus({1, 2});
    doc.waitForIdle();
    CircuitsView view(&doc);
    view.waitForResult();
    const Model& model = *doc.model();
    const Circuits core = *readCircuits(model);
    const int L = model.config.layers, H = model.config.heads;
    const auto headOf = [&](HeadSelection h) {
        return *std::find_if(core.heads.begin(), core.heads.end(), [&](const CircuitHead& x) { return x.layer == h.layer && x.head == h.head; });
    };
    numericcheck::Worst worst;
    const CircuitHead focused = headOf({1, 2});
    QCOMPARE(view.qkGraph()->data()->size(), int(focused.qkSingularValues.size()));
    worst.label("spectra");
    for (int i = 0; i < view.qkGraph()->data()->size(); ++i) {
        worst.add(view.qkGraph()->data()->at(i)->value, focused.qkSingularValues[std::size_t(i)], i);
        worst.add(view.ovGraph()->data()->at(i)->value, focused.ovSingularValues[std::size_t(i)], i);
    }
    Matrix copying(L, H);
    for (const CircuitHead& h : core.heads) copying(h.layer, h.head) = float(*h.ovCopyingScore);
    worst.label("copying grid");
    worst.add(view.copyingPlot()->shown(), copying);
    for (const auto kind : {CircuitsView::Kind::Query, CircuitsView::Kind::Key, CircuitsView::Kind::Value}) {
        view.kindBox()->setCurrentIndex(view.kindBox()->findData(int(kind)));
        Matrix grid(1, H);  // layer 0 into L1 H2
        for (const CircuitComposition& c : core.composition)
            if (c.to == (HeadSelection{1, 2})) grid(c.from.layer, c.from.head) = float(kind == CircuitsView::Kind::Query ? c.q : kind == CircuitsView::Kind::Key ? c.k : c.v);
        worst.label("composition kind %d", int(kind));
        worst.add(view.compositionPlot()->shown(), grid);
    }
    worst.label("positional picture");
    const Matrix positional = *positionalQkCircuit(model, 1, 2, CircuitsView::kPositions), drawn = view.positionalPlot()->shown();
    QCOMPARE(drawn.rows(), positional.rows());
    for (int i = 0; i < drawn.rows(); ++i)
        for (int j = 0; j < drawn.cols(); ++j) {
            if (j > i) QVERIFY(std::isinf(drawn(i, j)) && drawn(i, j) < 0);  // the causal future, drawn as masked
            else worst.add(drawn(i, j), positional(i, j), i, j);
        }
    const std::vector<OvDirection> readout = *fullOvReadout(model, CircuitStack::Self, 1, 2, CircuitsView::kDirections, CircuitsView::kTokens);
    QCOMPARE(view.readoutTable()->rowCount(), CircuitsView::kDirections);
    worst.label("readout");
    for (int i = 0; i < CircuitsView::kDirections; ++i)
        worst.addRelative(view.readoutTable()->item(i, 0)->text().toDouble(), readout[std::size_t(i)].singularValue, 1e-3);
    QVERIFY2(worst.within(1e-3), worst.message("the view against the core").c_str());  // the table prints 4 digits
    const QString firstToken = QString::fromStdString(model.tokenizer->displayToken(readout[0].inputs[0].first));
    QVERIFY2(view.readoutTable()->item(0, 1)->text().contains(tokenLabel(firstToken.toStdString())), qPrintable(view.readoutTable()->item(0, 1)->text()));

    // Typing changes nothing it shows; a new focus is measured.
    const ResearchResultPtr before = view.result();
    doc.setText(QStringLiteral("another sentence altogether"));
    doc.waitForIdle();
    view.waitForResult();
    QCOMPARE(view.result().get(), before.get());
    emit view.copyingPlot()->cellClicked(0, 3);
    QCOMPARE(doc.focus(), (HeadSelection{0, 3}));
    doc.waitForIdle();
    view.waitForResult();
    QVERIFY(view.result().get() != before.get());
    const CircuitHead now = headOf({0, 3});
    worst = {};
    for (int i = 0; i < view.qkGraph()->data()->size(); ++i) worst.add(view.qkGraph()->data()->at(i)->value, now.qkSingularValues[std::size_t(i)], i);
    QVERIFY2(worst.within(1e-9), worst.message("the new focus's spectrum").c_str());
    QVERIFY(view.compositionPlot()->shown().size() == 0);  // layer 0 has no earlier heads
}

void TestResearch::qkMapPointsAndHighlight()
{
    Document doc;
    testing::useRandomModel(doc);  // the hand-worked expectations assume the random model
    doc.setText(kText);
    doc.setFocus({1, 2});
    QkMapView view(&doc);
    view.resize(800, 600);
    view.waitForResult();
    const QueryKeyMap core = *queryKeyMap(*doc.model(), {ids(doc)}, doc.settings(), {1, 2});
    QCOMPARE(view.queryGraph()->data()->size(), int(core.queries.rows()));
    // The graph keeps points sorted by x: compare as sorted sets of x.
    std::vector<double> shown, expected;
    for (auto it = view.queryGraph()->data()->constBegin(); it != view.queryGraph()->data()->constEnd(); ++it) shown.push_back(it->key);
    for (Eigen::Index i = 0; i < core.queries.rows(); ++i) expected.push_back(core.queries(i, 0));
    std::sort(expected.begin(), expected.end());
    for (std::size_t i = 0; i < shown.size(); ++i) QVERIFY(std::abs(shown[i] - expected[i]) < 1e-6);
    // Choosing query 5 marks its strongest keys, strongest first.
    view.selectQuery(5);
    const Matrix& A = core.attention[0];
    std::vector<int> order = {0, 1, 2, 3, 4, 5};
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return A(5, a) > A(5, b); });
    QCOMPARE(view.highlightedKeys(), (std::vector<int>{order[0], order[1], order[2]}));
}

void TestResearch::qkMapTakesSentencesUpTo2000Tokens()
{
    Document doc;
    testing::useRandomModel(doc);  // the hand-worked expectations assume the random model
    doc.setText(kText);
    QkMapView view(&doc);
    view.waitForResult();
    QStringList lines;
    for (int i = 0; i < 300; ++i) lines << QStringLiteral("a line of exactly eight words right here");
    view.setExtraSentences(lines);
    view.waitForResult();
    const auto* r = dynamic_cast<const QkMapResult*>(view.result().get());
    QVERIFY(r);
    const int T = int(ids(doc).size());
    const int fit = (kQueryKeyMapMaxTokens - T) / 8;
    QCOMPARE(r->sentences, 1 + fit);
    QCOMPARE(r->droppedLines, 300 - fit);
    QVERIFY(r->map.queries.rows() <= kQueryKeyMapMaxTokens);
}

namespace {

std::string shippedCorpus()
{
    QFile file(QStringLiteral(":/corpus-mixed.txt"));
    return file.open(QIODevice::ReadOnly) ? file.readAll().toStdString() : std::string();
}

// Every line and dot the corpus view draws against the core's statistics.
void checkCorpusPlots(const CorpusView& view, const CorpusStats& core)
{
    for (int s = 0; s < CorpusView::kStatisticCount; ++s) {
        const auto statistic = CorpusView::Statistic(s);
        double HeadCorpusStats::*field = nullptr;
        switch (statistic) {
        case CorpusView::Statistic::FirstToken: field = &HeadCorpusStats::firstToken; break;
        case CorpusView::Statistic::Special: field = &HeadCorpusStats::special; break;
        case CorpusView::Statistic::Punctuation: field = &HeadCorpusStats::punctuation; break;
        case CorpusView::Statistic::PreviousToken: field = &HeadCorpusStats::previousToken; break;
        case CorpusView::Statistic::Entropy: field = &HeadCorpusStats::entropy; break;
        }
        QCPGraphDataContainer* line = view.layerGraph(statistic)->data().data();
        QCPGraphDataContainer* dots = view.headGraph(statistic)->data().data();
        QCOMPARE(line->size(), core.layers);
        QCOMPARE(dots->size(), core.layers * core.heads);
        for (int l = 0; l < core.layers; ++l) {
            double sum = 0.0;
            for (int h = 0; h < core.heads; ++h) sum += core.at(l, h).*field;
            QVERIFY(std::abs(line->at(l)->value - sum / core.heads) < 1e-12);
            QCOMPARE(line->at(l)->key, double(l));
            for (int h = 0; h < core.heads; ++h) {
                const auto dot = dots->at(l * core.heads + h);
                QVERIFY(std::abs(dot->value - core.at(l, h).*field) < 1e-12);
                QVERIFY(std::abs(dot->key - l) <= 0.25 + 1e-12);  // beside its layer
            }
        }
    }
}

} // namespace

void TestResearch::corpusPlotsAreTheCoresAndIgnoreTyping()
{
    Document doc;
    testing::useRandomModel(doc);
    doc.setText(kText);
    doc.toggleBlockedKey(1);  // a key of the sentence: the corpus is measured without it
    CorpusView view(&doc);
    view.resize(1000, 600);
    view.waitForResult();
    const auto* r = dynamic_cast<const CorpusResult*>(view.result().get());
    QVERIFY2(r, qPrintable(view.result()->error));
    const std::string corpus = shippedCorpus();
    QVERIFY(!corpus.empty());
    AttentionSettings unblocked = doc.settings();
    unblocked.blockedKeys.clear();
    const CorpusStats core = *corpusStats(*doc.model(), corpus, unblocked, 1000);
    QCOMPARE(r->stats.documents, 40);
    QCOMPARE(r->stats.tokens, core.tokens);
    checkCorpusPlots(view, core);
    QVERIFY(view.summaryLabel()->text().contains(QStringLiteral("40 documents")));
    QVERIFY(view.statusLabel()->text().isEmpty());

    // A head's dot names the head and its number on hover.
    const HeadCorpusStats& head = core.at(1, 2);
    QCPGraph* dots = view.headGraph(CorpusView::Statistic::Entropy);
    view.entropyPlot()->replot();
    const QPointF at(dots->keyAxis()->coordToPixel(dots->data()->at(1 * core.heads + 2)->key),
                     dots->valueAxis()->coordToPixel(head.entropy));
    const QString tip = view.tipAt(view.entropyPlot(), at);
    QVERIFY2(tip.contains(QStringLiteral("L1 H2")) && tip.contains(QString::number(head.entropy, 'f', 4)), qPrintable(tip));
    QVERIFY(view.tipAt(view.entropyPlot(), QPointF(-50, -50)).isEmpty());

    // Typing, or blocking another key, measures nothing again: the same result stays.
    const ResearchResultPtr before = view.result();
    doc.setText(QStringLiteral("a different sentence altogether"));
    doc.toggleBlockedKey(2);
    QApplication::processEvents();
    view.waitForResult();
    QVERIFY(!view.isComputing());
    QCOMPARE(view.result().get(), before.get());

    // The settings do: a temperature measures it again, as does a smaller number of lines.
    doc.setTemperature(2.0);
    view.waitForResult();
    QVERIFY(view.result().get() != before.get());
    unblocked = doc.settings();
    unblocked.blockedKeys.clear();
    checkCorpusPlots(view, *corpusStats(*doc.model(), corpus, unblocked, 1000));
    view.documentsBox()->setValue(5);
    view.waitForResult();
    r = dynamic_cast<const CorpusResult*>(view.result().get());
    QVERIFY(r);
    QCOMPARE(r->stats.documents, 5);
    checkCorpusPlots(view, *corpusStats(*doc.model(), corpus, unblocked, 5));

    // On the worker path the numbers are the same.
    doc.setForceAsync(true);
    doc.setTemperature(1.0);
    view.waitForResult();
    unblocked = doc.settings();
    unblocked.blockedKeys.clear();
    checkCorpusPlots(view, *corpusStats(*doc.model(), corpus, unblocked, 5));
}

void TestResearch::corpusFilesAreCheckedWithASentence()
{
    Document doc;
    testing::useRandomModel(doc);
    doc.setText(kText);
    CorpusView view(&doc);
    view.waitForResult();
    QTemporaryDir dir;
    auto write = [&dir](const QString& name, const QByteArray& bytes) {
        QFile f(dir.filePath(name));
        f.open(QIODevice::WriteOnly);
        f.write(bytes);
        return f.fileName();
    };
    QVERIFY(!view.shippedButton()->isEnabled());
    const QString three = write(QStringLiteral("three.txt"), "the cat sat\n\n  \nthe dog ran.\nit rained, then it stopped\n");
    QCOMPARE(view.openCorpus(three), QString());
    view.waitForResult();
    const auto* r = dynamic_cast<const CorpusResult*>(view.result().get());
    QVERIFY2(r, qPrintable(view.result()->error));
    QCOMPARE(r->stats.documents, 3);
    QVERIFY(view.corpusName().contains(QStringLiteral("three.txt")));
    QVERIFY(view.shippedButton()->isEnabled());
    checkCorpusPlots(view, *corpusStats(*doc.model(), "the cat sat\n\n  \nthe dog ran.\nit rained, then it stopped\n", doc.settings()));

    // Files that cannot be a corpus are refused with a sentence naming the file, and the corpus in use stays.
    const QString blank = write(QStringLiteral("blank.txt"), "\n \n\t\n");
    QVERIFY(view.openCorpus(blank).contains(QStringLiteral("'blank.txt' has no documents")));
    QVERIFY(view.openCorpus(dir.filePath(QStringLiteral("missing.txt"))).contains(QStringLiteral("Cannot open the corpus 'missing.txt'")));
    const QString huge = write(QStringLiteral("huge.txt"), QByteArray(qsizetype(kMaxTextFileBytes) + 1, 'a'));
    QVERIFY(view.openCorpus(huge).contains(QStringLiteral("larger than 16 MB")));
    QVERIFY(view.corpusName().contains(QStringLiteral("three.txt")));
    // A line the tokenizer refuses (not UTF-8) is named in the view's sentence.
    QCOMPARE(view.openCorpus(write(QStringLiteral("bad.txt"), "fine\n\xff\xfe broken\n")), QString());
    view.waitForResult();
    QVERIFY2(view.result()->error.contains(QStringLiteral("Line 2")), qPrintable(view.result()->error));

    view.shippedButton()->click();
    view.waitForResult();
    r = dynamic_cast<const CorpusResult*>(view.result().get());
    QVERIFY(r);
    QCOMPARE(r->stats.documents, 40);
}

void TestResearch::renderEveryView_data()
{
    QTest::addColumn<QString>("view");
    // Checkpoints draws a series from the Hugging Face cache: tst_checkpoints renders it on a cache of its own.
    for (const ViewEntry& v : researchViews())
        if (v.name != QStringLiteral("checkpoints")) QTest::newRow(qPrintable(v.name)) << v.name;
}

void TestResearch::renderEveryView()
{
    QFETCH(QString, view);
    Document doc;
    testing::useRandomModel(doc);  // the hand-worked expectations assume the random model
    doc.setText(kText);
    doc.toggleAblatedHead({0, 0});
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("v.png"));
    RenderOptions options;
    options.outPath = path;
    options.width = 640;
    options.height = 420;
    options.source = kCorrupted;  // the patching view's corrupted prompt
    const Status drawn = renderView(view, doc, options);
    QVERIFY2(drawn.ok(), drawn.error().c_str());
    QCOMPARE(QImage(path).size(), QSize(640, 420));
    QVERIFY(!renderView(QStringLiteral("nope"), doc, options).ok());
    // The corpus page uses no token of the sentence, and circuits read the weights alone.
    if (view == QStringLiteral("corpus") || view == QStringLiteral("circuits")) return;
    options.query = 99;
    const Status past = renderView(view, doc, options);
    QVERIFY(!past.ok());
    QVERIFY(QString::fromStdString(past.error()).contains(QStringLiteral("past the last token")));
}

QTEST_MAIN(TestResearch)
#include "tst_research.moc"
