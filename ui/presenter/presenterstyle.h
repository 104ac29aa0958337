#pragma once
// How presenter mode looks: every font of the window at least twice its size, plots' fonts included (their
// axes, titles, legends and labels carry fonts of their own that a window font does not reach), and a
// high-contrast palette: white text on black, yellow for what is selected. Plots keep their white
// background, so a heatmap's colours read as they do on paper.
#include <QFont>
#include <QPalette>

class QWidget;

namespace attnscope {

class PresenterStyle {
public:
    static constexpr double kFontScale = 2.0;

    static QPalette highContrastPalette();

    // Scales the fonts of every plot inside `root` that is not scaled yet, remembering each original on the
    // object, so calling it again after new plots appear scales only those. Replots what it changed.
    static void scalePlotFonts(QWidget* root, double factor);
    // Puts back every font scalePlotFonts changed inside `root`.
    static void restorePlotFonts(QWidget* root);
};

} // namespace attnscope
