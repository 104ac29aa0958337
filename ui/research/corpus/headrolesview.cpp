#include "ui/research/corpus/headrolesview.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cmath>

#include "ui/attention/headgridview.h"

namespace attnscope {

namespace {

// Sorts by the number it holds (NaN last), shows it to three decimals or as a dash.
class ScoreItem : public QTableWidgetItem {
public:
    explicit ScoreItem(double value, int decimals = 3) : m_value(value)
    {
        setText(std::isfinite(value) ? QString::number(value, 'f', decimals) : QStringLiteral("—"));
        setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    }
    bool operator<(const QTableWidgetItem& other) const override
    {
        const auto* o = dynamic_cast<const ScoreItem*>(&other);
        if (!o) return QTableWidgetItem::operator<(other);
        if (std::isnan(m_value)) return false;
        if (std::isnan(o->m_value)) return true;
        return m_value < o->m_value;
    }

private:
    double m_value;
};

QString scoreText(double v) { return std::isfinite(v) ? QString::number(v, 'f', 2) : QStringLiteral("—"); }

} // namespace

QString describeRoles(const RoleScores& s)
{
    QStringList parts;
    for (int r = 0; r < kHeadRoleCount; ++r) {
        const HeadRole role = static_cast<HeadRole>(r);
        parts << QStringLiteral("%1 %2").arg(QString::fromLatin1(roleName(role)), scoreText(roleScore(s, role)));
    }
    return parts.join(QStringLiteral("\n"));
}

void showRoleBadges(HeadGridView& grid, const HeadRoleScores& roles, const QString& where)
{
    const std::vector<std::vector<HeadRole>> badges = roleBadges(roles);
    std::vector<QStringList> badgeText(badges.size());
    std::vector<QString> tips(badges.size());
    for (int l = 0; l < roles.layers; ++l)
        for (int h = 0; h < roles.heads; ++h) {
            const std::size_t i = std::size_t(l * roles.heads + h);
            for (HeadRole role : badges[i]) badgeText[i] << QString::fromLatin1(roleBadge(role));
            const QString head = where.isEmpty() ? HeadRolesView::tr("Layer %1, head %2").arg(l).arg(h)
                                                 : HeadRolesView::tr("Layer %1, head %2 %3").arg(l).arg(h).arg(where);
            tips[i] = head + QLatin1Char('\n') + describeRoles(roles.at(l, h));
        }
    grid.setBadges(std::move(badgeText));
    grid.setHeadToolTips(std::move(tips));
}

HeadRolesView::HeadRolesView(Document* document, QWidget* parent)
    : ResearchView(document, parent), m_grid(new HeadGridView), m_table(new QTableWidget), m_seed(new QSpinBox)
{
    m_seed->setRange(0, 1'000'000);
    m_seed->setValue(1);
    m_seed->setToolTip(tr("The seed of the probe's random tokens"));
    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Probe seed")));
    top->addWidget(m_seed);
    top->addStretch(1);

    // Short headers (the badges' names) keep the table narrow; hovering one names the score in full.
    m_table->setColumnCount(3 + kHeadRoleCount);
    auto header = [this](int column, const QString& text, const QString& tip) {
        auto* item = new QTableWidgetItem(text);
        item->setToolTip(tip);
        m_table->setHorizontalHeaderItem(column, item);
    };
    header(0, tr("layer"), tr("Layer, from 0"));
    header(1, tr("head"), tr("Head, from 0"));
    for (int r = 0; r < kHeadRoleCount; ++r) {
        const HeadRole role = static_cast<HeadRole>(r);
        header(2 + r, QString::fromLatin1(roleBadge(role)), tr("%1 score").arg(QString::fromLatin1(roleName(role))));
    }
    header(2 + kHeadRoleCount, tr("roles"), tr("The roles whose score passes its threshold and twice chance"));
    m_table->verticalHeader()->setVisible(false);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setSortingEnabled(true);

    m_note = new QLabel;
    m_note->setWordWrap(true);
    QSplitter* split = proportionalSplit(Qt::Horizontal, {m_grid, m_table}, {2, 3});
    auto* column = new QVBoxLayout(this);
    column->addLayout(top);
    column->addWidget(split, 1);
    column->addWidget(m_note);
    column->addWidget(makeStatusLabel());

    m_seed->setToolTip(tr("The seed of the probe of repeated random tokens, on which duplicate-token and induction heads are measured."));
    connect(m_seed, &QSpinBox::valueChanged, this, [this] { refresh(); });
    connect(m_grid, &HeadGridView::headClicked, document, &Document::setFocus);
    connect(document, &Document::focusChanged, m_grid, &HeadGridView::setFocusedHead);
}

ResearchJob HeadRolesView::job(const SnapshotPtr& snapshot)
{
    const QString nothing = snapshot->model ? QString() : tr("No model is loaded.");
    return [snapshot, nothing, seed = std::uint64_t(m_seed->value())](const JobContext&) -> ResearchResultPtr {
        if (!nothing.isEmpty()) return errorResult(nothing);
        return fromCore(computeHeadRoles(*snapshot->model, snapshot->tokens.ids, snapshot->settings, seed));
    };
}

void HeadRolesView::showResult(const SnapshotPtr& snapshot, const ResearchResultPtr& result)
{
    m_grid->setSnapshot(snapshot);
    const auto* r = dynamic_cast<const HeadRolesResult*>(result.get());
    m_table->setSortingEnabled(false);
    m_table->setRowCount(0);
    if (!r) {
        m_grid->setBadges({});
        m_grid->setHeadToolTips({});
        m_note->clear();
        return;
    }
    const HeadRoleScores& roles = r->value;
    const std::vector<std::vector<HeadRole>> badges = roleBadges(roles);
    m_table->setRowCount(roles.layers * roles.heads);
    for (int l = 0; l < roles.layers; ++l)
        for (int h = 0; h < roles.heads; ++h) {
            const std::size_t i = std::size_t(l * roles.heads + h);
            QStringList names;
            for (HeadRole role : badges[i]) names << QString::fromLatin1(roleName(role));
            const int row = int(i);
            m_table->setItem(row, 0, new ScoreItem(l, 0));
            m_table->setItem(row, 1, new ScoreItem(h, 0));
            for (int c = 0; c < kHeadRoleCount; ++c) m_table->setItem(row, 2 + c, new ScoreItem(roleScore(roles.at(l, h), static_cast<HeadRole>(c))));
            m_table->setItem(row, 2 + kHeadRoleCount, new QTableWidgetItem(names.join(QStringLiteral(", "))));
        }
    m_table->setSortingEnabled(true);
    showRoleBadges(*m_grid, roles);

    const RoleScores& c = roles.chance;
    m_note->setText(tr("Previous token, first token and self are measured on %1; duplicate token and induction on a probe of "
                       "%2 random tokens repeated twice. A badge (prev, first, self, dup, ind) means the score is at least "
                       "%3 (first token %4) and at least twice what uniform attention scores here (chance: prev %5, "
                       "first %6, self %7, dup %8, ind %9). Hover a head for its scores.")
                        .arg(roles.positionalFromSentence ? tr("the sentence") : tr("the probe (no sentence)"))
                        .arg(roles.probeIds.size() / 2)
                        .arg(roleThreshold(HeadRole::PreviousToken), 0, 'f', 1)
                        .arg(roleThreshold(HeadRole::FirstToken), 0, 'f', 1)
                        .arg(scoreText(c.previousToken), scoreText(c.firstToken), scoreText(c.self),
                             scoreText(c.duplicateToken), scoreText(c.induction)));
}

} // namespace attnscope
