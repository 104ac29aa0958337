// BERT's WordPiece tokenizer on the hard cases: accents, CJK, jamo, punctuation runs, currency signs,
// control and format characters, very long words, [MASK] inside words, final sigma, dotted capital I.
// Two kinds of expectation: token lists derived here by hand from the published algorithm (each row says
// how), and ids computed once by an independent implementation (tests/data/wordpiece/vectors.json, see
// the README there). The vocabularies are made by tinybert.h.
#include <QTemporaryDir>
#include <QTest>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/text/bertnormalizer.h"
#include "core/text/wordpiecetokenizer.h"
#include "core/text/words.h"
#include "tinybert.h"

using namespace attnscope;

Q_DECLARE_METATYPE(std::vector<std::vector<int>>)
namespace fs = std::filesystem;

Q_DECLARE_METATYPE(std::string)
Q_DECLARE_METATYPE(std::vector<int>)

namespace {

std::vector<int> idsOf(const std::vector<std::string>& vocab, const QStringList& tokens)
{
    std::vector<int> ids;
    for (const QString& t : tokens) ids.push_back(tinybert::idOf(vocab, t.toStdString()));
    return ids;
}

std::string describe(const std::vector<std::string>& tokens)
{
    std::string s;
    for (const std::string& t : tokens) s += (s.empty() ? "" : " ") + t;
    return s;
}

// Every vector of a file in tests/data/wordpiece (uncased, then cased), named "cased 3"; how many there were.
template <class Add>
int forEachVector(const char* file, Add add)
{
    std::ifstream in(std::string(ATTNSCOPE_WORDPIECE_DATA_DIR) + "/" + file);
    if (!in) return 0;
    const nlohmann::json j = nlohmann::json::parse(in);
    int n = 0;
    for (const char* kind : {"uncased", "cased"})
        for (const auto& v : j.at(kind)) add(std::string(kind) + " " + std::to_string(++n), std::string(kind) == "cased", v);
    return n;
}

} // namespace

class TestWordPiece : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    std::shared_ptr<const WordPieceTokenizer> m_uncased, m_cased;

    std::shared_ptr<const WordPieceTokenizer> load(const std::vector<std::string>& vocab, const std::string& name,
                                                    const WordPieceSettings& settings = {})
    {
        const fs::path path = fs::path(m_tmp.path().toStdString()) / name;
        tinybert::writeVocabTxt(path, vocab);
        auto r = WordPieceTokenizer::fromVocabTxt(path.string(), settings);
        if (!r) qFatal("%s", r.error().c_str());
        return *r;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        m_uncased = load(tinybert::vocabulary(false), "vocab-uncased.txt");
        m_cased = load(tinybert::vocabulary(true), "vocab-cased.txt");
        // Regenerating the oracle's vectors needs these vocabularies as files (tests/data/wordpiece/oracle.mjs).
        if (const char* dir = std::getenv("ATTNSCOPE_WORDPIECE_VOCAB_DIR")) {
            tinybert::writeVocabTxt(fs::path(dir) / "vocab-uncased.txt", tinybert::vocabulary(false));
            tinybert::writeVocabTxt(fs::path(dir) / "vocab-cased.txt", tinybert::vocabulary(true));
        }
    }

    void casingIsInferredFromTheVocabulary()
    {
        QVERIFY(m_uncased->lowerCaseInferred());
        QVERIFY(m_uncased->textOptions().lowerCase);
        QVERIFY(m_uncased->textOptions().stripAccents);
        QVERIFY(!m_cased->textOptions().lowerCase);
        QVERIFY(!m_cased->textOptions().stripAccents);
        // What the folder says wins over what the vocabulary suggests.
        WordPieceSettings s;
        s.lowerCase = false;
        auto told = load(tinybert::vocabulary(false), "told.txt", s);
        QVERIFY(!told->lowerCaseInferred());
        QVERIFY(!told->textOptions().lowerCase);
        QCOMPARE(told->encode("The")->tokens, (std::vector<std::string>{"[CLS]", "[UNK]", "[SEP]"}));
        s.lowerCase = true;
        s.stripAccents = false;
        auto noStrip = load(tinybert::vocabulary(false), "nostrip.txt", s);
        QVERIFY(noStrip->textOptions().lowerCase && !noStrip->textOptions().stripAccents);
        // "naïve" keeps its ï, and no piece continues with "ï": the word is [UNK].
        QCOMPARE(noStrip->encode("Straße naïve")->tokens, (std::vector<std::string>{"[CLS]", "straße", "[UNK]", "[SEP]"}));
    }

    void characterClasses()
    {
        QVERIFY(isBertPunctuation(U'$') && isBertPunctuation(U'^') && isBertPunctuation(U'`'));  // ASCII symbols count
        QVERIFY(isBertPunctuation(U'、') && isBertPunctuation(U'¿') && isBertPunctuation(U'—'));
        QVERIFY(!isBertPunctuation(U'€') && !isBertPunctuation(U'a') && !isBertPunctuation(U'😀'));
        QVERIFY(isBertControl(0x200B) && isBertControl(0x00AD) && isBertControl(0x07) && isBertControl(0xE000));
        QVERIFY(!isBertControl(U'\t') && !isBertControl(U'\n') && !isBertControl(U'a'));
        QVERIFY(isBertWhitespace(0x3000) && isBertWhitespace(0x00A0) && isBertWhitespace(0x2028) && isBertWhitespace(U'\r'));
        QVERIFY(!isBertWhitespace(0x200B));
        QVERIFY(isCjkIdeograph(0x4E2D) && isCjkIdeograph(0x20000) && isCjkIdeograph(0xF900));
        QVERIFY(!isCjkIdeograph(0x3042) && !isCjkIdeograph(0xD55C) && !isCjkIdeograph(0x3002));  // hiragana, hangul, 。
    }

    // Expected tokens worked out by hand: clean, space CJK, lower-case and strip accents (uncased), split
    // on white space and punctuation, then the longest vocabulary piece from the left, "##" after the first.
    void handDerived_data()
    {
        QTest::addColumn<bool>("cased");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QStringList>("expected");
        auto row = [](const char* name, bool cased, const QString& text, const QStringList& tokens) {
            QStringList all{"[CLS]"};
            all += tokens;
            all += "[SEP]";
            QTest::newRow(name) << cased << text << all;
        };
        row("plain sentence", false, "The cat sat on the mat.", {"the", "cat", "sat", "on", "the", "mat", "."});
        // NFD splits é, ï, É, Å into a letter and a combining mark (Mn), which is dropped.
        row("accents stripped", false, "Café naïve RÉSUMÉ Ångström", {"cafe", "naive", "resume", "angstrom"});
        row("each CJK ideograph a word", false, "中国人", {"中", "国", "人"});
        // U+20000 is in CJK Extension B, outside the Basic Multilingual Plane: still one word per ideograph.
        row("CJK ideographs beyond U+FFFF", false, "𠀀𠀀", {"𠀀", "𠀀"});
        // Hiragana is not in BERT's CJK ranges, so "かが" stays one word; NFD turns が into か + U+3099 (Mn).
        row("kana is not CJK, voicing mark stripped", false, "日本語かが", {"日", "本", "語", "か", "##か"});
        // NFD decomposes each hangul syllable into conjoining jamo (letters, Lo), which are kept.
        row("hangul decomposes into jamo", false, "한국", {"ᄒ", "##ᅡ", "##ᆫ", "##ᄀ", "##ᅮ", "##ᆨ"});
        row("punctuation runs", false, "Hello!!! ...world?!", {"hello", "!", "!", "!", ".", ".", ".", "world", "?", "!"});
        // $ and + are ASCII symbols, punctuation to BERT; € is a currency symbol (Sc), part of the word.
        row("ASCII symbols split, euro does not", false, "$5 + €5", {"$", "5", "+", "€", "##5"});
        row("NUL, format characters, U+FFFD and BEL vanish (joining what they split); tab, NBSP, line separator, CRLF are spaces", false,
            QString::fromUtf8("a") + QChar(0) + QString::fromUtf8("b\tc\u200Bd\u00ADe\uFFFDf\u2028g\x07h\u00A0i\r\nj"),
            {"ab", "c", "##d", "##e", "##f", "g", "##h", "i", "j"});
        row("[MASK] inside a word splits it", false, "un[MASK]able", {"un", "[MASK]", "able"});
        row("only exact special tokens are kept whole", false, "[mask] [MASK][MASK] [MASK",
            {"[", "mask", "]", "[MASK]", "[MASK]", "[", "mask"});
        row("special tokens typed in the text", false, "[CLS] the [SEP]", {"[CLS]", "the", "[SEP]"});
        // "a" matches but nothing continues with "q" (the vocabulary has no "##q"): the whole word is [UNK].
        row("a word with no full cut is one [UNK]", false, "aquarium quick quiz", {"[UNK]", "quick", "[UNK]"});
        // Full lower-casing turns İ into i + U+0307 (a mark), which accent stripping drops.
        row("dotted capital I", false, "İSTANBUL", {"istanbul"});
        // A capital sigma ending a word lower-cases to the final form ς; "οδοσ" was typed with σ and stays.
        row("final sigma", false, "ΟΔΟΣ οδοσ", {"οδος", "οδοσ"});
        row("sharp s is not expanded", false, "Straße STRASSE", {"straße", "strasse"});
        row("emoji unknown", false, "emoji 😀 emoji", {"emoji", "[UNK]", "emoji"});
        row("longest match first", false, "tokenizer tokenize token", {"tokenize", "##r", "tokenize", "token"});
        row("nothing to say", false, "   \t\n  ", {});
        row("cased keeps capitals and accents", true, "The Café", {"The", "Café"});
        row("cased: no piece for W", true, "Hello WORLD", {"Hello", "[UNK]"});
        row("cased: continuation of a capital", true, "É éA", {"É", "é", "##A"});
    }
    void handDerived()
    {
        QFETCH(bool, cased);
        QFETCH(QString, text);
        QFETCH(QStringList, expected);
        const auto& tok = cased ? m_cased : m_uncased;
        const QByteArray utf8 = text.toUtf8();
        Result<TokenizedText> r = tok->encode(std::string_view(utf8.constData(), std::size_t(utf8.size())));
        QVERIFY2(r, r.error().c_str());
        const std::vector<int> want = idsOf(tinybert::vocabulary(cased), expected);
        QVERIFY2(r->ids == want, describe(r->tokens).c_str());
        for (std::size_t i = 0; i < r->ids.size(); ++i) QCOMPARE(r->tokens[i], tok->displayToken(r->ids[i]));
    }

    void longWords()
    {
        // 100 characters is the longest word WordPiece cuts; one more and the word is [UNK] outright.
        Result<TokenizedText> r = m_uncased->encode(std::string(100, 'a'));
        QVERIFY(r);
        QCOMPARE(r->ids.size(), std::size_t(102));
        QCOMPARE(r->tokens[1], std::string("a"));
        for (std::size_t i = 2; i < 101; ++i) QCOMPARE(r->tokens[i], std::string("##a"));
        r = m_uncased->encode(std::string(101, 'a'));
        QCOMPARE(r->tokens, (std::vector<std::string>{"[CLS]", "[UNK]", "[SEP]"}));
        // Characters, not bytes: 100 two-byte letters are still one cuttable word (é strips to e).
        std::string accented;
        for (int i = 0; i < 100; ++i) accented += "é";
        r = m_uncased->encode(accented);
        QCOMPARE(r->ids.size(), std::size_t(102));
    }

    void manySpecialTokens()
    {
        // Each special token's next occurrence is cached between matches; the result must not change.
        std::string text;
        for (int i = 0; i < 5000; ++i) text += i % 2 ? "a[MASK]" : "[SEP]b ";
        Result<TokenizedText> r = m_uncased->encode(text);
        QVERIFY(r);
        QCOMPARE(r->ids.size(), std::size_t(2 + 2 * 5000));
        const int a = tinybert::idOf(tinybert::vocabulary(), "a"), b = tinybert::idOf(tinybert::vocabulary(), "b");
        for (int i = 0; i < 5000; ++i) {
            const std::size_t at = 1 + 2 * std::size_t(i);
            if (i % 2) QVERIFY(r->ids[at] == a && r->ids[at + 1] == m_uncased->maskTokenId());
            else QVERIFY(r->ids[at] == m_uncased->sepId() && r->ids[at + 1] == b);
        }
    }

    void matchesIndependentImplementation_data()
    {
        QTest::addColumn<bool>("cased");
        QTest::addColumn<std::string>("text");
        QTest::addColumn<std::vector<int>>("ids");
        const int n = forEachVector("vectors.json", [](const std::string& name, bool cased, const nlohmann::json& v) {
            QTest::newRow(name.c_str()) << cased << v.at("text").get<std::string>() << v.at("ids").get<std::vector<int>>();
        });
        QVERIFY(n >= 30);
    }
    void matchesIndependentImplementation()
    {
        QFETCH(bool, cased);
        QFETCH(std::string, text);
        QFETCH(std::vector<int>, ids);
        Result<TokenizedText> r = (cased ? m_cased : m_uncased)->encode(text);
        QVERIFY2(r, r.error().c_str());
        QVERIFY2(r->ids == ids, ("got " + describe(r->tokens) + " for '" + text + "'").c_str());
    }

    // Each token's bytes of the text gather into the words (text/words.h) that Hugging Face's tokenizers
    // library's offsets gather into (tests/data/wordpiece/offsets.json): lower-casing, accent stripping,
    // NFD's Hangul jamo, dropped control characters and CJK ideographs all map back to what was typed.
    void spansMatchIndependentImplementation_data()
    {
        QTest::addColumn<bool>("cased");
        QTest::addColumn<std::string>("text");
        QTest::addColumn<std::vector<std::vector<int>>>("offsets");
        QTest::addColumn<std::vector<int>>("special");
        const int n = forEachVector("offsets.json", [](const std::string& name, bool cased, const nlohmann::json& v) {
            QTest::newRow(name.c_str()) << cased << v.at("text").get<std::string>() << v.at("offsets").get<std::vector<std::vector<int>>>()
                                        << v.at("special").get<std::vector<int>>();
        });
        QVERIFY(n >= 30);
    }
    void spansMatchIndependentImplementation()
    {
        QFETCH(bool, cased);
        QFETCH(std::string, text);
        QFETCH(std::vector<std::vector<int>>, offsets);
        QFETCH(std::vector<int>, special);
        Result<TokenizedText> mine = (cased ? m_cased : m_uncased)->encode(text);
        QVERIFY2(mine, mine.error().c_str());
        QCOMPARE(mine->spans.size(), offsets.size());
        TokenizedText theirs = *mine;
        for (std::size_t t = 0; t < offsets.size(); ++t) {
            const bool added = special[t] && offsets[t][0] == offsets[t][1];
            theirs.spans[t] = added ? TextSpan::added() : TextSpan{offsets[t][0], offsets[t][1], special[t] != 0};
            QCOMPARE(mine->spans[t].special, special[t] != 0);
            // Nothing here prepends or composes: each piece covers exactly the characters it came from.
            QCOMPARE(mine->spans[t], theirs.spans[t]);
        }
        const TextWords mineWords = wordsOf(text, *mine), theirWords = wordsOf(text, theirs);
        QCOMPARE(mineWords.words, theirWords.words);
        QCOMPARE(mineWords.wordOfToken, theirWords.wordOfToken);
    }

    void tokenizerJsonGivesTheSameIds()
    {
        const fs::path path = fs::path(m_tmp.path().toStdString()) / "tokenizer.json";
        tinybert::writeText(path, tinybert::tokenizerJson(tinybert::vocabulary(false), true).dump());
        auto fromJson = WordPieceTokenizer::fromTokenizerJson(path.string());
        QVERIFY2(fromJson, fromJson.error().c_str());
        QVERIFY(!(*fromJson)->lowerCaseInferred());
        for (const char* text : {"The cat sat on the mat.", "Café naïve RÉSUMÉ", "un[MASK]able", "中国人 한국"})
            QCOMPARE((*fromJson)->encode(text)->ids, m_uncased->encode(text)->ids);
        QCOMPARE((*fromJson)->vocabSize(), m_uncased->vocabSize());
    }

    void tokenizerJsonWithGapsAndAddedTokens()
    {
        // Ids need not be dense; an added special token outside model.vocab joins it and is kept whole.
        const nlohmann::json j = {
            {"added_tokens", {{{"id", 10}, {"content", "<extra>"}, {"special", true}}}},
            {"model", {{"type", "WordPiece"}, {"unk_token", "<unk>"},
                       {"vocab", {{"<unk>", 0}, {"[CLS]", 1}, {"[SEP]", 2}, {"hi", 5}, {"##s", 7}}}}}};
        const fs::path path = fs::path(m_tmp.path().toStdString()) / "gaps.json";
        tinybert::writeText(path, j.dump());
        auto tok = WordPieceTokenizer::fromTokenizerJson(path.string());
        QVERIFY2(tok, tok.error().c_str());
        QCOMPARE((*tok)->vocabSize(), 11);
        QCOMPARE((*tok)->encode("His<extra>zz")->ids, (std::vector<int>{1, 5, 7, 10, 0, 2}));
        QCOMPARE((*tok)->displayToken(3), std::string());
        QCOMPARE((*tok)->maskTokenId(), -1);
    }

    void badUtf8Input()
    {
        Result<TokenizedText> r = m_uncased->encode("ab\xff");
        QVERIFY(!r);
        QVERIFY2(r.error().find("not valid UTF-8") != std::string::npos, r.error().c_str());
    }
};

QTEST_APPLESS_MAIN(TestWordPiece)
#include "tst_wordpiece.moc"
