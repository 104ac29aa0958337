#include "core/text/pipeline.h"

#include <algorithm>
#include <cassert>

#include <utf8proc.h>

#include "core/text/utf8.h"

namespace attnscope {

namespace {

using Span = std::pair<std::size_t, std::size_t>;

// GPT-2's pre-tokenisation pattern, which ByteLevel with use_regex applies: contractions, optionally
// space-led runs of letters, of digits and of other symbols, then white space (a run followed by text
// gives its last space to the next piece).
constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

const Regex& gpt2Regex()
{
    static const Regex regex = *Regex::compile(kGpt2Pattern);
    return regex;
}

// Unicode White_Space, which the added-token rules strip (Rust's \s).
bool isSpace(char32_t c)
{
    return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
           c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// A word character (Rust's \w): letters, marks, decimal and letter numbers, connector punctuation.
bool isWordChar(char32_t c)
{
    switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT: case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_PC: return true;
    default: return c == 0x200C || c == 0x200D;  // the joiners
    }
}

char32_t lastChar(std::string_view s)
{
    std::size_t i = s.size();
    while (i > 0 && (static_cast<unsigned char>(s[i - 1]) & 0xC0) == 0x80) --i;
    if (i > 0) --i;
    return utf8::next(s, i);
}

// Where the white space at the end of s begins.
std::size_t trailingSpaceStart(std::string_view s)
{
    std::size_t end = s.size();
    while (end > 0) {
        std::size_t begin = end - 1;
        while (begin > 0 && (static_cast<unsigned char>(s[begin]) & 0xC0) == 0x80) --begin;
        std::size_t i = begin;
        if (!isSpace(utf8::next(s, i))) break;
        end = begin;
    }
    return end;
}

// How many bytes of white space s starts with.
std::size_t leadingSpaceLength(std::string_view s)
{
    std::size_t i = 0;
    while (i < s.size()) {
        std::size_t next = i;
        if (!isSpace(utf8::next(s, next))) break;
        i = next;
    }
    return i;
}

// The spans a split keeps, from the pattern's matches, following Hugging Face's SplitDelimiterBehavior.
std::vector<Span> splitSpans(std::size_t length, const std::vector<Span>& matches, SplitBehavior behavior, bool invert)
{
    // 1. The text as alternating gaps and matches, each flagged.
    std::vector<std::pair<Span, bool>> parts;
    std::size_t previous = 0;
    for (const Span& m : matches) {
        if (m.first != previous) parts.push_back({{previous, m.first}, invert});
        parts.push_back({m, !invert});
        previous = m.second;
    }
    if (previous != length) parts.push_back({{previous, length}, invert});
    // 2. What the behaviour keeps and joins.
    std::vector<Span> out;
    bool previousMatch = false;
    switch (behavior) {
    case SplitBehavior::Isolated:
        for (const auto& [span, isMatch] : parts) out.push_back(span);
        break;
    case SplitBehavior::Removed:
        for (const auto& [span, isMatch] : parts)
            if (!isMatch) out.push_back(span);
        break;
    case SplitBehavior::Contiguous:
        for (const auto& [span, isMatch] : parts) {
            if (!out.empty() && isMatch == previousMatch) out.back().second = span.second;
            else out.push_back(span);
            previousMatch = isMatch;
        }
        break;
    case SplitBehavior::MergedWithPrevious:
        for (const auto& [span, isMatch] : parts) {
            if (!out.empty() && isMatch && !previousMatch) out.back().second = span.second;
            else out.push_back(span);
            previousMatch = isMatch;
        }
        break;
    case SplitBehavior::MergedWithNext:
        for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
            if (!out.empty() && it->second && !previousMatch) out.back().first = it->first.first;
            else out.push_back(it->first);
            previousMatch = it->second;
        }
        std::reverse(out.begin(), out.end());
        break;
    }
    return out;
}

Status splitPieces(const Regex& regex, SplitBehavior behavior, bool invert, std::vector<Piece>& pieces)
{
    std::vector<Piece> out;
    std::vector<Span> matches;
    for (Piece& piece : pieces) {
        if (Status s = regex.findAll(piece.text.text, matches); !s.ok()) return s;
        for (const Span& span : splitSpans(piece.text.text.size(), matches, behavior, invert))
            if (span.second > span.first)
                out.push_back({piece.text.substr(span.first, span.second), piece.atStart && span.first == 0});
    }
    pieces = std::move(out);
    return {};
}

} // namespace

void TokenizerPipeline::prepare()
{
    m_original = Matcher();
    m_normalized = Matcher();
    for (std::size_t i = 0; i < addedTokens.size(); ++i) {
        const AddedToken& t = addedTokens[i];
        if (t.content.empty()) continue;
        Matcher& m = t.normalized ? m_normalized : m_original;
        m.byFirstByte[static_cast<unsigned char>(t.content[0])].push_back(static_cast<int>(i));
        m.empty = false;
    }
    for (Matcher* m : {&m_original, &m_normalized})
        for (std::vector<int>& list : m->byFirstByte)
            std::stable_sort(list.begin(), list.end(), [this](int a, int b) {
                return addedTokens[std::size_t(a)].content.size() > addedTokens[std::size_t(b)].content.size();
            });
}

void TokenizerPipeline::splitAdded(const AlignedText& aligned, bool atStart, const Matcher& matcher,
                                   std::vector<std::pair<int, Piece>>& out) const
{
    const std::string_view text = aligned.text;
    auto emitText = [&](std::size_t begin, std::size_t end) {
        if (end > begin) out.push_back({-1, {aligned.substr(begin, end), atStart && begin == 0}});
    };
    if (matcher.empty) {
        emitText(0, text.size());
        return;
    }
    // Leftmost-longest, non-overlapping: scan for the first position where some token matches, take the
    // longest there, and go on after it (also after a match that single_word then discards).
    std::size_t done = 0;  // the text before this is emitted
    std::size_t pos = 0;
    while (pos < text.size()) {
        const AddedToken* found = nullptr;
        for (int index : matcher.byFirstByte[static_cast<unsigned char>(text[pos])]) {
            const AddedToken& t = addedTokens[std::size_t(index)];
            if (text.substr(pos, t.content.size()) == t.content) {
                found = &t;
                break;
            }
        }
        if (!found) {
            ++pos;
            continue;
        }
        std::size_t start = pos, stop = pos + found->content.size();
        pos = stop;
        if (found->singleWord) {
            const bool spaceBefore = start == 0 || !isWordChar(lastChar(text.substr(0, start)));
            std::size_t i = stop;
            const bool spaceAfter = stop == text.size() || !isWordChar(utf8::next(text, i));
            if (!spaceBefore || !spaceAfter) continue;
        }
        const std::size_t tokenBegin = start, tokenEnd = stop;
        if (found->lstrip) start = std::max(trailingSpaceStart(text.substr(0, start)), done);
        if (found->rstrip) stop += leadingSpaceLength(text.substr(stop));
        emitText(done, start);
        out.push_back({found->id, {aligned.substr(tokenBegin, tokenEnd), false}});
        done = stop;
        pos = stop;
    }
    emitText(done, text.size());
}

Status TokenizerPipeline::normalize(std::string& text) const
{
    AlignedText aligned = AlignedText::identity(text);
    if (Status s = normalize(aligned); !s.ok()) return s;
    text = std::move(aligned.text);
    return {};
}

Status TokenizerPipeline::normalize(AlignedText& aligned) const
{
    std::vector<Span> matches;
    for (const NormalizerStep& step : normalizers) {
        switch (step.kind) {
        case NormalizerStep::Kind::Prepend:
            if (!aligned.text.empty()) aligned.prepend(step.text);
            break;
        case NormalizerStep::Kind::Replace:
            if (Status s = step.pattern->findAll(aligned.text, matches); !s.ok()) return s;
            aligned.replace(matches, step.text);
            break;
        case NormalizerStep::Kind::Nfc:
            if (Status s = aligned.unicodeNormalize(UTF8PROC_COMPOSE); !s.ok()) return s;
            break;
        case NormalizerStep::Kind::Nfd:
            if (Status s = aligned.unicodeNormalize(UTF8PROC_DECOMPOSE); !s.ok()) return s;
            break;
        case NormalizerStep::Kind::Nfkc:
            if (Status s = aligned.unicodeNormalize(UTF8PROC_COMPOSE | UTF8PROC_COMPAT); !s.ok()) return s;
            break;
        case NormalizerStep::Kind::Nfkd:
            if (Status s = aligned.unicodeNormalize(UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT); !s.ok()) return s;
            break;
        case NormalizerStep::Kind::Precompiled:
            step.charsMap->normalize(aligned);
            if (!utf8::isValid(aligned.text)) return Status::failure("the tokenizer's character map turned the text into bytes that are not UTF-8.");
            break;
        case NormalizerStep::Kind::Strip: {
            const std::string_view text = aligned.text;
            std::size_t begin = 0, end = text.size();
            while (step.left && begin < text.size()) {
                std::size_t next = begin;
                if (!isSpace(utf8::next(text, next))) break;
                begin = next;
            }
            if (step.right) {
                std::size_t last = begin;  // the end of the last character that is not white space
                for (std::size_t i = begin; i < text.size();)
                    if (!isSpace(utf8::next(text, i))) last = i;
                end = last;
            }
            aligned.keep(begin, end);
            break;
        }
        }
    }
    return {};
}

Status TokenizerPipeline::preTokenize(std::vector<Piece>& pieces) const
{
    for (const PreTokenizerStep& step : preTokenizers) {
        switch (step.kind) {
        case PreTokenizerStep::Kind::Split:
        case PreTokenizerStep::Kind::Digits:
            if (Status s = splitPieces(*step.pattern, step.behavior, step.invert, pieces); !s.ok()) return s;
            break;
        case PreTokenizerStep::Kind::WhitespaceSplit:
            if (Status s = splitPieces(*step.pattern, SplitBehavior::Removed, false, pieces); !s.ok()) return s;
            break;
        case PreTokenizerStep::Kind::ByteLevel:
            if (step.addPrefixSpace)
                for (Piece& p : pieces)
                    if (!p.text.text.starts_with(' ')) p.text.prepend(" ");
            if (step.pattern)
                if (Status s = splitPieces(*step.pattern, SplitBehavior::Isolated, false, pieces); !s.ok()) return s;
            break;
        case PreTokenizerStep::Kind::Metaspace:
            for (Piece& p : pieces) {
                std::vector<Span> spaces;
                for (std::size_t i = 0; i < p.text.text.size(); ++i)
                    if (p.text.text[i] == ' ') spaces.push_back({i, i + 1});
                p.text.replace(spaces, step.replacement);
                const bool prepend = step.prepend == PreTokenizerStep::Prepend::Always ||
                                     (step.prepend == PreTokenizerStep::Prepend::First && p.atStart);
                if (prepend && !p.text.text.starts_with(step.replacement)) p.text.prepend(step.replacement);
            }
            if (step.pattern)
                if (Status s = splitPieces(*step.pattern, SplitBehavior::MergedWithNext, false, pieces); !s.ok()) return s;
            break;
        }
    }
    return {};
}

Status TokenizerPipeline::split(std::string_view text, std::vector<TextUnit>& units) const
{
    units.clear();
    auto isSpecial = [this](int id) {
        return std::any_of(addedTokens.begin(), addedTokens.end(), [id](const AddedToken& t) { return t.id == id && t.special; });
    };
    std::vector<std::pair<int, Piece>> first, second;
    splitAdded(AlignedText::identity(text), true, m_original, first);
    for (auto& [id, segment] : first) {
        if (id >= 0) {
            units.push_back({id, {}, segment.text.originOf(0, segment.text.text.size()), isSpecial(id)});
            continue;
        }
        if (Status s = normalize(segment.text); !s.ok()) return s;
        second.clear();
        splitAdded(segment.text, segment.atStart, m_normalized, second);
        for (auto& [id2, part] : second) {
            if (id2 >= 0) {
                units.push_back({id2, {}, part.text.originOf(0, part.text.text.size()), isSpecial(id2)});
                continue;
            }
            std::vector<Piece> pieces{std::move(part)};
            if (Status s = preTokenize(pieces); !s.ok()) return s;
            for (Piece& p : pieces) units.push_back({-1, std::move(p.text), {}});
        }
    }
    return {};
}

TokenizerPipeline gpt2Pipeline()
{
    TokenizerPipeline p;
    PreTokenizerStep byteLevel;
    byteLevel.kind = PreTokenizerStep::Kind::ByteLevel;
    byteLevel.pattern = gpt2Regex();
    p.preTokenizers.push_back(std::move(byteLevel));
    p.prepare();
    return p;
}

} // namespace attnscope
