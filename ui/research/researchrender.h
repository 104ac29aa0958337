#pragma once
// Headless rendering of the Research tab's views for `attnscope-cli render --view ...`.
#include <QSize>
#include <QString>
#include <QStringList>

namespace attnscope {

class Document;

// heads-roles, ablation, importance, rollout, attribution, qk-map.
QStringList researchViewNames();

// Builds the named view over `doc`, waits for its measurement, lays it out at `size` and writes it to
// `path` (PNG, SVG or PDF by the extension). On failure returns false with a sentence in *error. Needs a
// QApplication (the offscreen platform is enough).
// `query` picks a token (-1: the last): the rollout's row, the query marked on the query-key map.
bool renderResearchView(const QString& view, Document& doc, const QString& path, QSize size, int query, QString* error);

} // namespace attnscope
