#pragma once
// The core's sentences ("the corpus has no documents: every line is empty.") start in lower case, as the CLI
// prints them after "error: "; the window shows them as sentences of their own, capitalised.
#include <QString>
#include <string>

namespace attnscope {

// The sentence the window opens on: it puts the built-in model's heads to work ("it" looks back to the dog,
// and the repeated half lets the induction head find what came next last time).
inline const QString kDefaultSentence = QStringLiteral("The dog sat on the rug because it barked. The dog sat on the rug");
// The built-in translator's instead: every word is in its English vocabulary (the default sentence's "it"
// and "barked" are not), and its translation moves words about (adjective after noun, verb last).
inline const QString kTranslatorSentence = QStringLiteral("the girl saw the red birds near the river .");

inline QString coreSentence(const std::string& text)
{
    QString s = QString::fromStdString(text);
    if (!s.isEmpty()) s[0] = s[0].toUpper();
    return s;
}

} // namespace attnscope
