// The tokenizers of Llama-family folders: both kinds that tokenizer.json declares (byte-level BPE with the
// file's split pattern; SentencePiece-style BPE with '▁' and byte fallback), checked against ids that
// Hugging Face's own tokenizers library computed for the same files (tests/data/llama-tokenizers), against
// hand-worked expectations, and against hostile files.
#include <QTemporaryDir>
#include <QTest>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/text/bpetokenizer.h"
#include "core/text/words.h"
#include "tinytokenizers.h"

using namespace attnscope;
namespace fs = std::filesystem;

Q_DECLARE_METATYPE(std::string)
Q_DECLARE_METATYPE(std::vector<int>)

namespace {

const std::string kVectors = ATTNSCOPE_LLAMA_TOKENIZER_VECTORS;

void writeText(const fs::path& path, const std::string& text)
{
    fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary);
    out << text;
}

const nlohmann::json& vectors()
{
    static const nlohmann::json v = [] {
        std::ifstream in(kVectors);
        return nlohmann::json::parse(in);
    }();
    return v;
}

std::string idsText(const std::vector<int>& ids)
{
    std::string s = "[";
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (i) s += ',';
        s += std::to_string(ids[i]);
    }
    return s + "]";
}

} // namespace

class TestLlamaTokenizer : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    std::map<std::string, std::shared_ptr<const BpeTokenizer>> m_tok;

    std::string fileOf(const std::string& kind) const { return m_tmp.filePath(QString::fromStdString(kind + "/tokenizer.json")).toStdString(); }

    const BpeTokenizer& tok(const std::string& kind) { return *m_tok.at(kind); }

    std::vector<int> ids(const std::string& kind, const std::string& text)
    {
        Result<TokenizedText> r = tok(kind).encode(text);
        return r ? r->ids : std::vector<int>{-999};
    }

    int id(const std::string& kind, const std::string& spelling) const { return tinytok::idOf(tinytok::tokenizerJson(kind), spelling); }

private slots:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        for (const std::string& kind : tinytok::kinds()) {
            writeText(fileOf(kind), tinytok::tokenizerText(kind));
            auto r = BpeTokenizer::fromTokenizerFiles(fileOf(kind), "");
            QVERIFY2(r, r.error().c_str());
            m_tok[kind] = *r;
        }
        // For regenerating the vectors with the reference library (see tests/data/llama-tokenizers/oracle.js).
        if (const char* dir = std::getenv("ATTNSCOPE_WRITE_TOKENIZERS"))
            for (const std::string& kind : tinytok::kinds()) writeText(fs::path(dir) / kind / "tokenizer.json", tinytok::tokenizerText(kind));
    }

    // The committed ids belong to these exact files: a generator that drifted would make them meaningless.
    void generatorMatchesVectors()
    {
        for (const std::string& kind : tinytok::kinds()) {
            QVERIFY2(vectors()["tokenizers"].contains(kind), kind.c_str());
            QCOMPARE(tinytok::checksum(tinytok::tokenizerText(kind)), vectors()["tokenizers"][kind]["checksum"].get<std::string>());
        }
    }

    void matchesReferenceLibrary_data()
    {
        QTest::addColumn<std::string>("kind");
        QTest::addColumn<std::string>("text");
        QTest::addColumn<std::vector<int>>("expected");
        for (const auto& [kind, entry] : vectors()["tokenizers"].items()) {
            int n = 0;
            for (const auto& c : entry["cases"]) {
                const std::string text = c["text"];
                QTest::newRow((kind + " #" + std::to_string(n++) + ": " + nlohmann::json(text).dump()).c_str())
                    << kind << text << c["ids"].get<std::vector<int>>();
            }
        }
    }
    void matchesReferenceLibrary()
    {
        QFETCH(std::string, kind);
        QFETCH(std::string, text);
        QFETCH(std::vector<int>, expected);
        const std::vector<int> got = ids(kind, text);
        QVERIFY2(got == expected, ("got " + idsText(got) + ", expected " + idsText(expected)).c_str());
    }

    // Each token's bytes of the text: the words they gather into (text/words.h) are the words the reference
    // library's offsets gather into, whatever each side does with a '▁' it prepended (the library gives it
    // the first character, AttnScope an empty span) or a character NFC composed. Where nothing normalises
    // (the pure byte-level kinds), the spans themselves are the library's.
    void spansMatchReferenceLibrary_data() { matchesReferenceLibrary_data(); }
    void spansMatchReferenceLibrary()
    {
        QFETCH(std::string, kind);
        QFETCH(std::string, text);
        const nlohmann::json* reference = nullptr;
        for (const auto& c : vectors()["tokenizers"][kind]["cases"])
            if (c["text"] == text) reference = &c;
        QVERIFY(reference);
        Result<TokenizedText> mine = tok(kind).encode(text);
        QVERIFY2(mine, mine ? "" : mine.error().c_str());
        TokenizedText theirs = *mine;
        const auto offsets = (*reference)["offsets"].get<std::vector<std::vector<int>>>();
        const auto special = (*reference)["special"].get<std::vector<int>>();
        QCOMPARE(offsets.size(), mine->spans.size());
        for (std::size_t t = 0; t < offsets.size(); ++t) {
            const bool added = special[t] && offsets[t][0] == offsets[t][1];
            theirs.spans[t] = added ? TextSpan::added() : TextSpan{offsets[t][0], offsets[t][1], special[t] != 0};
            QCOMPARE(mine->spans[t].special, special[t] != 0);
        }
        const TextWords mineWords = wordsOf(text, *mine), theirWords = wordsOf(text, theirs);
        QCOMPARE(mineWords.words, theirWords.words);
        QCOMPARE(mineWords.wordOfToken, theirWords.wordOfToken);
        // The library gives a token that holds part of a character the whole character; AttnScope its bytes.
        auto wholeCharacters = [&text](TextSpan s) {
            auto continuation = [&text](int i) { return i < int(text.size()) && (static_cast<unsigned char>(text[std::size_t(i)]) & 0xC0) == 0x80; };
            while (s.begin > 0 && continuation(s.begin)) --s.begin;
            while (continuation(s.end)) ++s.end;
            return s;
        };
        if (kind == "llama3" || kind == "smollm")
            for (std::size_t t = 0; t < offsets.size(); ++t)
                if (!mine->spans[t].special) QCOMPARE(wholeCharacters(mine->spans[t]), theirs.spans[t]);
    }

    // Worked by hand from the files' rules, independently of the reference library.
    void sentencePieceByHand()
    {
        // "\n" is not in the vocabulary: it falls back to its byte, after the BOS and the '▁' Prepend adds.
        QCOMPARE(ids("llama2", "\n"), (std::vector<int>{1, id("llama2", "\xE2\x96\x81"), id("llama2", "<0x0A>")}));
        // A four-byte emoji becomes its four byte tokens.
        const std::vector<int> llama = ids("llama2", "\xF0\x9F\xA6\x99");  // U+1F999 LLAMA
        QCOMPARE(llama, (std::vector<int>{1, id("llama2", "\xE2\x96\x81"), id("llama2", "<0xF0>"), id("llama2", "<0x9F>"),
                                          id("llama2", "<0xA6>"), id("llama2", "<0x99>")}));
        // Without byte fallback the same character is one <unk>, and a run of unknown characters fuses into one.
        QCOMPARE(ids("nofallback", "\xF0\x9F\xA6\x99\xF0\x9F\x91\x8B"), (std::vector<int>{1, id("nofallback", "\xE2\x96\x81"), 0}));
        // An added token inside text is cut out first; the text after it gets no '▁' under Metaspace's
        // "first" scheme, but does under the legacy Prepend normalizer, which runs on every stretch.
        const std::vector<int> m = ids("mistral", "the<s>the");
        const std::vector<int> l = ids("llama2", "the<s>the");
        QCOMPARE(m.front(), 1);
        QCOMPARE(m[2], 1);
        QCOMPARE(tok("mistral").spelling(m[1]), std::string("\xE2\x96\x81the"));
        QCOMPARE(tok("mistral").spelling(m[3]), std::string("t"));  // "the" without '▁' is not a learned token
        QCOMPARE(tok("llama2").spelling(l[3]), std::string("\xE2\x96\x81the"));
        // Tokens are shown as the vocabulary spells them.
        const TokenizedText t = *tok("llama2").encode("the dog");
        QCOMPARE(t.tokens, (std::vector<std::string>{"<s>", "\xE2\x96\x81the", "\xE2\x96\x81" "dog"}));
    }

    void byteLevelByHand()
    {
        // Llama 3: the BOS from the template; the split pattern gives the space to " world", so a token
        // starts with 'Ġ' exactly where "world" does.
        const TokenizedText t = *tok("llama3").encode("hello world");
        QCOMPARE(t.tokens.front(), std::string("<|begin_of_text|>"));
        std::string spelled;
        bool boundary = false;
        for (std::size_t i = 1; i < t.tokens.size(); ++i) {
            boundary |= spelled == "hello" && t.tokens[i].starts_with("\xC4\xA0");
            spelled += t.tokens[i];
        }
        QCOMPARE(spelled, std::string("hello\xC4\xA0world"));
        QVERIFY(boundary);
        // Digits: Llama 3's pattern takes up to three at a time, so no token spans "123|456|7"; Qwen2's takes
        // one, so there is one token per digit (and no BOS).
        std::vector<int> l3 = ids("llama3", "1234567");
        l3.erase(l3.begin());
        std::vector<std::string> groups;
        for (int i : l3) groups.push_back(tok("llama3").tokenBytes(i));
        std::string joined, cuts;
        for (const std::string& g : groups) {
            joined += g;
            cuts += std::to_string(joined.size()) + " ";
        }
        QCOMPARE(joined, std::string("1234567"));
        QVERIFY2(cuts.find("3 ") != std::string::npos && cuts.find("6 ") != std::string::npos, cuts.c_str());
        QCOMPARE(ids("qwen2", "2024").size(), std::size_t(4));
        // NFC: a decomposed "é" (e + U+0301) and the composed one give the same ids in Qwen2, not in Llama 3.
        QCOMPARE(ids("qwen2", "cafe\xCC\x81"), ids("qwen2", "caf\xC3\xA9"));
        QVERIFY(ids("llama3", "cafe\xCC\x81") != ids("llama3", "caf\xC3\xA9"));
        // Byte-level tokens decode back to the text exactly.
        const std::string text = "I \xE2\x9D\xA4\xEF\xB8\x8F llamas \xF0\x9F\xA6\x99\n\tok";
        std::vector<int> without = ids("qwen2", text);
        QCOMPARE(tok("qwen2").decode(without), text);
    }

    void addedTokenRules()
    {
        // <mask> takes the spaces on both sides with it (lstrip, rstrip).
        const std::vector<int> a = ids("llama3", "x <mask> y");
        const std::vector<int> b = ids("llama3", "x<mask>y");
        QCOMPARE(a, b);
        // <sep> is single_word: inside a word it is plain text.
        const int sep = id("llama3", "<sep>");
        QVERIFY(std::find(ids("llama3", "a <sep> b").begin(), ids("llama3", "a <sep> b").end(), sep) != ids("llama3", "a <sep> b").end());
        const std::vector<int> inside = ids("llama3", "a<sep>b");
        QVERIFY(std::find(inside.begin(), inside.end(), sep) == inside.end());
    }

    void kinds()
    {
        QCOMPARE(tok("llama3").kind(), std::string("byte-level-bpe"));
        QCOMPARE(tok("qwen2").kind(), std::string("byte-level-bpe"));
        QCOMPARE(tok("llama2").kind(), std::string("sentencepiece-bpe"));
        QCOMPARE(tok("mistral").kind(), std::string("sentencepiece-bpe"));
    }

    // tokenizer_config.json's add_bos_token / add_eos_token decide those tokens when present.
    void tokenizerConfigDecidesBosAndEos_data()
    {
        QTest::addColumn<std::string>("kind");
        QTest::addColumn<std::string>("config");
        QTest::addColumn<std::vector<int>>("prefix");
        QTest::addColumn<std::vector<int>>("suffix");
        QTest::newRow("no config: the post-processor's BOS") << std::string("llama2") << std::string() << std::vector<int>{1} << std::vector<int>{};
        QTest::newRow("add_bos_token false") << std::string("llama2") << std::string(R"({"add_bos_token": false, "bos_token": "<s>"})")
                                             << std::vector<int>{} << std::vector<int>{};
        QTest::newRow("add_eos_token true") << std::string("llama2")
                                            << std::string(R"({"add_bos_token": true, "add_eos_token": true, "bos_token": "<s>", "eos_token": {"content": "</s>"}})")
                                            << std::vector<int>{1} << std::vector<int>{2};
        QTest::newRow("a BOS for a file without one (Qwen2 + added token)") << std::string("qwen2")
                                            << std::string(R"({"add_bos_token": true, "bos_token": "<|begin_of_text|>"})")
                                            << std::vector<int>{id("qwen2", "<|begin_of_text|>")} << std::vector<int>{};
        QTest::newRow("no flags: the post-processor's BOS") << std::string("llama3") << std::string(R"({"bos_token": "<|begin_of_text|>"})")
                                            << std::vector<int>{id("llama3", "<|begin_of_text|>")} << std::vector<int>{};
    }
    void tokenizerConfigDecidesBosAndEos()
    {
        QFETCH(std::string, kind);
        QFETCH(std::string, config);
        QFETCH(std::vector<int>, prefix);
        QFETCH(std::vector<int>, suffix);
        std::string configPath;
        if (!config.empty()) {
            configPath = m_tmp.filePath(QString::fromStdString(kind + "-config/tokenizer_config.json")).toStdString();
            writeText(configPath, config);
        }
        auto r = BpeTokenizer::fromTokenizerFiles(fileOf(kind), configPath);
        QVERIFY2(r, r.error().c_str());
        const std::vector<int> body = ids(kind, "the llama");  // with the file's own post-processor
        const std::vector<int> got = (*r)->encode("the llama")->ids;
        std::vector<int> core = body;
        const std::vector<int> filePrefix = kind == "qwen2" ? std::vector<int>{} : std::vector<int>{body.front()};
        core.erase(core.begin(), core.begin() + std::ptrdiff_t(filePrefix.size()));
        std::vector<int> expected = prefix;
        expected.insert(expected.end(), core.begin(), core.end());
        expected.insert(expected.end(), suffix.begin(), suffix.end());
        QVERIFY2(got == expected, ("got " + idsText(got) + ", expected " + idsText(expected)).c_str());
    }

    // Every hostile tokenizer.json gets one sentence naming the file; none may crash.
    void hostileFiles_data()
    {
        QTest::addColumn<std::string>("kind");
        QTest::addColumn<std::string>("pointer");  // JSON pointer into the file to replace
        QTest::addColumn<std::string>("value");    // the JSON to put there
        QTest::addColumn<std::string>("problem");  // a phrase the sentence must contain
        QTest::newRow("Unigram model") << std::string("llama2") << std::string("/model/type") << std::string("\"Unigram\"") << std::string("BPE");
        QTest::newRow("unknown normalizer") << std::string("llama2") << std::string("/normalizer") << std::string(R"({"type": "Precompiled"})") << std::string("Precompiled");
        QTest::newRow("normalizer without type") << std::string("llama2") << std::string("/normalizer") << std::string(R"({"prepend": "x"})") << std::string("without a \"type\"");
        QTest::newRow("unknown pre_tokenizer") << std::string("llama3") << std::string("/pre_tokenizer") << std::string(R"({"type": "Whitespace"})") << std::string("Whitespace");
        QTest::newRow("split pattern that does not compile") << std::string("llama3") << std::string("/pre_tokenizer/pretokenizers/0/pattern")
                                                             << std::string("{\"Regex\": \"(unclosed\"}") << std::string("does not compile");
        QTest::newRow("split with unknown behavior") << std::string("llama3") << std::string("/pre_tokenizer/pretokenizers/0/behavior")
                                                     << std::string("\"Sideways\"") << std::string("behavior");
        QTest::newRow("pre_tokenizer after ByteLevel") << std::string("smollm") << std::string("/pre_tokenizer/pretokenizers/2")
                                                      << std::string(R"({"type": "Digits", "individual_digits": true})") << std::string("after ByteLevel");
        QTest::newRow("unknown post_processor") << std::string("llama2") << std::string("/post_processor") << std::string(R"({"type": "Chatty"})") << std::string("Chatty");
        QTest::newRow("template naming an undefined token") << std::string("llama2") << std::string("/post_processor/special_tokens")
                                                            << std::string("{}") << std::string("does not define");
        QTest::newRow("added token id out of range") << std::string("llama3") << std::string("/added_tokens/0/id") << std::string("99999999") << std::string("outside");
        QTest::newRow("added token without content") << std::string("llama3") << std::string("/added_tokens/0") << std::string(R"({"id": 3})") << std::string("content");
        QTest::newRow("added token on a vocabulary id") << std::string("llama3") << std::string("/added_tokens/0/id") << std::string("65") << std::string("already uses");
        QTest::newRow("unknown token not in the vocabulary") << std::string("llama2") << std::string("/model/unk_token") << std::string("\"<nope>\"") << std::string("unknown token");
        QTest::newRow("continuing_subword_prefix") << std::string("llama2") << std::string("/model/continuing_subword_prefix") << std::string("\"##\"") << std::string("continuing_subword_prefix");
        QTest::newRow("byte-level vocabulary missing a byte") << std::string("llama3") << std::string("/model/vocab/A") << std::string("null") << std::string("all 256");
        QTest::newRow("merge of an unknown symbol") << std::string("llama2") << std::string("/model/merges/0") << std::string(R"(["qq", "zz"])") << std::string("not in the vocabulary");
        // Normalizers nested Sequence in Sequence (built in hostileFiles): 200 000 deep is refused by the JSON
        // reader's nesting limit before parsing; 12 deep parses (25 JSON levels) and is refused by the pipeline's
        // own limit on Sequences, not recursed into.
        QTest::newRow("normalizer nested 200000 deep") << std::string("llama2") << std::string("/normalizer")
                                                       << std::string("nested:200000") << std::string("deeper than 64 levels");
        QTest::newRow("normalizer nested 12 Sequences deep") << std::string("llama2") << std::string("/normalizer")
                                                             << std::string("nested:12") << std::string("too deep");
    }
    void hostileFiles()
    {
        QFETCH(std::string, kind);
        QFETCH(std::string, pointer);
        QFETCH(std::string, value);
        QFETCH(std::string, problem);
        nlohmann::json doc = tinytok::tokenizerJson(kind);
        std::string text;
        const nlohmann::json replacement = nlohmann::json::parse(value, nullptr, false);
        if (value.starts_with("nested:")) {
            const int depth = std::stoi(value.substr(7));
            std::string nested;
            for (int i = 0; i < depth; ++i) nested += "{\"type\": \"Sequence\", \"normalizers\": [";
            nested += R"({"type": "Prepend", "prepend": "x"})";
            for (int i = 0; i < depth; ++i) nested += "]}";
            text = doc.dump();
            const std::string marker = "\"normalizer\":";
            const std::size_t at = text.find(marker) + marker.size();
            text.replace(at, text.find(",\"padding\"", at) - at, nested);
        } else {
            if (replacement.is_null() && pointer.starts_with("/model/vocab/")) doc["model"]["vocab"].erase(pointer.substr(13));
            else doc[nlohmann::json::json_pointer(pointer)] = replacement;
            text = doc.dump();
        }
        const std::string path = m_tmp.filePath(QString::fromStdString("hostile/" + std::string(QTest::currentDataTag()) + "/tokenizer.json")).toStdString();
        writeText(path, text);
        auto r = BpeTokenizer::fromTokenizerFiles(path, "");
        QVERIFY(!r);
        QVERIFY2(r.error().find("tokenizer.json") != std::string::npos, r.error().c_str());
        QVERIFY2(r.error().find(problem) != std::string::npos, r.error().c_str());
    }

    void badTokenizerConfig()
    {
        const std::string configPath = m_tmp.filePath("bad-config/tokenizer_config.json").toStdString();
        writeText(configPath, R"({"add_bos_token": true, "bos_token": "<nowhere>"})");
        auto r = BpeTokenizer::fromTokenizerFiles(fileOf("llama2"), configPath);
        QVERIFY(!r);
        QVERIFY2(r.error().find("tokenizer_config.json") != std::string::npos && r.error().find("bos_token") != std::string::npos,
                 r.error().c_str());
        writeText(configPath, "[1, 2]");
        r = BpeTokenizer::fromTokenizerFiles(fileOf("llama2"), configPath);
        QVERIFY(!r);
        QVERIFY2(r.error().find("not a JSON object") != std::string::npos, r.error().c_str());
    }

    void invalidUtf8IsASentence()
    {
        Result<TokenizedText> r = tok("llama2").encode("bad \xFF byte");
        QVERIFY(!r);
        QVERIFY2(r.error().find("UTF-8") != std::string::npos, r.error().c_str());
    }

    void longTextStaysFast()
    {
        // One 100 000-character stretch with no pre-tokenizer to split it (SentencePiece style): merging is
        // O(n log n), so this finishes at once.
        std::string text;
        for (int i = 0; i < 20000; ++i) text += "llama";
        Result<TokenizedText> r = tok("llama2").encode(text);
        QVERIFY(r);
        QVERIFY(r->ids.size() > 1);
    }
};

QTEST_APPLESS_MAIN(TestLlamaTokenizer)
#include "tst_llamatokenizer.moc"
