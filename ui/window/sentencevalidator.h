#pragma once
// The sentence box's guard against text that freezes the window while it is drawn. A letter carrying
// thousands of combining marks (pasted "Zalgo" text, or the hostile-text catalogue's 100,000 accents on
// one "e") is one grapheme that Qt and HarfBuzz lay out again on every keystroke and paint, at about
// 40 microseconds per mark: 32,000 marks blocked the window for a second per backspace. No script needs
// more than a few marks on a letter (Unicode's stream-safe format allows 30 in a row), so a longer run is
// cut to 30 before the box lays the text out, and the window says so.
#include <QValidator>

namespace attnscope {

// `text` with every run of more than `keep` combining marks (categories Mn, Mc, Me) cut to its first
// `keep`; `cut` is set to how many marks were removed.
QString capCombiningMarks(const QString& text, int keep, qsizetype* cut = nullptr);

class SentenceValidator : public QValidator {
    Q_OBJECT
public:
    static constexpr int kMaxMarks = 30;
    using QValidator::QValidator;
    State validate(QString& input, int& pos) const override;

signals:
    // Marks were cut from the text the box was given; `removed` of them.
    void marksCut(qsizetype removed) const;
};

} // namespace attnscope
