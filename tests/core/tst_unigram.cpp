// The Unigram tokenizer of a T5 tokenizer.json (core/text/unigramtokenizer.h) against SentencePiece itself:
// a model trained here with nmt_nfkc (so it carries a real precompiled character map), written out as
// Hugging Face's converter would (tests/core/tinyt5.h), must give the ids the library gives on hard cases:
// runs and ends of white space, full-width letters and ligatures that NFKC folds, decomposed accents,
// control characters, characters the model has never seen (one unknown token for a run of them), digits.
// Both layouts of the file are read. Then the character map on hostile bytes, base64, and a T5 folder with
// tokenizer.json and no spiece.model.
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

#include "core/model/encoderdecoder.h"
#include "core/text/charsmap.h"
#include "core/text/unigramtokenizer.h"
#include "core/text/words.h"
#include "tinyt5.h"
#include "core/open/openmodel.h"

using namespace attnscope;
namespace fs = std::filesystem;

namespace {

const char* const kHardCases[] = {
    "the cat sat on the mat",
    "  leading, and   runs   of spaces  ",
    "\xEF\xBC\xB4\xEF\xBD\x88\xEF\xBD\x85 \xEF\xBD\x83\xEF\xBD\x81\xEF\xBD\x94",  // "Ｔｈｅ ｃａｔ", full width
    "\xEF\xAC\x81sh and \xEF\xAC\x82" "ags",                                       // "ﬁsh and ﬂags", ligatures
    "caf\xC3\xA9 and cafe\xCC\x81",                                                 // precomposed and combining accents
    "\xE2\x91\xA0 \xE2\x91\xA1 \xC2\xBD",                                           // "① ② ½"
    "tab\tand\nnewline\r\nend",
    "no-break\xC2\xA0space and\xE2\x80\x83" "em space",
    "zebra \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E \xE2\x98\x83\xE2\x98\x83 xylophone",  // unseen characters
    "12345 67.89",
    "lo miska tavek pel lo nami",
    "",
    "   ",
};

std::vector<int> spmIds(const std::string& text)
{
    std::vector<int> ids;
    if (!tinyt5::detail::spm().processor.Encode(text, &ids).ok()) throw std::runtime_error("SentencePiece failed");
    return ids;
}

} // namespace

class TestUnigram : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;

    std::string writeTokenizer(const std::string& name, const nlohmann::ordered_json& doc)
    {
        const std::string path = m_tmp.filePath(QString::fromStdString(name)).toStdString();
        fixture::writeText(path, doc.dump());
        return path;
    }

private slots:
    void initTestCase() { QVERIFY(m_tmp.isValid()); }

    void agreesWithSentencePiece_data()
    {
        QTest::addColumn<bool>("newerLayout");
        QTest::newRow("t5-small's layout") << false;
        QTest::newRow("newer layout") << true;
    }
    void agreesWithSentencePiece()
    {
        QFETCH(bool, newerLayout);
        const std::string path = writeTokenizer(newerLayout ? "newer.json" : "older.json", tinyt5::tokenizerJson(newerLayout));
        Result<std::shared_ptr<const UnigramTokenizer>> t = UnigramTokenizer::fromTokenizerJson(path);
        QVERIFY2(t, t ? "" : t.error().c_str());
        QCOMPARE((*t)->vocabSize(), tinyt5::pieceCount() + tinyt5::kExtraIds);
        int unknownSeen = 0;
        for (const char* text : kHardCases) {
            Result<TokenizedText> mine = (*t)->encode(text);
            QVERIFY2(mine, mine ? "" : mine.error().c_str());
            const std::vector<int> expected = spmIds(text);
            if (mine->ids != expected) {
                QString a, b;
                for (int id : mine->ids) a += QString::fromStdString(tinyt5::piece(id)) + QLatin1Char(' ');
                for (int id : expected) b += QString::fromStdString(tinyt5::piece(id)) + QLatin1Char(' ');
                QFAIL(qPrintable(QStringLiteral("\"%1\": %2 but SentencePiece gives %3").arg(QString::fromUtf8(text), a, b)));
            }
            unknownSeen += int(std::count(expected.begin(), expected.end(), tinyt5::kUnkId));
        }
        QVERIFY(unknownSeen > 0);  // the unknown-token path was taken
        // Sentinels are added tokens: typed, each is one id, as Hugging Face's tokenizer reads them.
        Result<TokenizedText> sentinel = (*t)->encode("<extra_id_0> cat");
        QVERIFY(sentinel);
        QCOMPARE(sentinel->ids.front(), tinyt5::pieceCount() + tinyt5::kExtraIds - 1);
    }

    // Each token's bytes of the text, through the character map, Metaspace and the Viterbi cut, gather into
    // the words (text/words.h) that SentencePiece's own offsets gather into.
    void spansAgreeWithSentencePiece()
    {
        const std::string path = writeTokenizer("spans.json", tinyt5::tokenizerJson(false));
        Result<std::shared_ptr<const UnigramTokenizer>> t = UnigramTokenizer::fromTokenizerJson(path);
        QVERIFY2(t, t ? "" : t.error().c_str());
        for (const char* text : kHardCases) {
            Result<TokenizedText> mine = (*t)->encode(text);
            QVERIFY2(mine, mine ? "" : mine.error().c_str());
            sentencepiece::ImmutableSentencePieceText cut;
            QVERIFY(tinyt5::detail::spm().processor.Encode(text, cut.mutable_proto()).ok());
            QCOMPARE(cut.pieces_size(), mine->ids.size());
            TokenizedText theirs = *mine;
            for (std::size_t i = 0; i < cut.pieces_size(); ++i)
                theirs.spans[i] = {int(cut.pieces(int(i)).begin()), int(cut.pieces(int(i)).end()), false};
            const TextWords mineWords = wordsOf(text, *mine), theirWords = wordsOf(text, theirs);
            QVERIFY2(mineWords.words == theirWords.words && mineWords.wordOfToken == theirWords.wordOfToken, text);
            QVERIFY(mineWords.count() > 0 || std::string_view(text).find_first_not_of(' ') == std::string_view::npos);
        }
    }

    // The map's own promises: NFKC folding through the trie, and a sentence for bytes that are no map.
    void charsMap()
    {
        Result<CharsMap> map = CharsMap::parse(tinyt5::charsmapOf(tinyt5::detail::spm().bytes));
        QVERIFY2(map, map ? "" : map.error().c_str());
        QVERIFY(!map->empty());
        QCOMPARE(map->normalize("\xEF\xBC\xA1" "b"), std::string("Ab"));     // full-width A
        QCOMPARE(map->normalize("\xEF\xAC\x81"), std::string("fi"));         // the ligature ﬁ
        QCOMPARE(map->normalize("plain text"), std::string("plain text"));
        QVERIFY(!CharsMap::parse(""));
        QVERIFY(!CharsMap::parse(std::string("\xFF\xFF\xFF\x7F", 4)));  // a trie larger than the bytes
        // A map whose rules point anywhere is bounds-checked: garbage normalises without reading outside.
        std::string garbage(4 + 64, '\x5A');
        garbage[0] = 64;
        garbage[1] = garbage[2] = garbage[3] = 0;
        Result<CharsMap> odd = CharsMap::parse(garbage);
        QVERIFY(odd);
        (void)odd->normalize("ZZZZ any text ZZ");
        // Replacement strings that are not UTF-8 are refused (the map feeds regular expressions told the text is
        // valid); the fuzz input that cut a character in two is replayed by fuzzreplay_t5_folder.
        std::string broken = tinyt5::charsmapOf(tinyt5::detail::spm().bytes);
        broken[broken.size() - 2] = '\xFF';
        Result<CharsMap> refused = CharsMap::parse(broken);
        QVERIFY(!refused);
        QVERIFY2(refused.error().find("not valid UTF-8") != std::string::npos, refused.error().c_str());
        QCOMPARE(*decodeBase64("aGVsbG8="), std::string("hello"));
        QVERIFY(!decodeBase64("not base64!"));
    }

    void refusesBadFiles_data()
    {
        QTest::addColumn<std::string>("json");
        QTest::addColumn<std::string>("expected");
        QTest::newRow("BPE model") << std::string(R"({"model":{"type":"BPE","vocab":{},"merges":[]}})") << std::string("not describe a Unigram");
        QTest::newRow("entry not a pair") << std::string(R"({"model":{"type":"Unigram","vocab":[["a",-1.0],["b"]]}})")
                                          << std::string("(id 1) that is not a [piece, score] pair");
        QTest::newRow("unk outside") << std::string(R"({"model":{"type":"Unigram","unk_id":5,"vocab":[["a",-1.0]]}})")
                                     << std::string("unk_id 5");
        QTest::newRow("byte fallback") << std::string(R"({"model":{"type":"Unigram","byte_fallback":true,"vocab":[["a",-1.0]]}})")
                                       << std::string("byte fallback");
        QTest::newRow("charsmap not base64")
            << std::string(R"({"normalizer":{"type":"Precompiled","precompiled_charsmap":"@@"},"model":{"type":"Unigram","vocab":[["a",-1.0]]}})")
            << std::string("not base64");
    }
    void refusesBadFiles()
    {
        QFETCH(std::string, json);
        QFETCH(std::string, expected);
        const std::string path = m_tmp.filePath(QStringLiteral("bad-") + QTest::currentDataTag()).toStdString();
        fixture::writeText(path, json);
        Result<std::shared_ptr<const UnigramTokenizer>> t = UnigramTokenizer::fromTokenizerJson(path);
        QVERIFY(!t);
        QVERIFY2(t.error().find(expected) != std::string::npos, t.error().c_str());
    }

    // Without a character the model knows and without an unknown token, encoding fails with a sentence.
    void noUnknownTokenIsASentence()
    {
        const std::string path = writeTokenizer("no-unk.json", nlohmann::ordered_json::parse(R"({"model":{"type":"Unigram","vocab":[["a",-1.0]]}})"));
        Result<std::shared_ptr<const UnigramTokenizer>> t = UnigramTokenizer::fromTokenizerJson(path);
        QVERIFY(t);
        QCOMPARE((*t)->encode("aa")->ids, (std::vector<int>{0, 0}));
        Result<TokenizedText> r = (*t)->encode("ab");
        QVERIFY(!r);
        QVERIFY2(r.error().find("no unknown token") != std::string::npos, r.error().c_str());
    }

    // A T5 folder with tokenizer.json and no spiece.model reads the text as the spiece.model folder does.
    void t5FolderWithTokenizerJsonOnly()
    {
        const fs::path withSpm = tinyt5::writeFolder(m_tmp, "t5-spm");
        const fs::path withJson = tinyt5::writeFolder(m_tmp, "t5-json");
        fs::remove(withJson / "spiece.model");
        fixture::writeText(withJson / "tokenizer.json", tinyt5::tokenizerJson().dump());
        Result<ModelPtr> a = loadModel(withSpm.string()), b = loadModel(withJson.string());
        QVERIFY2(b, b ? "" : b.error().c_str());
        QVERIFY(a);
        for (const char* text : kHardCases) {
            QCOMPARE(encodeSource(**b, text)->ids, encodeSource(**a, text)->ids);
            QCOMPARE(encodeTarget(**b, text)->ids, encodeTarget(**a, text)->ids);
        }
        // Typed sentinels are one id each on both paths, with the text around them cut on its own.
        for (const char* text : {"<extra_id_0> cat", "the <extra_id_1>mat<extra_id_99>", "<extra_id_100> <extra_id_01> <extra_id_", "a<extra_id_5>"}) {
            QCOMPARE(encodeSource(**b, text)->ids, encodeSource(**a, text)->ids);
            QCOMPARE(encodeTarget(**b, text)->ids, encodeTarget(**a, text)->ids);
        }
        QCOMPARE(encodeSource(**a, "<extra_id_0> cat")->ids.front(), tinyt5::pieceCount() + tinyt5::kExtraIds - 1);
        QCOMPARE(encodeSource(**a, "<extra_id_0> cat")->tokens.front(), std::string("<extra_id_0>"));
        QCOMPARE((*b)->tokenizer->kind(), std::string("unigram"));
        // Neither file: a sentence naming both.
        fs::remove(withJson / "tokenizer.json");
        Result<ModelPtr> none = loadModel(withJson.string());
        QVERIFY(!none);
        QVERIFY2(none.error().find("spiece.model") != std::string::npos && none.error().find("tokenizer.json") != std::string::npos,
                 none.error().c_str());
    }
};

QTEST_GUILESS_MAIN(TestUnigram)
#include "tst_unigram.moc"
