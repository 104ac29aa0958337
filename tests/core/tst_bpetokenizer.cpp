// GPT-2 byte-level BPE: ids against the issue's vectors and against vectors produced by an independent
// implementation (tests/data/gpt2-tokenizer/vectors.json), display strings, both file layouts, hostile files.
#include <QTemporaryDir>
#include <QTest>

#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/text/bpetokenizer.h"
#include "core/text/utf8.h"

using namespace attnscope;

namespace {

const std::string kDataDir = ATTNSCOPE_GPT2_TOKENIZER_DIR;

std::shared_ptr<const BpeTokenizer> gpt2()
{
    static const std::shared_ptr<const BpeTokenizer> tok = [] {
        auto r = BpeTokenizer::fromVocabAndMerges(kDataDir + "/vocab.json", kDataDir + "/merges.txt");
        return r ? *r : nullptr;
    }();
    return tok;
}

nlohmann::json readJson(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    return nlohmann::json::parse(in);
}

void writeText(const std::string& path, const std::string& text)
{
    std::ofstream out(path, std::ios::binary);
    out << text;
}

QString idsText(const std::vector<int>& ids)
{
    QStringList parts;
    for (int id : ids) parts << QString::number(id);
    return "[" + parts.join(", ") + "]";
}

} // namespace

Q_DECLARE_METATYPE(std::vector<int>)
Q_DECLARE_METATYPE(std::string)

class TestBpeTokenizer : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        auto r = BpeTokenizer::fromVocabAndMerges(kDataDir + "/vocab.json", kDataDir + "/merges.txt");
        QVERIFY2(r, r.error().c_str());
        QCOMPARE((*r)->vocabSize(), 50257);
    }

    void encodesLikeTheReference_data()
    {
        QTest::addColumn<std::string>("text");
        QTest::addColumn<std::vector<int>>("ids");
        QTest::newRow("issue: Hello world") << std::string("Hello world") << std::vector<int>{15496, 995};
        QTest::newRow("issue: leading space") << std::string(" Hello world") << std::vector<int>{18435, 995};
        QTest::newRow("issue: emoji") << std::string("hello 👋 world 🌍")
                                      << std::vector<int>{31373, 50169, 233, 995, 12520, 234, 235};
        const nlohmann::json vectors = readJson(kDataDir + "/vectors.json");
        int row = 0;
        for (const nlohmann::json& v : vectors["vectors"]) {
            const std::string text = v["text"].get<std::string>();
            const std::string name = "gpt-3-encoder " + std::to_string(row++) + ": " + nlohmann::json(text).dump();
            QTest::newRow(name.c_str()) << text << v["ids"].get<std::vector<int>>();
        }
    }
    void encodesLikeTheReference()
    {
        QFETCH(std::string, text);
        QFETCH(std::vector<int>, ids);
        Result<TokenizedText> r = gpt2()->encode(text);
        QVERIFY2(r, r.error().c_str());
        QVERIFY2(r->ids == ids, qPrintable("got " + idsText(r->ids) + ", expected " + idsText(ids)));
        QCOMPARE(r->tokens.size(), r->ids.size());
        // Decoding gives the text back byte for byte, and every display string is valid UTF-8.
        QCOMPARE(gpt2()->decode(r->ids), text);
        for (const std::string& token : r->tokens) QVERIFY2(utf8::isValid(token), token.c_str());
    }

    void endOfTextIsPlainText()
    {
        Result<TokenizedText> r = gpt2()->encode("<|endoftext|>");
        QVERIFY(r);
        QVERIFY(r->ids.size() > 1);
        QVERIFY(std::find(r->ids.begin(), r->ids.end(), 50256) == r->ids.end());
    }

    void displayStrings_data()
    {
        QTest::addColumn<std::string>("text");
        QTest::addColumn<std::vector<std::string>>("tokens");
        QTest::newRow("leading space as a middle dot") << std::string(" Hello world") << std::vector<std::string>{"·Hello", "·world"};
        QTest::newRow("emoji split across tokens shows bytes")
            << std::string("hello 👋") << std::vector<std::string>{"hello", "·<0xF0><0x9F><0x91>", "<0x8B>"};
        QTest::newRow("accented letters stay readable") << std::string("naïve") << std::vector<std::string>{"na", "ïve"};
    }
    void displayStrings()
    {
        QFETCH(std::string, text);
        QFETCH(std::vector<std::string>, tokens);
        Result<TokenizedText> r = gpt2()->encode(text);
        QVERIFY(r);
        QCOMPARE(r->tokens, tokens);
        QCOMPARE(gpt2()->displayToken(50256), std::string("<|endoftext|>"));
        QCOMPARE(gpt2()->displayToken(-1), std::string());
        QCOMPARE(gpt2()->displayToken(50257), std::string());
    }

    void rejectsInvalidUtf8_data()
    {
        QTest::addColumn<std::string>("text");
        QTest::newRow("lone 0xFF") << std::string("abc\xff");
        QTest::newRow("truncated two-byte sequence") << std::string("caf\xc3");
        QTest::newRow("surrogate") << std::string("\xed\xa0\x80");
        QTest::newRow("overlong slash") << std::string("\xc0\xaf");
    }
    void rejectsInvalidUtf8()
    {
        QFETCH(std::string, text);
        Result<TokenizedText> r = gpt2()->encode(text);
        QVERIFY(!r);
        QVERIFY2(r.error().find("not valid UTF-8") != std::string::npos, r.error().c_str());
    }

    void tokenizerJsonGivesTheSameIds_data()
    {
        QTest::addColumn<bool>("mergesAsPairs");
        QTest::addColumn<bool>("hostileExtras");
        QTest::newRow("merges as \"a b\" strings") << false << false;
        QTest::newRow("merges as [a, b] pairs") << true << false;
        // Never code, nor a pattern, from a file: the pre-tokeniser regex and the normaliser a tokenizer.json
        // declares are ignored (GPT-2's pattern is compiled into AttnScope), so a catastrophic regex cannot
        // hang encoding and a normaliser cannot change the ids.
        QTest::newRow("a file's own regex and normaliser are ignored") << false << true;
    }
    void tokenizerJsonGivesTheSameIds()
    {
        QFETCH(bool, mergesAsPairs);
        QFETCH(bool, hostileExtras);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        nlohmann::json merges = nlohmann::json::array();
        std::ifstream in(kDataDir + "/merges.txt");
        std::string line;
        std::getline(in, line);  // #version
        while (std::getline(in, line)) {
            if (line.empty()) continue;
            const std::size_t space = line.find(' ');
            if (mergesAsPairs) merges.push_back({line.substr(0, space), line.substr(space + 1)});
            else merges.push_back(line);
        }
        nlohmann::json doc = {{"version", "1.0"}, {"model", {{"type", "BPE"}, {"vocab", readJson(kDataDir + "/vocab.json")}, {"merges", merges}}}};
        if (hostileExtras) {
            doc["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "(a+)+$"}}}, {"behavior", "Isolated"}};
            doc["normalizer"] = {{"type", "Replace"}, {"pattern", {{"String", "o"}}}, {"content", "0"}};
        }
        const std::string path = dir.filePath("tokenizer.json").toStdString();
        writeText(path, doc.dump());
        auto tok = BpeTokenizer::fromTokenizerJson(path);
        QVERIFY2(tok, tok.error().c_str());
        const std::string text = "hello 👋 world 🌍, don't   stop\n\n" + std::string(40, 'a') + "!";
        QCOMPARE((*tok)->encode(text)->ids, gpt2()->encode(text)->ids);
    }

    void concurrentEncodesAgree()
    {
        const std::string text = "Two threads share one compiled pattern; each call has its own match state. 🌍";
        const std::vector<int> expected = gpt2()->encode(text)->ids;
        std::vector<int> a, b;
        std::thread ta([&] { for (int i = 0; i < 50; ++i) a = gpt2()->encode(text)->ids; });
        std::thread tb([&] { for (int i = 0; i < 50; ++i) b = gpt2()->encode(text)->ids; });
        ta.join();
        tb.join();
        QCOMPARE(a, expected);
        QCOMPARE(b, expected);
    }

    void longRunsStayFast()
    {
        // One 200 000-letter piece: merging is O(n log n), so this finishes at once rather than hanging.
        const std::string text(200000, 'a');
        Result<TokenizedText> r = gpt2()->encode(text);
        QVERIFY(r);
        QCOMPARE(gpt2()->decode(r->ids), text);
    }

    // Every hostile file gets one sentence naming the file; none may crash.
    void hostileFiles_data()
    {
        QTest::addColumn<std::string>("vocab");   // "" means a valid 256-byte vocabulary
        QTest::addColumn<std::string>("merges");
        QTest::addColumn<std::string>("badFile");  // which file the sentence must name
        QTest::addColumn<std::string>("problem");  // a phrase the sentence must contain
        QTest::newRow("vocab not JSON") << std::string("{\"a\": ") << std::string("#version: 0.2\n") << std::string("vocab.json") << std::string("not valid JSON");
        QTest::newRow("vocab is a list") << std::string("[1, 2]") << std::string("") << std::string("vocab.json") << std::string("not a JSON object");
        QTest::newRow("vocab id not an integer") << std::string("{\"a\": \"7\"}") << std::string("") << std::string("vocab.json") << std::string("not an integer");
        QTest::newRow("vocab negative id") << std::string("{\"a\": -3}") << std::string("") << std::string("vocab.json") << std::string("outside");
        QTest::newRow("vocab huge id") << std::string("{\"a\": 99999999999}") << std::string("") << std::string("vocab.json") << std::string("outside");
        QTest::newRow("vocab duplicate ids") << std::string("{\"a\": 3, \"b\": 3}") << std::string("") << std::string("vocab.json") << std::string("more than one token");
        QTest::newRow("vocab missing byte symbols") << std::string("{\"a\": 0}") << std::string("") << std::string("vocab.json") << std::string("all 256");
        QTest::newRow("vocab empty object") << std::string("{}") << std::string("") << std::string("vocab.json") << std::string("empty");
        QTest::newRow("merges line with one symbol") << std::string() << std::string("#version: 0.2\nab\n") << std::string("merges.txt") << std::string("line 2");
        QTest::newRow("merges line with three symbols") << std::string() << std::string("a b c\n") << std::string("merges.txt") << std::string("line 1");
        QTest::newRow("merge of unknown symbols") << std::string() << std::string("#version: 0.2\nqq zz\n") << std::string("merges.txt") << std::string("not in the vocabulary");
        QTest::newRow("merge result not in vocab") << std::string() << std::string("#version: 0.2\na b\n") << std::string("merges.txt") << std::string("'ab' is not in the vocabulary");
        QTest::newRow("vocab file missing") << std::string("<missing>") << std::string("") << std::string("vocab.json") << std::string("cannot open");
        QTest::newRow("merges file missing") << std::string() << std::string("<missing>") << std::string("merges.txt") << std::string("cannot open");
    }
    void hostileFiles()
    {
        QFETCH(std::string, vocab);
        QFETCH(std::string, merges);
        QFETCH(std::string, badFile);
        QFETCH(std::string, problem);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        if (vocab.empty()) {
            // The 256 byte symbols are GPT-2's first 256 ids.
            nlohmann::json small = nlohmann::json::object();
            const nlohmann::json full = readJson(kDataDir + "/vocab.json");
            for (const auto& [symbol, id] : full.items())
                if (id.get<int>() < 256) small[symbol] = id;
            vocab = small.dump();
        }
        const std::string vocabPath = dir.filePath("vocab.json").toStdString();
        const std::string mergesPath = dir.filePath("merges.txt").toStdString();
        if (vocab != "<missing>") writeText(vocabPath, vocab);
        if (merges != "<missing>") writeText(mergesPath, merges);
        auto r = BpeTokenizer::fromVocabAndMerges(vocabPath, mergesPath);
        QVERIFY(!r);
        QVERIFY2(r.error().find(badFile) != std::string::npos, r.error().c_str());
        QVERIFY2(r.error().find(problem) != std::string::npos, r.error().c_str());
    }

    void hostileTokenizerJson_data()
    {
        QTest::addColumn<std::string>("content");
        QTest::addColumn<std::string>("problem");
        QTest::newRow("not JSON") << std::string("nope") << std::string("not valid JSON");
        QTest::newRow("no model") << std::string("{\"version\": \"1.0\"}") << std::string("no \"model\" object");
        QTest::newRow("not BPE") << std::string("{\"model\": {\"type\": \"WordPiece\", \"vocab\": {}}}") << std::string("byte-level BPE only");
        QTest::newRow("merges not a list") << std::string("{\"model\": {\"vocab\": {}, \"merges\": 3}}") << std::string("lacks model.vocab");
        QTest::newRow("merge of the wrong kind") << std::string("{\"model\": {\"vocab\": {\"a\": 0}, \"merges\": [[1, 2]]}}") << std::string("merge 1");
    }
    void hostileTokenizerJson()
    {
        QFETCH(std::string, content);
        QFETCH(std::string, problem);
        QTemporaryDir dir;
        const std::string path = dir.filePath("tokenizer.json").toStdString();
        writeText(path, content);
        auto r = BpeTokenizer::fromTokenizerJson(path);
        QVERIFY(!r);
        QVERIFY2(r.error().find("tokenizer.json") != std::string::npos, r.error().c_str());
        QVERIFY2(r.error().find(problem) != std::string::npos, r.error().c_str());
    }
};

QTEST_APPLESS_MAIN(TestBpeTokenizer)
#include "tst_bpetokenizer.moc"
