#include "core/text/bpetokenizer.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstring>
#include <queue>

#include "core/text/bpetables.h"
#include "core/text/utf8.h"

namespace attnscope {

namespace {

// GPT-2's bytes-to-unicode table both ways: code point -> byte (-1 for code points that spell no byte) and
// byte -> code point. Printable Latin-1 bytes stand for themselves; the other 68 bytes take U+0100
// upwards, in byte order.
struct ByteAlphabet {
    int byteOf[512];
    char32_t charOf[256];
    ByteAlphabet()
    {
        for (int& b : byteOf) b = -1;
        auto printable = [](int b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); };
        int next = 256;
        for (int b = 0; b < 256; ++b) {
            charOf[b] = static_cast<char32_t>(printable(b) ? b : next++);
            byteOf[charOf[b]] = b;
        }
    }
};

const ByteAlphabet& alphabet()
{
    static const ByteAlphabet table;
    return table;
}

// Spells a vocabulary symbol back as bytes; false when a code point is outside the alphabet.
bool symbolToBytes(const std::string& symbol, std::string& bytes)
{
    bytes.clear();
    for (std::size_t i = 0; i < symbol.size();) {
        const char32_t cp = utf8::next(symbol, i);
        if (cp >= 512 || alphabet().byteOf[cp] < 0) return false;
        bytes += static_cast<char>(alphabet().byteOf[cp]);
    }
    return true;
}

// Spells one byte in the alphabet, as UTF-8.
std::string byteSymbol(unsigned char b)
{
    std::string s;
    utf8::append(s, alphabet().charOf[b]);
    return s;
}

std::uint64_t pairKey(int left, int right)
{
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) | static_cast<std::uint32_t>(right);
}

// "<0x0A>" -> 0x0A; -1 for any other spelling.
int byteFallbackValue(const std::string& spelling)
{
    static const char* hex = "0123456789ABCDEF";
    if (spelling.size() != 6 || !spelling.starts_with("<0x") || spelling[5] != '>') return -1;
    const char* hi = std::strchr(hex, spelling[3]);
    const char* lo = std::strchr(hex, spelling[4]);
    if (!hi || !lo || !spelling[3] || !spelling[4]) return -1;
    return int(hi - hex) * 16 + int(lo - hex);
}

} // namespace

Result<std::shared_ptr<const BpeTokenizer>> BpeTokenizer::build(Tables t)
{
    using R = Result<std::shared_ptr<const BpeTokenizer>>;
    std::shared_ptr<BpeTokenizer> tok(new BpeTokenizer());
    const bool byteLevel = t.pipeline.byteLevel();

    // 1. Ids: non-negative, bounded, each used once. Gaps are allowed and decode to nothing.
    long long maxId = -1;
    for (const auto& [symbol, id] : t.vocab) {
        if (id < 0 || id > kMaxBpeTokenId)
            return R::fail("'" + t.vocabFile + "' gives the token '" + symbol + "' the id " + std::to_string(id) +
                           ", outside 0 to " + std::to_string(kMaxBpeTokenId) + ".");
        maxId = std::max(maxId, id);
    }
    if (maxId < 0) return R::fail("the vocabulary in '" + t.vocabFile + "' is empty.");
    for (const AddedToken& a : t.pipeline.addedTokens) maxId = std::max<long long>(maxId, a.id);
    for (const std::vector<int>* side : {&t.pipeline.prefix, &t.pipeline.suffix})
        for (int id : *side) maxId = std::max<long long>(maxId, id);
    tok->m_spelling.assign(static_cast<std::size_t>(maxId + 1), std::string());
    tok->m_bytes.assign(static_cast<std::size_t>(maxId + 1), std::string());
    std::vector<unsigned char> used(static_cast<std::size_t>(maxId + 1), 0);
    tok->m_idOf.reserve(t.vocab.size());
    for (const auto& [symbol, id64] : t.vocab) {
        const auto id = static_cast<std::size_t>(id64);
        if (used[id]) return R::fail("'" + t.vocabFile + "' gives the id " + std::to_string(id) + " to more than one token.");
        used[id] = 1;
        tok->m_idOf.emplace(symbol, static_cast<int>(id));
        tok->m_spelling[id] = symbol;
        // The bytes a symbol stands for: GPT-2's alphabet spelled back, "<0x0A>" as its byte, '▁' as a space.
        // A symbol outside the byte alphabet can never come out of byte-level BPE; it keeps its text.
        std::string bytes;
        if (byteLevel && symbolToBytes(symbol, bytes)) tok->m_bytes[id] = bytes;
        else if (!byteLevel && byteFallbackValue(symbol) >= 0) tok->m_bytes[id] = std::string(1, char(byteFallbackValue(symbol)));
        else if (!byteLevel) {
            std::string text = symbol;
            for (std::size_t i = 0; (i = text.find("\xE2\x96\x81", i)) != std::string::npos;) text.replace(i, 3, " ");
            tok->m_bytes[id] = text;
        } else tok->m_bytes[id] = symbol;
    }
    for (const AddedToken& a : t.pipeline.addedTokens) {
        const auto id = static_cast<std::size_t>(a.id);
        if (used[id] && tok->m_spelling[id] != a.content)
            return R::fail("'" + t.vocabFile + "' gives the added token '" + a.content + "' the id " + std::to_string(id) +
                           ", which the vocabulary already uses for '" + tok->m_spelling[id] + "'.");
        used[id] = 1;
        tok->m_spelling[id] = a.content;
        tok->m_bytes[id] = a.content;
    }

    // 2. Byte-level BPE starts from single bytes, so every byte needs a symbol; SentencePiece-style BPE may
    //    fall back to "<0x0A>"-style tokens and to the unknown token.
    for (int b = 0; b < 256; ++b) {
        tok->m_byteFallbackId[b] = -1;
        if (!byteLevel) continue;
        tok->m_byteSpelling[b] = byteSymbol(static_cast<unsigned char>(b));
        auto it = tok->m_idOf.find(tok->m_byteSpelling[b]);
        if (it == tok->m_idOf.end()) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned>(b));
            return R::fail("'" + t.vocabFile + "' has no token for the byte " + hex + "; a byte-level vocabulary needs all 256.");
        }
        tok->m_byteId[b] = it->second;
    }
    if (!byteLevel)
        for (const auto& [symbol, id] : tok->m_idOf)
            if (const int b = byteFallbackValue(symbol); b >= 0) tok->m_byteFallbackId[b] = id;
    if (!t.unknown.empty()) {
        const auto it = tok->m_idOf.find(t.unknown);
        if (it == tok->m_idOf.end())
            return R::fail("'" + t.vocabFile + "' names the unknown token '" + t.unknown + "', which is not in its vocabulary.");
        tok->m_unknownId = it->second;
    }

    // 3. Merges, by rank. Both halves and the joined symbol must be tokens, as in Hugging Face's loader.
    tok->m_merges.reserve(t.merges.size());
    for (std::size_t r = 0; r < t.merges.size(); ++r) {
        const auto& [left, right] = t.merges[r];
        const std::string where = (t.mergesFile == t.vocabFile ? "merge " : "line ") + std::to_string(t.mergeLines[r]) +
                                  " of '" + t.mergesFile + "'";
        auto l = tok->m_idOf.find(left), rt = tok->m_idOf.find(right), m = tok->m_idOf.find(left + right);
        if (l == tok->m_idOf.end() || rt == tok->m_idOf.end() || m == tok->m_idOf.end())
            return R::fail(where + " merges '" + left + "' and '" + right + "', but '" +
                           (l == tok->m_idOf.end() ? left : rt == tok->m_idOf.end() ? right : left + right) +
                           "' is not in the vocabulary '" + t.vocabFile + "'.");
        // The first (lowest) rank wins should a pair be listed twice.
        tok->m_merges.emplace(pairKey(l->second, rt->second), Merge{static_cast<int>(r), m->second});
    }

    for (const AddedToken& a : t.pipeline.addedTokens)
        if (a.special) tok->m_specialIds.insert(a.id);
    for (const std::vector<int>* side : {&t.pipeline.prefix, &t.pipeline.suffix}) tok->m_specialIds.insert(side->begin(), side->end());
    tok->m_pipeline = std::move(t.pipeline);
    tok->m_byteFallback = t.byteFallback;
    tok->m_fuseUnknown = t.fuseUnknown;
    tok->m_ignoreMerges = t.ignoreMerges;
    tok->m_showBytes = t.gpt2;
    if (!t.gpt2) {
        bool sentencePiece = t.byteFallback;
        for (const PreTokenizerStep& s : tok->m_pipeline.preTokenizers) sentencePiece |= s.kind == PreTokenizerStep::Kind::Metaspace;
        for (const NormalizerStep& s : tok->m_pipeline.normalizers)
            sentencePiece |= s.kind == NormalizerStep::Kind::Prepend && s.text == "\xE2\x96\x81";
        tok->m_kind = byteLevel ? "byte-level-bpe" : sentencePiece ? "sentencepiece-bpe" : "bpe";
    }
    return R::ok(std::move(tok));
}

void BpeTokenizer::initialSymbols(std::string_view piece, std::vector<int>& symbols, std::vector<int>& starts) const
{
    symbols.clear();
    starts.clear();
    if (m_pipeline.byteLevel()) {
        for (std::size_t i = 0; i < piece.size(); ++i) {
            symbols.push_back(m_byteId[static_cast<unsigned char>(piece[i])]);
            starts.push_back(int(i));
        }
        return;
    }
    // Characters, as Hugging Face's BPE model starts: the vocabulary's symbol for each; else its bytes as
    // "<0x0A>"-style tokens (byte_fallback); else the unknown token, one run of unknown characters fused
    // into one (fuse_unk); else nothing. A pending unknown waits for the next known character, as there.
    int pendingUnknown = -1, unknownStart = 0;
    std::string character;
    for (std::size_t i = 0; i < piece.size();) {
        const std::size_t begin = i;
        utf8::next(piece, i);
        character.assign(piece.substr(begin, i - begin));
        auto push = [&](int id, std::size_t at) {
            symbols.push_back(id);
            starts.push_back(int(at));
        };
        if (const auto it = m_idOf.find(character); it != m_idOf.end()) {
            if (pendingUnknown >= 0) push(pendingUnknown, std::size_t(unknownStart));
            pendingUnknown = -1;
            push(it->second, begin);
            continue;
        }
        if (m_byteFallback &&
            std::all_of(character.begin(), character.end(), [this](char b) { return m_byteFallbackId[static_cast<unsigned char>(b)] >= 0; })) {
            for (std::size_t b = begin; b < i; ++b) push(m_byteFallbackId[static_cast<unsigned char>(piece[b])], b);
            continue;
        }
        // A character with no symbol at all is dropped, as there; it is then part of the token before it.
        if (m_unknownId < 0) continue;
        if (pendingUnknown >= 0 && !m_fuseUnknown) push(pendingUnknown, std::size_t(unknownStart));
        if (pendingUnknown < 0 || !m_fuseUnknown) unknownStart = int(begin);
        pendingUnknown = m_unknownId;
    }
    if (pendingUnknown >= 0) {
        symbols.push_back(pendingUnknown);
        starts.push_back(unknownStart);
    }
}

void BpeTokenizer::merge(std::vector<int>& ids, std::vector<int>& starts) const
{
    // Symbols form a linked list; a heap hands out the adjacent pair with the lowest rank, leftmost first,
    // which merges in the same order as the reference's repeated scans but in O(n log n) rather than
    // O(n^2) for long pieces.
    struct Symbol {
        int id, prev, next;
    };
    struct Candidate {
        int rank, pos, left, right;
        bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
    };
    const int n = static_cast<int>(ids.size());
    std::vector<Symbol> symbols(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) symbols[static_cast<std::size_t>(i)] = {ids[static_cast<std::size_t>(i)], i - 1, i + 1 < n ? i + 1 : -1};
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
    auto consider = [&](int pos) {
        if (pos < 0) return;
        const Symbol& s = symbols[static_cast<std::size_t>(pos)];
        if (s.next < 0) return;
        const int right = symbols[static_cast<std::size_t>(s.next)].id;
        auto it = m_merges.find(pairKey(s.id, right));
        if (it != m_merges.end()) heap.push({it->second.rank, pos, s.id, right});
    };
    for (int i = 0; i + 1 < n; ++i) consider(i);

    while (!heap.empty()) {
        const Candidate c = heap.top();
        heap.pop();
        Symbol& left = symbols[static_cast<std::size_t>(c.pos)];
        // Stale entries: one side has been merged into something else since the pair was queued.
        if (left.id != c.left || left.next < 0) continue;
        Symbol& right = symbols[static_cast<std::size_t>(left.next)];
        if (right.id != c.right) continue;
        left.id = m_merges.at(pairKey(c.left, c.right)).merged;
        right.id = -1;
        left.next = right.next;
        if (right.next >= 0) symbols[static_cast<std::size_t>(right.next)].prev = c.pos;
        consider(left.prev);
        consider(c.pos);
    }
    // A merged symbol starts where its leftmost part started.
    ids.clear();
    std::size_t kept = 0;
    for (int i = 0; i >= 0 && n > 0; i = symbols[static_cast<std::size_t>(i)].next) {
        ids.push_back(symbols[static_cast<std::size_t>(i)].id);
        starts[kept++] = starts[static_cast<std::size_t>(i)];
    }
    starts.resize(kept);
}

Result<TokenizedText> BpeTokenizer::encode(std::string_view text) const
{
    using R = Result<TokenizedText>;
    if (const std::size_t bad = utf8::firstInvalidByte(text); bad != std::string_view::npos) return R::fail(utf8::invalidMessage(text, bad));
    std::vector<TextUnit> units;
    if (Status s = m_pipeline.split(text, units); !s.ok()) return R::fail(s.error());

    TokenizedText out;
    out.ids = m_pipeline.prefix;
    out.spans.assign(out.ids.size(), TextSpan::added());
    std::vector<int> symbols, starts;
    std::string spelled;
    for (const TextUnit& unit : units) {
        if (unit.id >= 0) {
            out.ids.push_back(unit.id);
            out.spans.push_back({unit.matched.begin, unit.matched.end, unit.special});
            continue;
        }
        const std::string& piece = unit.piece.text;
        // ignore_merges (Llama 3): a piece the vocabulary spells whole is one token, merges or not.
        if (m_ignoreMerges) {
            spelled.clear();
            if (m_pipeline.byteLevel())
                for (char c : piece) spelled += m_byteSpelling[static_cast<unsigned char>(c)];
            const auto it = m_idOf.find(m_pipeline.byteLevel() ? spelled : piece);
            if (it != m_idOf.end()) {
                out.ids.push_back(it->second);
                const ByteRange r = unit.piece.originOf(0, piece.size());
                out.spans.push_back({r.begin, r.end, false});
                continue;
            }
        }
        initialSymbols(piece, symbols, starts);
        merge(symbols, starts);
        out.ids.insert(out.ids.end(), symbols.begin(), symbols.end());
        // Each token covers the piece's bytes from its start to the next token's (the last, to the end).
        for (std::size_t t = 0; t < symbols.size(); ++t) {
            const std::size_t end = t + 1 < symbols.size() ? std::size_t(starts[t + 1]) : piece.size();
            const ByteRange r = unit.piece.originOf(std::size_t(starts[t]), end);
            out.spans.push_back({r.begin, r.end, false});
        }
    }
    for (int id : m_pipeline.suffix) {
        out.ids.push_back(id);
        out.spans.push_back(TextSpan::added());
    }
    out.tokens.reserve(out.ids.size());
    for (int id : out.ids) out.tokens.push_back(displayToken(id));
    return R::ok(std::move(out));
}

DecodedText BpeTokenizer::decodeWithSpans(const std::vector<int>& ids) const
{
    // The raw bytes; the special added tokens and the post-processor's (<s>, </s>) read as nothing.
    DecodedText out;
    for (int id : ids) {
        if (m_specialIds.contains(id) || id < 0 || id >= vocabSize()) {
            out.spans.push_back(TextSpan::added());
            continue;
        }
        const std::string& bytes = tokenBytes(id);  // a SentencePiece-style "▁" is a space here already
        out.spans.push_back({int(out.text.size()), int(out.text.size() + bytes.size()), false});
        out.text += bytes;
    }
    // A text cut inside a character (a generation that stopped there) is not UTF-8: each byte that breaks
    // it reads as '?', which keeps every span where it was.
    for (std::size_t bad; (bad = utf8::firstInvalidByte(out.text)) != std::string::npos;) out.text[bad] = '?';
    return out;
}

const std::string& BpeTokenizer::tokenBytes(int id) const
{
    static const std::string none;
    if (id < 0 || id >= vocabSize()) return none;
    return m_bytes[static_cast<std::size_t>(id)];
}

const std::string& BpeTokenizer::spelling(int id) const
{
    static const std::string none;
    if (id < 0 || id >= vocabSize()) return none;
    return m_spelling[static_cast<std::size_t>(id)];
}

std::string BpeTokenizer::displayToken(int id) const { return m_showBytes ? displayBytes(tokenBytes(id)) : spelling(id); }

std::string BpeTokenizer::decode(const std::vector<int>& ids) const
{
    std::string text;
    for (int id : ids) text += tokenBytes(id);
    return text;
}

std::string displayBytes(std::string_view bytes)
{
    std::string out;
    std::size_t i = 0;
    if (!bytes.empty() && bytes[0] == ' ') {
        out += "\xC2\xB7";  // U+00B7 MIDDLE DOT
        i = 1;
    }
    while (i < bytes.size()) {
        // Copy the longest valid run, then show the byte that breaks it as <0xNN>.
        const std::string_view rest = bytes.substr(i);
        const std::size_t bad = utf8::firstInvalidByte(rest);
        if (bad == std::string_view::npos) {
            out += rest;
            break;
        }
        out += rest.substr(0, bad);
        char hex[8];
        std::snprintf(hex, sizeof hex, "<0x%02X>", static_cast<unsigned>(static_cast<unsigned char>(rest[bad])));
        out += hex;
        i += bad + 1;
    }
    return out;
}

} // namespace attnscope
