#pragma once
// The core's sentences ("the corpus has no documents: every line is empty.") start in lower case, as the CLI
// prints them after "error: "; the window shows them as sentences of their own, capitalised.
#include <QString>
#include <string>

namespace attnscope {

inline QString coreSentence(const std::string& text)
{
    QString s = QString::fromStdString(text);
    if (!s.isEmpty()) s[0] = s[0].toUpper();
    return s;
}

} // namespace attnscope
