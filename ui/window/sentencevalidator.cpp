#include "ui/window/sentencevalidator.h"

#include <algorithm>

namespace attnscope {

QString capCombiningMarks(const QString& text, int keep, qsizetype* cut)
{
    if (cut) *cut = 0;
    // A quick look first: text without a long run of marks is returned as it is.
    qsizetype longest = 0, run = 0;
    for (qsizetype i = 0; i < text.size(); ++i) {
        const char32_t c = text[i].isHighSurrogate() && i + 1 < text.size() && text[i + 1].isLowSurrogate()
                               ? QChar::surrogateToUcs4(text[i], text[i + 1])
                               : text[i].unicode();
        if (c > 0xFFFF) ++i;
        run = QChar::isMark(c) ? run + 1 : 0;
        longest = std::max(longest, run);
    }
    if (longest <= keep) return text;
    QString out;
    out.reserve(text.size());
    run = 0;
    qsizetype removed = 0;
    for (qsizetype i = 0; i < text.size(); ++i) {
        const bool pair = text[i].isHighSurrogate() && i + 1 < text.size() && text[i + 1].isLowSurrogate();
        const char32_t c = pair ? QChar::surrogateToUcs4(text[i], text[i + 1]) : text[i].unicode();
        run = QChar::isMark(c) ? run + 1 : 0;
        if (run > keep) {
            ++removed;
        } else {
            out += text[i];
            if (pair) out += text[i + 1];
        }
        if (pair) ++i;
    }
    if (cut) *cut = removed;
    return out;
}

QValidator::State SentenceValidator::validate(QString& input, int& pos) const
{
    qsizetype removed = 0;
    const QString capped = capCombiningMarks(input, kMaxMarks, &removed);
    if (removed > 0) {
        // The cursor keeps its place among what is left: the runs before it are cut the same way.
        pos = int(capCombiningMarks(input.left(pos), kMaxMarks).size());
        input = capped;
        emit marksCut(removed);
    }
    if (input.size() > kMaxCharacters) {
        // Never half of a surrogate pair at the end.
        qsizetype keep = kMaxCharacters;
        if (input[keep - 1].isHighSurrogate()) --keep;
        const qsizetype cut = input.size() - keep;
        input.truncate(keep);
        pos = int(std::min<qsizetype>(pos, keep));
        emit lengthCut(cut);
    }
    return Acceptable;
}

} // namespace attnscope
