#include "ui/presenter/presentermode.h"

#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QGridLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMainWindow>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QStatusBar>
#include <QTextDocument>
#include <QTextEdit>
#include <QToolBar>
#include <algorithm>
#include <cmath>

#include "ui/document/document.h"
#include "ui/common/resizewatcher.h"
#include "ui/document/settingstext.h"
#include "ui/lessons/lessonpanel.h"
#include "ui/presenter/presenterstyle.h"
#include "ui/document/temperaturescale.h"

namespace attnscope {

namespace {

// A box the keys would type into: there a key is text, not a demonstration.
bool isTyping(const QWidget* w)
{
    if (qobject_cast<const QLineEdit*>(w) || qobject_cast<const QAbstractSpinBox*>(w) || qobject_cast<const QTextEdit*>(w) ||
        qobject_cast<const QPlainTextEdit*>(w))
        return true;
    const auto* combo = qobject_cast<const QComboBox*>(w);
    return combo && combo->isEditable();
}

QString keyCap(const QString& key)
{
    return QStringLiteral("<span style=\"background-color:#ffd600; color:#000000; font-weight:bold;\">&nbsp;%1&nbsp;</span>").arg(key);
}

// The strip's cells, in order; a lesson outlines a cell by the control it stands in for (kStandIns).
constexpr const char* kCellNames[] = {"strip-mask", "strip-scaling", "strip-temperature", "strip-positions", "strip-head",
                                      "strip-layer", "strip-blocked", "strip-lessons", "strip-tabs", "strip-leave"};
struct StandIn {
    const char* control;
    int cell;
};
constexpr StandIn kStandIns[] = {{"causal", 0}, {"mask-window", 0}, {"mask-sinks", 0}, {"mask-pattern", 0}, {"sqrt-dk", 1}, {"temperature", 2}, {"positional-encoding", 3},
                                 {"head", 4},   {"layer", 5},   {"clear-blocked", 6}, {"attention-display", 7}};

QString positionalName(PositionalOverride p)
{
    switch (p) {
    case PositionalOverride::Default: return QObject::tr("default");
    case PositionalOverride::Sinusoidal: return QObject::tr("sinusoidal");
    case PositionalOverride::Learned: return QObject::tr("learned");
    case PositionalOverride::None: return QObject::tr("none");
    }
    return {};
}

} // namespace

PresenterMode::PresenterMode(QMainWindow* window, Document* document, QWidget* controls, LessonPanel* lessons)
    : QObject(window), m_window(window), m_document(document), m_controls(controls), m_lessons(lessons),
      m_strip(new QToolBar(QObject::tr("Presenter keys"), window))
{
    m_strip->setObjectName(QStringLiteral("presenter-strip"));
    m_strip->setMovable(false);
    m_strip->setFloatable(false);
    m_strip->toggleViewAction()->setVisible(false);  // not offered in the toolbar menu: presenter mode owns it
    // One cell per key in a grid whose columns follow the strip's width (arrangeStrip): a word-wrapped
    // label in a tool bar gets its narrow size hint and stacks the keys in a column.
    m_cells = new QWidget(m_strip);
    m_cells->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    m_cells->setMinimumWidth(1);  // the columns follow the width, so the strip never sets the window's
    auto* grid = new QGridLayout(m_cells);
    grid->setContentsMargins(6, 4, 6, 4);
    grid->setHorizontalSpacing(24);
    for (int i = 0; i < kStripCells; ++i) {
        auto* cell = new QLabel(m_cells);
        cell->setTextFormat(Qt::RichText);
        cell->setObjectName(QString::fromLatin1(kCellNames[i]));
        m_stripCells.push_back(cell);
    }
    m_cells->installEventFilter(new ResizeWatcher(this, [this] { arrangeStrip(); }));
    m_strip->addWidget(m_cells);
    window->addToolBar(Qt::BottomToolBarArea, m_strip);
    m_strip->hide();

    connect(document, &Document::settingsChanged, this, &PresenterMode::refreshStrip);
    connect(document, &Document::focusChanged, this, &PresenterMode::refreshStrip);
    connect(document, &Document::modelChanged, this, &PresenterMode::refreshStrip);
    // The strip's L cell follows the panel, and the panel outlines the strip's cell for a control put away.
    m_lessons->setStandIn([this](QWidget* control) { return standIn(control); });
    connect(m_lessons, &QDockWidget::visibilityChanged, this, &PresenterMode::refreshStrip);
    connect(document, &Document::placeChanged, this, [this] {
        if (!m_active) return;
        PresenterStyle::scalePlotFonts(m_window, PresenterStyle::kFontScale);  // views built since entering
        refreshStrip();
    });
}

double PresenterMode::temperatureStep() { return std::sqrt(2.0); }

QWidget* PresenterMode::standIn(QWidget* control) const
{
    if (!m_active || !control || !m_controls->isAncestorOf(control)) return control;
    for (const StandIn& s : kStandIns)
        if (control->objectName() == QLatin1String(s.control)) return m_stripCells[std::size_t(s.cell)];
    return control;
}

void PresenterMode::setActive(bool on)
{
    if (on == m_active) return;
    m_active = on;
    QMenuBar* menu = m_window->menuBar();
    QStatusBar* status = m_window->statusBar();
    if (on) {
        m_savedStates = m_window->windowState();
        m_hadOwnFont = m_window->testAttribute(Qt::WA_SetFont);
        m_hadOwnPalette = m_window->testAttribute(Qt::WA_SetPalette);
        m_savedFont = m_window->font();
        m_savedPalette = m_window->palette();
        m_menuBarShown = !menu->isHidden();
        m_statusBarShown = !status->isHidden();

        QFont big = m_savedFont;
        if (big.pointSizeF() > 0) big.setPointSizeF(big.pointSizeF() * PresenterStyle::kFontScale);
        else big.setPixelSize(int(big.pixelSize() * PresenterStyle::kFontScale));
        m_window->setFont(big);
        m_window->setPalette(PresenterStyle::highContrastPalette());
        PresenterStyle::scalePlotFonts(m_window, PresenterStyle::kFontScale);
        menu->hide();
        status->hide();
        // The strip names every demonstration the control panel offers, so in front of a class the
        // panel's width goes to the views.
        m_controlsShown = !m_controls->isHidden();
        m_controls->hide();
        m_lessons->setCompact(true);
        m_lessons->setWidestShare(kLessonShare);
        refreshStrip();
        m_strip->show();
        qApp->installEventFilter(this);
        m_window->setWindowState(m_savedStates | Qt::WindowFullScreen);
        // Keys go to the views, not the sentence box, until someone clicks into a box.
        m_window->centralWidget()->setFocus(Qt::OtherFocusReason);
    } else {
        qApp->removeEventFilter(this);
        m_strip->hide();
        PresenterStyle::restorePlotFonts(m_window);
        m_lessons->setCompact(false);
        m_lessons->setWidestShare(LessonPanel::kWidestShare);
        m_window->setFont(m_hadOwnFont ? m_savedFont : QFont());
        m_window->setPalette(m_hadOwnPalette ? m_savedPalette : QPalette());
        menu->setVisible(m_menuBarShown);
        status->setVisible(m_statusBarShown);
        m_controls->setVisible(m_controlsShown);
        m_window->setWindowState(m_savedStates & ~Qt::WindowFullScreen);
    }
    emit activeChanged(on);
    // Outlines move between the control panel and the strip.
    m_lessons->refreshHighlight();
}

bool PresenterMode::eventFilter(QObject* watched, QEvent* event)
{
    if (event->type() != QEvent::KeyPress) return false;
    auto* widget = qobject_cast<QWidget*>(watched);
    if (!widget || widget->window() != m_window) return false;  // dialogs keep their keys
    return handleKey(widget, *static_cast<QKeyEvent*>(event));
}

bool PresenterMode::handleKey(QWidget* receiver, const QKeyEvent& key)
{
    const Qt::KeyboardModifiers mods = key.modifiers() & ~(Qt::KeypadModifier | Qt::ShiftModifier);
    if (mods != Qt::NoModifier) return false;  // Ctrl+S and friends stay shortcuts
    if (key.key() == Qt::Key_Escape) {
        if (isTyping(receiver)) {
            m_window->centralWidget()->setFocus(Qt::ShortcutFocusReason);
        } else {
            setActive(false);
        }
        return true;
    }
    if (isTyping(receiver)) return false;

    Document* doc = m_document;
    const HeadSelection f = doc->focus();
    switch (key.key()) {
    case Qt::Key_M:
        doc->setMask(doc->settings().mask == MaskKind::Causal ? MaskKind::None : MaskKind::Causal);
        return true;
    case Qt::Key_S:
        doc->setScaling(doc->settings().scaling == Scaling::SqrtDk ? Scaling::None : Scaling::SqrtDk);
        return true;
    case Qt::Key_Plus:
    case Qt::Key_Equal:  // + without Shift on most keyboards
        stepTemperature(+1);
        return true;
    case Qt::Key_Minus:
    case Qt::Key_Underscore:
        stepTemperature(-1);
        return true;
    case Qt::Key_P:
        cyclePositional();
        return true;
    case Qt::Key_C:
        doc->clearBlockedKeys();
        return true;
    case Qt::Key_V:
        doc->setAttentionDisplay(doc->attentionDisplay() == AttentionDisplay::Weights ? AttentionDisplay::ValueWeighted
                                                                                      : AttentionDisplay::Weights);
        return true;
    case Qt::Key_H:
        doc->setAttentionPicture(doc->attentionPicture() == AttentionPicture::Heatmap ? AttentionPicture::Lines : AttentionPicture::Heatmap);
        return true;
    case Qt::Key_L:
        m_lessons->setVisible(!m_lessons->isVisible());
        refreshStrip();
        return true;
    case Qt::Key_Left: doc->setFocus({f.layer, f.head - 1}); return true;  // the document clamps to the model
    case Qt::Key_Right: doc->setFocus({f.layer, f.head + 1}); return true;
    case Qt::Key_Up: doc->setFocus({f.layer - 1, f.head}); return true;
    case Qt::Key_Down: doc->setFocus({f.layer + 1, f.head}); return true;
    default: break;
    }
    if (key.key() >= Qt::Key_1 && key.key() <= Qt::Key_9) {
        const int index = key.key() - Qt::Key_1;
        if (index < int(doc->pages().size())) doc->setPlace(doc->pages()[std::size_t(index)].name);
        return true;
    }
    return false;
}

void PresenterMode::stepTemperature(int direction)
{
    Document* doc = m_document;
    const double t = doc->settings().temperature * std::pow(temperatureStep(), direction);
    // Snap to the slider's grid so the control shows exactly what the document holds.
    const double clamped = std::clamp(t, temperaturescale::kSliderMinTemperature, temperaturescale::kSliderMaxTemperature);
    doc->setTemperature(temperaturescale::temperatureForSlider(temperaturescale::sliderForTemperature(clamped)));
}

void PresenterMode::cyclePositional()
{
    Document* doc = m_document;
    const ModelPtr& model = doc->model();
    std::vector<PositionalOverride> offered = {PositionalOverride::Default, PositionalOverride::Sinusoidal};
    if (model && model->weights.positionEmbedding.rows() > 0) offered.push_back(PositionalOverride::Learned);
    offered.push_back(PositionalOverride::None);
    const auto it = std::find(offered.begin(), offered.end(), doc->settings().positional);
    const std::size_t next = it == offered.end() ? 0 : (std::size_t(it - offered.begin()) + 1) % offered.size();
    doc->setPositional(offered[next]);
}

void PresenterMode::refreshStrip()
{
    if (!m_active) return;
    const Document* doc = m_document;
    const AttentionSettings& s = doc->settings();
    const HeadSelection f = doc->focus();
    const ModelPtr& model = doc->model();
    const int layers = model ? model->config.layers : 0, heads = model ? model->config.heads : 0;
    const std::vector<TabPage>& pages = doc->pages();
    const auto page = std::find_if(pages.begin(), pages.end(), [&](const TabPage& p) { return p.name == doc->tab(); });
    const QString tabName = page == pages.end() ? QString() : page->title;
    QStringList parts;
    parts << keyCap(QStringLiteral("M")) + tr(" mask: %1").arg(s.hasWindow() || s.sparse.active() ? maskSummary(s) : s.mask == MaskKind::Causal ? tr("causal") : tr("off"));
    parts << keyCap(QStringLiteral("S")) + tr(" ÷√dₖ: %1").arg(s.scaling == Scaling::SqrtDk ? tr("on") : tr("off"));
    parts << keyCap(QStringLiteral("+")) + keyCap(QStringLiteral("−")) + tr(" T = %1").arg(s.temperature, 0, 'f', 2);
    parts << keyCap(QStringLiteral("P")) + tr(" positions: %1").arg(positionalName(s.positional));
    parts << keyCap(QStringLiteral("←")) + keyCap(QStringLiteral("→")) + tr(" head %1 of %2").arg(f.head).arg(heads);
    parts << keyCap(QStringLiteral("↑")) + keyCap(QStringLiteral("↓")) + tr(" layer %1 of %2").arg(f.layer).arg(layers);
    parts << keyCap(QStringLiteral("C")) + (s.blockedKeys.empty()        ? tr(" no key blocked")
                                                    : s.blockedKeys.size() == 1 ? tr(" unblock 1 key")
                                                                                : tr(" unblock %1 keys").arg(s.blockedKeys.size()));
    parts << keyCap(QStringLiteral("L")) + (m_lessons->isVisible() ? tr(" hide lesson") : tr(" show lesson"));
    parts << keyCap(QStringLiteral("1–%1").arg(std::min(9, int(pages.size())))) + QLatin1Char(' ') + tabName.toHtmlEscaped();
    parts << keyCap(tr("Esc")) + tr(" leave");
    Q_ASSERT(parts.size() == kStripCells);
    for (int i = 0; i < kStripCells; ++i) m_stripCells[std::size_t(i)]->setText(parts[i]);
    arrangeStrip();
}

void PresenterMode::arrangeStrip()
{
    // As many columns as the widest cell allows, at least one: four on a wide screen, two on a projector
    // of 1024 pixels at twice the type.
    auto* grid = static_cast<QGridLayout*>(m_cells->layout());
    int widest = 1;
    for (const QLabel* cell : m_stripCells) widest = std::max(widest, cell->sizeHint().width());
    const QMargins margins = grid->contentsMargins();
    const int room = m_cells->width() - margins.left() - margins.right();
    const int spacing = grid->horizontalSpacing();
    const int columns = std::clamp((room + spacing) / (widest + spacing), 1, 5);
    if (columns == m_columns) return;
    m_columns = columns;
    for (QLabel* cell : m_stripCells) grid->removeWidget(cell);
    for (int i = 0; i < kStripCells; ++i) grid->addWidget(m_stripCells[std::size_t(i)], i / columns, i % columns);
}

QString PresenterMode::stripText() const
{
    QStringList cells;
    for (const QLabel* cell : m_stripCells) cells << cell->text();
    QTextDocument doc;
    doc.setHtml(cells.join(QStringLiteral(" ")));
    return doc.toPlainText().simplified();  // the key caps' non-breaking spaces count as spaces
}

} // namespace attnscope
