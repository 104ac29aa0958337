// The hostile-text matrix (hostiletext.h) through every tokenizer: the random model's word tokenizer and
// GPT-2's byte-level BPE with the published vocabulary. Valid UTF-8 is tokenised (the BPE ids decode back
// to the exact bytes), anything else is refused with a sentence naming the byte, and each row takes under
// 2 s of CPU (five times that in a sanitizer build). CPU time, not wall time, so a busy machine does not
// move the bound.
#include <QTest>

#include <ctime>

#include "hostiletext.h"
#include "text/bpetokenizer.h"
#include "text/utf8.h"
#include "text/wordtokenizer.h"

using namespace attnscope;

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr double kCpuLimitSeconds = 10.0;
#else
constexpr double kCpuLimitSeconds = 2.0;
#endif

double cpuSeconds()
{
    timespec t{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

const Gpt2BpeTokenizer& gpt2()
{
    static const std::shared_ptr<const Gpt2BpeTokenizer> tok = [] {
        const std::string dir = ATTNSCOPE_GPT2_TOKENIZER_DIR;
        auto r = Gpt2BpeTokenizer::fromVocabAndMerges(dir + "/vocab.json", dir + "/merges.txt");
        if (!r) qFatal("%s", r.error().c_str());
        return *r;
    }();
    return *tok;
}

} // namespace

class TestHostileText : public QObject {
    Q_OBJECT
private slots:
    void throughEveryTokenizer_data()
    {
        QTest::addColumn<int>("row");
        QTest::addColumn<QString>("tokenizer");
        for (std::size_t i = 0; i < hostiletext::rows().size(); ++i)
            for (const char* tokenizer : {"word", "gpt2-bpe"})
                QTest::newRow(qPrintable(QString("%1, %2").arg(tokenizer, hostiletext::rows()[i].name))) << int(i) << QString(tokenizer);
    }

    void throughEveryTokenizer()
    {
        QFETCH(int, row);
        QFETCH(QString, tokenizer);
        const hostiletext::Row& r = hostiletext::rows()[static_cast<std::size_t>(row)];
        const WordTokenizer word(8192);
        const Tokenizer& tok = tokenizer == "word" ? static_cast<const Tokenizer&>(word) : gpt2();
        (void)gpt2();  // loaded outside the timed part

        const double start = cpuSeconds();
        Result<TokenizedText> out = tok.encode(r.bytes);
        const double seconds = cpuSeconds() - start;
        qInfo("%zu bytes: %s in %.3f s of CPU", r.bytes.size(),
              out ? qPrintable(QString("%1 tokens").arg(out->ids.size())) : "refused", seconds);
        QVERIFY2(seconds < kCpuLimitSeconds, qPrintable(QString("%1 s of CPU").arg(seconds)));
        QCOMPARE(utf8::isValid(r.bytes), r.valid);  // the row says what it is
        if (!r.valid) {
            QVERIFY(!out);
            QVERIFY2(out.error().find("not valid UTF-8 (byte ") != std::string::npos, out.error().c_str());
            return;
        }
        QVERIFY2(out, out.error().c_str());
        QCOMPARE(out->ids.size(), out->tokens.size());
        for (std::size_t i = 0; i < out->ids.size(); ++i) {
            QVERIFY(out->ids[i] >= 0 && out->ids[i] < tok.vocabSize());
            QVERIFY(utf8::isValid(out->tokens[i]));
        }
        if (&tok == &gpt2()) QVERIFY2(gpt2().decode(out->ids) == r.bytes, "the ids decode back to the exact text");
    }
};

QTEST_APPLESS_MAIN(TestHostileText)
#include "tst_hostiletext.moc"
