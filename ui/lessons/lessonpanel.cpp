#include "ui/lessons/lessonpanel.h"

#include <QButtonGroup>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QMainWindow>
#include <QPushButton>
#include <QRadioButton>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "ui/common/resizewatcher.h"
#include "ui/lessons/controlhighlight.h"
#include "ui/document/document.h"

namespace attnscope {

namespace {

const char* const kChoiceProperty = "attnscope.lesson.choice";  // on an answer's label: its index

// Paragraphs separated by a blank line, as the lesson format writes them.
QString paragraphsHtml(const std::string& text)
{
    QString html;
    for (const QString& paragraph : QString::fromStdString(text).split(QStringLiteral("\n\n"), Qt::SkipEmptyParts))
        html += QStringLiteral("<p>%1</p>").arg(paragraph.trimmed().toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>")));
    return html;
}

} // namespace

LessonPanel::LessonPanel(QMainWindow* window, Document* document, ModelOpener openModel)
    : QDockWidget(tr("Lessons"), window), m_window(window), m_document(document), m_openModel(std::move(openModel)),
      m_highlight(new ControlHighlight(window))
{
    setObjectName(QStringLiteral("lessons"));
    auto* body = new QWidget(this);
    m_lessonBox = new QComboBox(body);
    m_lessonBox->setObjectName(QStringLiteral("lesson-list"));
    m_lessonBox->setToolTip(tr("Choose a lesson: each one walks through one idea of attention on the live model, step by step."));
    m_openFile = new QPushButton(tr("Open…"), body);
    m_openFile->setToolTip(tr("Open a lesson file (JSON) that a teacher wrote; docs/user-guide.md describes the format."));
    auto* top = new QHBoxLayout;
    top->addWidget(m_lessonBox, 1);
    top->addWidget(m_openFile);

    m_summary = new QLabel(body);
    m_summary->setWordWrap(true);
    m_stepTitle = new QLabel(body);
    m_stepTitle->setWordWrap(true);
    QFont bold = m_stepTitle->font();
    bold.setBold(true);
    bold.setPointSizeF(bold.pointSizeF() * 1.15);
    m_stepTitle->setFont(bold);
    m_text = new QTextBrowser(body);
    m_text->setOpenExternalLinks(false);
    m_text->setMinimumHeight(140);
    m_showAgain = new QPushButton(tr("Set up this step again"), body);
    m_showAgain->setToolTip(tr("Put the window back in this step's state and point at the control again, after you have explored."));

    m_questionBox = new QWidget(body);
    m_prompt = new QLabel(m_questionBox);
    m_prompt->setWordWrap(true);
    m_prompt->setFont(bold);
    m_choices = new QVBoxLayout;
    m_choiceGroup = new QButtonGroup(this);
    m_feedback = new QLabel(m_questionBox);
    m_feedback->setWordWrap(true);
    m_feedback->setObjectName(QStringLiteral("lesson-feedback"));
    auto* questionColumn = new QVBoxLayout(m_questionBox);
    questionColumn->setContentsMargins(0, 6, 0, 0);
    questionColumn->addWidget(m_prompt);
    questionColumn->addLayout(m_choices);
    questionColumn->addWidget(m_feedback);

    m_notice = new QLabel(body);
    m_notice->setWordWrap(true);
    m_notice->setStyleSheet(QStringLiteral("QLabel { color: #8a4b00; }"));
    m_notice->hide();

    m_back = new QPushButton(tr("◀ Back"), body);
    m_back->setToolTip(tr("The previous step of this lesson."));
    m_next = new QPushButton(tr("Next ▶"), body);
    m_next->setToolTip(tr("The next step of this lesson; it sets the window up for you."));
    auto* nav = new QHBoxLayout;
    nav->addWidget(m_back);
    nav->addStretch(1);
    nav->addWidget(m_next);

    auto* column = new QVBoxLayout(body);
    column->addLayout(top);
    column->addWidget(m_summary);
    column->addWidget(m_stepTitle);
    column->addWidget(m_text, 1);
    column->addWidget(m_showAgain);
    column->addWidget(m_questionBox);
    column->addWidget(m_notice);
    column->addLayout(nav);
    setWidget(body);
    window->installEventFilter(new ResizeWatcher(this, [this] { fitWidth(); }));
    fitWidth();

    connect(m_lessonBox, &QComboBox::activated, this, &LessonPanel::startLesson);
    connect(m_openFile, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open Lesson"), QString(), tr("Lessons (*.json)"));
        if (path.isEmpty()) return;
        const QString problem = openLessonFile(path);
        if (!problem.isEmpty()) setNotice(problem);
    });
    connect(m_showAgain, &QPushButton::clicked, this, [this] { showStep(m_step); });
    connect(m_back, &QPushButton::clicked, this, [this] { showStep(m_step - 1); });
    connect(m_next, &QPushButton::clicked, this, [this] {
        const LessonEntry* lesson = currentLesson();
        if (lesson && m_step + 1 < int(lesson->lesson.steps.size())) showStep(m_step + 1);
        else if (m_lesson + 1 < lessonCount()) startLesson(m_lesson + 1);  // "Next lesson ▶" at the end
    });
    connect(m_choiceGroup, &QButtonGroup::idClicked, this, &LessonPanel::answer);
    // Leaving the panel closed ends the outline; it is the lesson's pointer.
    connect(this, &QDockWidget::visibilityChanged, this, [this](bool visible) {
        if (!visible) m_highlight->setTargets({});
        else if (!m_applied) applyStep();
    });

    m_library.load();
    m_entries = m_library.lessons();
    rebuildList();
    if (!m_library.problems().isEmpty())
        setNotice(tr("Some lesson files could not be read:\n%1").arg(m_library.problems().join(QLatin1Char('\n'))));
    if (!m_entries.empty()) startLesson(0);
}

void LessonPanel::rebuildList()
{
    const QSignalBlocker block(m_lessonBox);
    m_lessonBox->clear();
    for (std::size_t i = 0; i < m_entries.size(); ++i)
        m_lessonBox->addItem(QStringLiteral("%1. %2").arg(i + 1).arg(QString::fromStdString(m_entries[i].lesson.title)));
    m_lessonBox->setCurrentIndex(m_lesson);
}

const LessonEntry* LessonPanel::currentLesson() const
{
    return m_lesson >= 0 && m_lesson < lessonCount() ? &m_entries[std::size_t(m_lesson)] : nullptr;
}

QString LessonPanel::openLessonFile(const QString& path)
{
    Result<Lesson> lesson = LessonLibrary::readLesson(path);
    if (!lesson) return QString::fromStdString(lesson.error());
    const QStringList missing = LessonLibrary::missingNames(*lesson, m_window, *m_document);
    m_entries.push_back({QFileInfo(path).completeBaseName(), path, std::move(*lesson)});
    rebuildList();
    startLesson(lessonCount() - 1);
    if (!missing.isEmpty()) setNotice(tr("This lesson names what this window lacks: %1.").arg(missing.join(QStringLiteral("; "))));
    return {};
}

void LessonPanel::startLesson(int index)
{
    if (index < 0 || index >= lessonCount()) return;
    m_lesson = index;
    {
        const QSignalBlocker block(m_lessonBox);
        m_lessonBox->setCurrentIndex(index);
    }
    m_summary->setText(QString::fromStdString(m_entries[std::size_t(index)].lesson.summary));
    m_summary->setVisible(!m_compact && !m_summary->text().isEmpty());
    showStep(0);
}

void LessonPanel::setNotice(const QString& text)
{
    m_notice->setText(text);
    m_notice->setVisible(!text.isEmpty());
}

void LessonPanel::showStep(int index)
{
    const LessonEntry* entry = currentLesson();
    if (!entry || index < 0 || index >= int(entry->lesson.steps.size())) return;
    m_step = index;
    const Lesson& lesson = entry->lesson;
    const LessonStep& step = lesson.steps[std::size_t(index)];
    setNotice(QString());

    // 1. The window first, so the text describes what is on screen; only while the panel is shown, so a
    //    closed panel never changes the window behind a person's back (opening it sets the step up).
    m_applied = false;
    if (isVisible()) applyStep();

    // 2. The text and the question.
    m_stepTitle->setText(tr("Step %1 of %2 · %3").arg(index + 1).arg(lesson.steps.size()).arg(QString::fromStdString(step.title)));
    m_text->setHtml(paragraphsHtml(step.text));
    qDeleteAll(m_choiceRows);  // a button leaves its group as it is destroyed
    m_choiceRows.clear();
    m_feedback->clear();
    m_questionBox->setVisible(step.question.has_value());
    if (step.question) {
        m_prompt->setText(tr("Check yourself: %1").arg(QString::fromStdString(step.question->prompt)));
        // Each answer is a radio button beside a word-wrapped label (a radio button's own text never wraps,
        // and the presenter sidebar is narrow); a click on the label chooses it too.
        for (std::size_t i = 0; i < step.question->choices.size(); ++i) {
            const QString text = QString::fromStdString(step.question->choices[i].text);
            auto* row = new QWidget(m_questionBox);
            auto* choice = new QRadioButton(row);
            choice->setAccessibleName(text);
            choice->setToolTip(tr("Choose this answer to see at once whether it is right and why."));
            auto* label = new QLabel(text, row);
            label->setWordWrap(true);
            label->setProperty(kChoiceProperty, int(i));
            label->installEventFilter(this);
            auto* line = new QHBoxLayout(row);
            line->setContentsMargins(0, 0, 0, 0);
            line->addWidget(choice, 0, Qt::AlignTop);
            line->addWidget(label, 1);
            m_choiceGroup->addButton(choice, int(i));
            m_choices->addWidget(row);
            m_choiceRows.push_back(row);
        }
    }
    const bool last = index + 1 == int(lesson.steps.size());
    m_back->setEnabled(index > 0);
    m_next->setText(last ? tr("Next lesson ▶") : tr("Next ▶"));
    m_next->setEnabled(!last || m_lesson + 1 < lessonCount());
}

void LessonPanel::applyStep()
{
    const LessonEntry* entry = currentLesson();
    if (!entry || m_step < 0) return;
    const LessonStep& step = entry->lesson.steps[std::size_t(m_step)];
    m_applied = true;
    const Result<QStringList> applied = applyScene(*m_document, m_openModel, step.state);
    QStringList notes = applied ? *applied : QStringList{QString::fromStdString(applied.error())};
    notes << outline();
    setNotice(notes.join(QLatin1Char('\n')));
}

QStringList LessonPanel::outline()
{
    const LessonEntry* entry = currentLesson();
    if (!entry || m_step < 0) return {};
    const LessonStep& step = entry->lesson.steps[std::size_t(m_step)];
    QStringList missing;
    std::vector<QWidget*> targets;
    for (const std::string& name : step.highlight) {
        QWidget* w = m_window->findChild<QWidget*>(QString::fromStdString(name));
        if (w) targets.push_back(m_standIn ? m_standIn(w) : w);
        else missing << tr("There is no control called '%1' to point at.").arg(QString::fromStdString(name));
    }
    m_highlight->setTargets(targets);
    return missing;
}

void LessonPanel::refreshHighlight()
{
    if (isVisible() && m_applied) outline();
}

void LessonPanel::setWidestShare(double share)
{
    m_widestShare = share;
    fitWidth();
}

void LessonPanel::fitWidth()
{
    // A sidebar: at most its share of the window, at least sixteen characters (or the share, if less).
    const int widest = std::max(1, int(m_widestShare * m_window->width()));
    const int narrowest = std::min(widest, fontMetrics().averageCharWidth() * 16);
    if (maximumWidth() == widest && minimumWidth() == narrowest) return;
    setMinimumWidth(narrowest);
    setMaximumWidth(widest);
    if (isVisible()) m_window->resizeDocks({this}, {widest}, Qt::Horizontal);
}

void LessonPanel::setCompact(bool on)
{
    m_openFile->setVisible(!on);
    m_summary->setVisible(!on && !m_summary->text().isEmpty());
    m_lessonBox->setSizeAdjustPolicy(on ? QComboBox::AdjustToMinimumContentsLengthWithIcon : QComboBox::AdjustToContentsOnFirstShow);
    m_lessonBox->setMinimumContentsLength(on ? 8 : 0);
    m_showAgain->setText(on ? tr("Set up again") : tr("Set up this step again"));
    m_compact = on;
    fitWidth();  // the type changed with presenter mode
}

void LessonPanel::answer(int choice)
{
    const LessonEntry* entry = currentLesson();
    if (!entry || m_step < 0) return;
    const LessonStep& step = entry->lesson.steps[std::size_t(m_step)];
    if (!step.question || choice < 0 || choice >= int(step.question->choices.size())) return;
    if (QAbstractButton* b = m_choiceGroup->button(choice); b && !b->isChecked()) {
        const QSignalBlocker block(m_choiceGroup);
        b->setChecked(true);
    }
    const LessonChoice& c = step.question->choices[std::size_t(choice)];
    m_feedback->setText((c.correct ? tr("Right. %1") : tr("Not quite. %1")).arg(QString::fromStdString(c.feedback)));
    m_feedback->setStyleSheet(c.correct ? QStringLiteral("QLabel { color: #1b6e20; font-weight: bold; }")
                                        : QStringLiteral("QLabel { color: #a3160c; font-weight: bold; }"));
}

bool LessonPanel::eventFilter(QObject* watched, QEvent* event)
{
    if (event->type() == QEvent::MouseButtonRelease) {
        const QVariant choice = watched->property(kChoiceProperty);
        if (choice.isValid())
            if (QAbstractButton* b = m_choiceGroup->button(choice.toInt())) b->click();
    }
    return QDockWidget::eventFilter(watched, event);
}

QString LessonPanel::feedbackText() const { return m_feedback->text(); }
QString LessonPanel::stepText() const { return m_text->toPlainText(); }
QString LessonPanel::notice() const { return m_notice->isVisible() ? m_notice->text() : QString(); }

} // namespace attnscope
