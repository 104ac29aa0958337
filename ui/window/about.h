#pragma once
// Help → About: what this is and the versions it was built with and runs on.
#include <QString>

namespace attnscope {

QString attnscopeVersion();
// "AttnScope 0.1.0 · Qt 6.4.2 (built with 6.4.2) · Eigen 3.4.0 · QCustomPlot 2.1.0", one item per line in
// the dialog.
QString versionsText();
// The whole About text (rich text).
QString aboutText();

} // namespace attnscope
