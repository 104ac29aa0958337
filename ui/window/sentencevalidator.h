#pragma once
// The sentence box's guard against text that freezes the window while it is drawn. A letter carrying
// thousands of combining marks (pasted "Zalgo" text, or the hostile-text catalogue's 100,000 accents on
// one "e") is one grapheme that Qt and HarfBuzz lay out again on every keystroke and paint, at about
// 40 microseconds per mark: 32,000 marks blocked the window for a second per backspace. No script needs
// more than a few marks on a letter (Unicode's stream-safe format allows 30 in a row), so a longer run is
// cut to 30 before the box lays the text out, and the window says so.
//
// It also holds the text to kMaxCharacters. QLineEdit's own limit, 32,767 characters unless told
// otherwise, cut a longer paste without a word (about 6,800 tokens of English, under the 8,192 of a
// long-context model); the box's limit is now far above any context the window runs, and text past it is
// cut here, where the window can say so.
#include <QValidator>

namespace attnscope {

// `text` with every run of more than `keep` combining marks (categories Mn, Mc, Me) cut to its first
// `keep`; `cut` is set to how many marks were removed.
QString capCombiningMarks(const QString& text, int keep, qsizetype* cut = nullptr);

class SentenceValidator : public QValidator {
    Q_OBJECT
public:
    static constexpr int kMaxMarks = 30;
    // About 200,000 tokens of English, more than the longest context a model here may declare is worth
    // typing into (the pass refuses a text past the model's context with a sentence of its own).
    static constexpr int kMaxCharacters = 1'000'000;
    using QValidator::QValidator;
    State validate(QString& input, int& pos) const override;

signals:
    // Marks were cut from the text the box was given; `removed` of them.
    void marksCut(qsizetype removed) const;
    // The text was longer than kMaxCharacters; `removed` characters were cut from its end.
    void lengthCut(qsizetype removed) const;
};

} // namespace attnscope
