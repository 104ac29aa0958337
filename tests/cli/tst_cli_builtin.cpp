// The built-in model's heads, measured the way the issue states them: through `attnscope-cli attention
// --model builtin` on text the model was not trained on, with the scores computed here from the printed
// weights by plain loops (independently of core/train/headprobes, which the app's own tests use).
// The held-out text comes from the corpus's own definition of what training left out (held-out
// animal/surface pairs); the induction word lists are drawn here from vocab.txt with this file's generator.
// The built-in translator the same way: `generate --model builtin-translator` on held-out sentences, its
// alignment scored here from the printed cross-attention and lexicon.tsv alone (not from translatoreval's
// gold alignments).
#include <QTest>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "clirunner.h"
#include "core/train/corpus/corpus.h"
#include "core/train/translator/translation.h"

using namespace attnscope;

namespace {

struct Weights {
    std::vector<std::string> tokens;
    nlohmann::json attention;  // [layer][head][query][key]
};

Weights attentionOf(const std::string& text)
{
    const clitest::Run cli = clitest::runCli({"attention", "--model", "builtin", "--text", QString::fromStdString(text)});
    if (!cli.finished || cli.exitCode != 0) {
        qWarning("attnscope-cli failed on '%s': %s", text.c_str(), cli.err.constData());
        return {};
    }
    const nlohmann::json j = nlohmann::json::parse(cli.out.toStdString());
    return {j.at("tokens").get<std::vector<std::string>>(), j.at("attention")};
}

int indexOf(const std::vector<std::string>& tokens, const std::string& word)
{
    const auto it = std::find(tokens.begin(), tokens.end(), word);
    return it == tokens.end() ? -1 : static_cast<int>(it - tokens.begin());
}

// A per-head accumulator over layers × heads, reporting the best head's mean.
struct Tally {
    std::vector<double> sum;
    int layers = 0, heads = 0, count = 0;
    void shape(const nlohmann::json& attention)
    {
        if (!sum.empty()) return;
        layers = static_cast<int>(attention.size());
        heads = static_cast<int>(attention[0].size());
        sum.assign(static_cast<std::size_t>(layers * heads), 0.0);
    }
    double best(int* layer, int* head) const
    {
        const auto it = std::max_element(sum.begin(), sum.end());
        const int i = static_cast<int>(it - sum.begin());
        *layer = i / heads;
        *head = i % heads;
        return *it / std::max(1, count);
    }
};

} // namespace

class TestCliBuiltin : public QObject {
    Q_OBJECT
private slots:
    void infoNamesIt()
    {
        const clitest::Run cli = clitest::runCli({"info"});
        QCOMPARE(cli.exitCode, 0);
        const nlohmann::json j = nlohmann::json::parse(cli.out.toStdString());
        QCOMPARE(j.at("name").get<std::string>(), std::string("builtin"));
    }

    void infoDescribesTheTranslator()
    {
        const clitest::Run cli = clitest::runCli({"info", "--model", "builtin-translator"});
        QCOMPARE(cli.exitCode, 0);
        const nlohmann::json j = nlohmann::json::parse(cli.out.toStdString());
        QCOMPARE(j.at("name").get<std::string>(), std::string("builtin-translator"));
        QCOMPARE(j.at("encoder_decoder").get<bool>(), true);
        QCOMPARE(j.at("architecture").get<std::string>(), std::string("attnscope-translator"));
        QCOMPARE(j.at("positional").get<std::string>(), std::string("learned"));
        QCOMPARE(j.at("encoder_layers").get<int>(), 2);
        QCOMPARE(j.at("decoder_layers").get<int>(), 2);
    }

    void previousTokenHead()
    {
        Tally t;
        for (const std::string& sentence : train::heldOutSentences(30, 777)) {
            const Weights w = attentionOf(sentence);
            QVERIFY(!w.tokens.empty());
            t.shape(w.attention);
            const int n = static_cast<int>(w.tokens.size());
            for (int l = 0; l < t.layers; ++l)
                for (int h = 0; h < t.heads; ++h) {
                    double s = 0.0;
                    for (int q = 1; q < n; ++q) s += w.attention[l][h][q][q - 1].get<double>();
                    t.sum[static_cast<std::size_t>(l * t.heads + h)] += s / (n - 1);
                }
            ++t.count;
        }
        int layer = 0, head = 0;
        const double score = t.best(&layer, &head);
        qInfo("previous-token head L%d H%d: mean weight on i-1 = %.3f over %d held-out sentences", layer, head, score, t.count);
        QVERIFY2(score >= 0.8, qPrintable(QString::number(score)));
    }

    void inductionHead()
    {
        // Words of the vocabulary (no special tokens, no punctuation), ten distinct ones per list.
        std::ifstream in(ATTNSCOPE_BUILTIN_VOCAB);
        QVERIFY(in.good());
        std::vector<std::string> words;
        for (std::string line; std::getline(in, line);)
            if (!line.empty() && std::all_of(line.begin(), line.end(), [](char c) { return c >= 'a' && c <= 'z'; }))
                words.push_back(line);
        QVERIFY(words.size() >= 2000);
        std::uint64_t state = 20261129;
        auto next = [&state] {  // a 64-bit LCG (Knuth's MMIX constants), enough to pick words
            state = state * 6364136223846793005ULL + 1442695040888963407ULL;
            return state >> 33;
        };
        constexpr int kWords = 10;
        Tally t;
        for (int sequence = 0; sequence < 20; ++sequence) {
            std::vector<std::string> list;
            std::set<std::string> seen;
            while (static_cast<int>(list.size()) < kWords) {
                const std::string& w = words[next() % words.size()];
                if (seen.insert(w).second) list.push_back(w);
            }
            std::string text;
            for (int copy = 0; copy < 2; ++copy)
                for (const std::string& w : list) text += (text.empty() ? "" : " ") + w;
            const Weights w = attentionOf(text);
            QCOMPARE(static_cast<int>(w.tokens.size()), 1 + 2 * kWords);  // <bos>, then the list twice
            t.shape(w.attention);
            for (int l = 0; l < t.layers; ++l)
                for (int h = 0; h < t.heads; ++h) {
                    double s = 0.0;
                    // The j-th word of the second copy sits at 1 + kWords + j; its first occurrence at 1 + j,
                    // and the token after that at 2 + j.
                    for (int j = 0; j < kWords; ++j) s += w.attention[l][h][1 + kWords + j][2 + j].get<double>();
                    t.sum[static_cast<std::size_t>(l * t.heads + h)] += s / kWords;
                }
            ++t.count;
        }
        int layer = 0, head = 0;
        const double score = t.best(&layer, &head);
        qInfo("induction head L%d H%d: mean weight on the token after the earlier occurrence = %.3f over %d lists",
              layer, head, score, t.count);
        QVERIFY2(score >= 0.5, qPrintable(QString::number(score)));
    }

    void pronounHead()
    {
        std::vector<train::PronounProbe> probes = train::pronounProbes();
        QVERIFY(probes.size() >= 300);
        for (const train::PronounProbe& p : probes) QVERIFY(train::isHeldOutPair(p.animal, p.surface));
        // Every seventh pair keeps the test quick while spreading over all the animals and surfaces.
        Tally t;
        for (std::size_t i = 0; i < probes.size(); i += 7) {
            const train::PronounProbe& p = probes[i];
            const Weights w = attentionOf(p.text);
            QVERIFY(!w.tokens.empty());
            t.shape(w.attention);
            const int it = indexOf(w.tokens, "it"), animal = indexOf(w.tokens, p.animal), surface = indexOf(w.tokens, p.surface);
            QVERIFY2(it > 0 && animal > 0 && surface > 0, p.text.c_str());
            for (int l = 0; l < t.layers; ++l)
                for (int h = 0; h < t.heads; ++h) {
                    // The largest weight in the row of "it", leaving out <bos> (position 0).
                    int argmax = 1;
                    for (int k = 1; k <= it; ++k)
                        if (w.attention[l][h][it][k].get<double>() > w.attention[l][h][it][argmax].get<double>()) argmax = k;
                    if (argmax == animal) t.sum[static_cast<std::size_t>(l * t.heads + h)] += 1.0;
                }
            ++t.count;
        }
        int layer = 0, head = 0;
        const double share = t.best(&layer, &head);
        qInfo("pronoun head L%d H%d: 'it' looks hardest at the animal in %.3f of %d held-out pairs", layer, head, share, t.count);
        QVERIFY2(share >= 0.8, qPrintable(QString::number(share)));
    }

    void translatorTranslatesAndAligns()
    {
        // lexicon.tsv: english<TAB>target words; a target word is the translation of an English word when it
        // is the first word of that word's entry ("dogs" -> "vuke ri" makes "vuke" the translation of "dogs").
        std::ifstream in(ATTNSCOPE_TRANSLATOR_LEXICON);
        QVERIFY(in.good());
        std::map<std::string, std::string> firstWord;  // English word -> first target word
        std::set<std::string> translations;
        for (std::string line; std::getline(in, line);) {
            const std::size_t tab = line.find('\t');
            QVERIFY2(tab != std::string::npos, line.c_str());
            const std::string target = line.substr(tab + 1), first = target.substr(0, target.find(' '));
            firstWord[line.substr(0, tab)] = first;
            translations.insert(first);
        }
        QVERIFY(firstWord.size() >= 200);
        int words = 0, correct = 0, aligned = 0;
        std::vector<int> hits;
        int layers = 0, heads = 0;
        // 20 sentences (about 120 content words): each is a process under the sanitizers, and the core's own
        // test (tst_translator) scores 150 more in-process.
        constexpr int kSentences = 20;
        for (const train::TranslationPair& pair : train::heldOutTranslationPairs(kSentences, 11)) {
            const clitest::Run cli = clitest::runCli({"generate", "--model", "builtin-translator", "--source", QString::fromStdString(pair.source)});
            QCOMPARE(cli.exitCode, 0);
            const nlohmann::json j = nlohmann::json::parse(cli.out.toStdString());
            const std::vector<std::string> source = j.at("source_tokens").get<std::vector<std::string>>();
            std::vector<std::string> reference, written;
            std::istringstream ref(pair.target);
            for (std::string w; ref >> w;) reference.push_back(w);
            for (const nlohmann::json& step : j.at("steps"))
                if (step.at("token").get<std::string>() != "<eos>") written.push_back(step.at("token").get<std::string>());
            if (hits.empty()) {
                layers = static_cast<int>(j.at("steps")[0].at("cross_attention").size());
                heads = static_cast<int>(j.at("steps")[0].at("cross_attention")[0].size());
                hits.assign(static_cast<std::size_t>(layers * heads), 0);
            }
            words += static_cast<int>(std::max(written.size(), reference.size()));
            for (std::size_t i = 0; i < std::min(written.size(), reference.size()); ++i) {
                if (written[i] != reference[i]) continue;
                ++correct;
                if (!translations.count(written[i])) continue;  // "ri" and "." translate no word of their own
                ++aligned;
                const nlohmann::json& rows = j.at("steps")[i].at("cross_attention");
                for (int l = 0; l < layers; ++l)
                    for (int h = 0; h < heads; ++h) {
                        std::size_t argmax = 0;
                        for (std::size_t k = 1; k < source.size(); ++k)
                            if (rows[l][h][k].get<double>() > rows[l][h][argmax].get<double>()) argmax = k;
                        const auto it = firstWord.find(source[argmax]);
                        if (it != firstWord.end() && it->second == written[i]) ++hits[static_cast<std::size_t>(l * heads + h)];
                    }
            }
        }
        const auto best = std::max_element(hits.begin(), hits.end());
        const int b = static_cast<int>(best - hits.begin());
        const double accuracy = double(correct) / words, alignment = double(*best) / std::max(1, aligned);
        qInfo("translator on %d held-out sentences: word accuracy %.3f, alignment %.3f (decoder L%d H%d, %d words)", kSentences,
              accuracy, alignment, b / heads, b % heads, aligned);
        QVERIFY2(accuracy >= 0.9, qPrintable(QString::number(accuracy)));
        QVERIFY2(alignment >= 0.8, qPrintable(QString::number(alignment)));
    }
};

QTEST_APPLESS_MAIN(TestCliBuiltin)
#include "tst_cli_builtin.moc"
