// The recurrent baseline on the command line and `attnscope-cli recall`: every attention command refuses
// builtin-rnn with one sentence; recall's figures equal a computation made here, in-process and by plain
// loops over the probabilities, for a hand-built recurrent model whose answers are known, for the built-in
// transformer and for builtin-rnn; bad arguments are refused.
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "clirunner.h"
#include "core/io/formats/safetensors.h"
#include "core/model/forward.h"
#include "core/open/openmodel.h"
#include "core/text/filetext.h"
#include "core/text/vocabtokenizer.h"
#include "core/train/corpus/corpus.h"
#include "core/train/corpus/lexicon.h"
#include "core/train/probes/recall.h"

using namespace attnscope;

namespace {

nlohmann::json recallOf(const QStringList& args)
{
    const clitest::Run cli = clitest::runCli(QStringList{"recall"} + args);
    if (!cli.finished || cli.exitCode != 0) {
        qWarning("attnscope-cli recall failed: %s", cli.err.constData());
        return {};
    }
    return nlohmann::json::parse(cli.out.toStdString());
}

// Mean over the prompts of (is the argmax an answer, the answers' total probability), with `probabilities`
// giving a prompt's next-token distribution and the answers' ids found by tokenizing the answer alone
// after the prompt (the word tokenizer: one token per word).
struct Expected {
    double accuracy = 0, pCorrect = 0;
};
Expected expected(const std::vector<train::RecallPrompt>& prompts, const Tokenizer& tokenizer,
                  const std::function<std::vector<double>(const std::vector<int>&)>& probabilities)
{
    Expected e;
    for (const train::RecallPrompt& p : prompts) {
        const std::vector<int> ids = tokenizer.encode(p.text)->ids;
        const std::vector<double> probs = probabilities(ids);
        const std::size_t best = std::size_t(std::max_element(probs.begin(), probs.end()) - probs.begin());
        bool right = false;
        double mass = 0;
        for (const std::string& a : p.answers) {
            const int id = tokenizer.encode(a)->ids.back();
            mass += probs[std::size_t(id)];
            right = right || std::size_t(id) == best;
        }
        e.accuracy += right ? 1.0 : 0.0;
        e.pCorrect += mass;
    }
    e.accuracy /= double(prompts.size());
    e.pCorrect /= double(prompts.size());
    return e;
}

std::vector<double> softmax(const Eigen::RowVectorXf& logits)
{
    std::vector<double> p(std::size_t(logits.size()));
    double max = logits.maxCoeff(), sum = 0;
    for (std::size_t i = 0; i < p.size(); ++i) sum += (p[i] = std::exp(double(logits[Eigen::Index(i)]) - max));
    for (double& v : p) v /= sum;
    return p;
}

} // namespace

class TestCliRecall : public QObject {
    Q_OBJECT
private slots:
    void attentionCommandsRefuseTheRecurrentModel_data();
    void attentionCommandsRefuseTheRecurrentModel();
    void handBuiltModelScoresAsCountedByHand();
    void builtinTransformerMatchesItsForwardPass();
    void builtinRnnMatchesItsForwardPass();
    void badArgumentsAreRefused_data();
    void badArgumentsAreRefused();
};

void TestCliRecall::attentionCommandsRefuseTheRecurrentModel_data()
{
    QTest::addColumn<QStringList>("args");
    const QString text = QStringLiteral("the dog sat on the rug because it");
    QTest::newRow("attention") << QStringList{"attention", "--text", text};
    QTest::newRow("trace") << QStringList{"trace", "--text", text, "--layer", "0", "--head", "0"};
    QTest::newRow("heads") << QStringList{"heads", "--text", text};
    QTest::newRow("rollout") << QStringList{"rollout", "--text", text};
    QTest::newRow("export") << QStringList{"export", "--text", text, "--what", "attention", "--format", "json", "--out", "-"};
    QTest::newRow("render") << QStringList{"render", "--text", text, "--view", "heatmap", "--out", "/dev/null.png"};
    QTest::newRow("info") << QStringList{"info"};
    QTest::newRow("probe-heads") << QStringList{"probe-heads"};
}

void TestCliRecall::attentionCommandsRefuseTheRecurrentModel()
{
    QFETCH(QStringList, args);
    const clitest::Run cli = clitest::runCli(args + QStringList{"--model", "builtin-rnn"});
    QVERIFY(cli.finished);
    QCOMPARE(cli.exitCode, 1);
    QCOMPARE(cli.out, QByteArray());
    QCOMPARE(cli.err, QByteArray("error: builtin-rnn is a recurrent network (a GRU): it has no attention to show, only a hidden state "
                                 "carried from token to token.\n"));
}

void TestCliRecall::handBuiltModelScoresAsCountedByHand()
{
    // A GRU whose weights are all zero keeps a zero state (z = 1/2, n = tanh 0 = 0), so its logits are its
    // output bias whatever it reads (a zero state projected by zero weights): "barked" 6, "purred" 5, everything else 0. It is right exactly for the
    // animals that bark, or purr and not bark, and its p_correct is a sum of those fixed probabilities.
    Result<std::string> vocabText = readSmallFile(ATTNSCOPE_BUILTIN_VOCAB, 1 << 20);
    QVERIFY(vocabText.hasValue());
    Result<VocabTokenizer> vocab = VocabTokenizer::fromText(*vocabText, "vocab.txt");
    QVERIFY(vocab.hasValue());
    const int V = vocab->vocabSize(), Hd = 4, barked = vocab->idOf("barked"), purred = vocab->idOf("purred");
    QVERIFY(barked > 0 && purred > 0);
    QTemporaryDir dir;
    const QString folder = dir.path() + "/zero-gru";
    QVERIFY(QDir().mkpath(folder));
    auto zeros = [](std::string name, std::vector<std::int64_t> shape) {
        std::int64_t n = 1;
        for (std::int64_t s : shape) n *= s;
        return NamedTensor{std::move(name), shape, std::vector<float>(std::size_t(n), 0.0f)};
    };
    NamedTensor bias = zeros("output.bias", {V});
    bias.values[std::size_t(barked)] = 6;
    bias.values[std::size_t(purred)] = 5;
    QVERIFY(writeSafetensors((folder + "/model.safetensors").toStdString(),
                             {zeros("embedding.weight", {V, Hd}), zeros("gru.weight_ih", {Hd, 3 * Hd}), zeros("gru.weight_hh", {Hd, 3 * Hd}),
                              zeros("gru.bias_ih", {3 * Hd}), zeros("gru.bias_hh", {3 * Hd}), zeros("output.weight", {Hd, Hd}),
                              zeros("output.projection_bias", {Hd}), bias},
                             DType::F32, {})
                .ok());
    std::ofstream(folder.toStdString() + "/config.json")
        << R"({"model_type":"attnscope-gru","hidden_size":4,"vocab_size":)" << V << R"(,"n_positions":1024})";
    std::ofstream(folder.toStdString() + "/vocab.txt") << *vocabText;

    const double z = std::exp(6.0) + std::exp(5.0) + (V - 2), pBarked = std::exp(6.0) / z, pPurred = std::exp(5.0) / z, pOther = 1.0 / z;
    for (const char* probe : {"pronoun", "induction"}) {
        const nlohmann::json j = recallOf({"--model", folder, "--probe", probe, "--distances", "0,4,16", "--sentences", "25"});
        QCOMPARE(j.value("probe", ""), std::string(probe));
        QCOMPARE(j.at("distances"), nlohmann::json({0, 4, 16}));
        QCOMPARE(j.at("sentences").get<int>(), 25);
        // By hand: each sentence's animal, from the generator's sentences and the lexicon.
        double right = 0, mass = 0;
        for (const std::string& s : train::heldOutSentences(25, train::RecallOptions{}.seed)) {
            const std::vector<std::string> w = train::corpusWords(s);
            for (const train::Animal& a : train::lexicon().animals) {
                const auto at = std::find(w.begin(), w.end(), a.singular);
                if (at == w.end()) continue;
                if (std::string(probe) == "pronoun") {
                    const bool barks = std::find(a.sounds.begin(), a.sounds.end(), "barked") != a.sounds.end();
                    const bool purrs = std::find(a.sounds.begin(), a.sounds.end(), "purred") != a.sounds.end();
                    right += barks ? 1 : 0;
                    mass += (barks ? pBarked : 0) + (purrs ? pPurred : 0) + double(a.sounds.size() - barks - purrs) * pOther;
                } else {
                    mass += pOther;  // the answer is the posture after the animal: never "barked" or "purred"
                }
            }
        }
        for (int d = 0; d < 3; ++d) {
            QVERIFY2(std::abs(j.at("accuracy")[d].get<double>() - right / 25) < 1e-12, probe);
            QVERIFY2(std::abs(j.at("p_correct")[d].get<double>() - mass / 25) < 1e-6,
                     qPrintable(QString("%1: %2 against %3").arg(probe).arg(j.at("p_correct")[d].get<double>()).arg(mass / 25)));
        }
    }
}

void TestCliRecall::builtinTransformerMatchesItsForwardPass()
{
    const ModelPtr model = *loadModel("builtin");
    CaptureRequest capture;
    capture.allAttention = false;
    capture.nextTokenLogits = true;
    for (train::RecallProbe probe : {train::RecallProbe::Pronoun, train::RecallProbe::Induction}) {
        const nlohmann::json j = recallOf({"--model", "builtin", "--probe", QString::fromStdString(train::toString(probe)), "--distances", "0,8",
                                           "--sentences", "20"});
        train::RecallOptions o;
        o.probe = probe;
        o.sentences = 20;
        for (int k = 0; k < 2; ++k) {
            const Expected e = expected(train::recallPrompts(o, k == 0 ? 0 : 8), *model->tokenizer, [&](const std::vector<int>& ids) {
                return softmax(forward(*model, ids, AttentionSettings{}, capture)->nextLogits);
            });
            QCOMPARE(j.at("accuracy")[k].get<double>(), e.accuracy);
            QVERIFY(std::abs(j.at("p_correct")[k].get<double>() - e.pCorrect) < 1e-6);
        }
        qInfo("builtin, %s: accuracy %s, p_correct %s", train::toString(probe).c_str(), j.at("accuracy").dump().c_str(),
              j.at("p_correct").dump().c_str());
        // With no filler the built-in transformer knows the pronoun's answer (0.89 over 100 sentences).
        if (probe == train::RecallProbe::Pronoun) QVERIFY2(j.at("accuracy")[0].get<double>() >= 0.7, j.dump().c_str());
    }
}

void TestCliRecall::builtinRnnMatchesItsForwardPass()
{
    const RecurrentModelPtr model = *loadRecurrentModelSpec("builtin-rnn");
    for (train::RecallProbe probe : {train::RecallProbe::Pronoun, train::RecallProbe::Induction}) {
        const nlohmann::json j = recallOf({"--model", "builtin-rnn", "--probe", QString::fromStdString(train::toString(probe)), "--distances",
                                           "0,8", "--sentences", "20"});
        train::RecallOptions o;
        o.probe = probe;
        o.sentences = 20;
        for (int k = 0; k < 2; ++k) {
            const Expected e = expected(train::recallPrompts(o, k == 0 ? 0 : 8), *model->tokenizer, [&](const std::vector<int>& ids) {
                const RecurrentTrace t = *runRecurrent(*model, ids);
                return softmax(t.logits.row(t.tokens - 1));
            });
            QCOMPARE(j.at("accuracy")[k].get<double>(), e.accuracy);
            QVERIFY(std::abs(j.at("p_correct")[k].get<double>() - e.pCorrect) < 1e-6);
        }
        qInfo("builtin-rnn, %s: accuracy %s, p_correct %s", train::toString(probe).c_str(), j.at("accuracy").dump().c_str(),
              j.at("p_correct").dump().c_str());
    }
}

void TestCliRecall::badArgumentsAreRefused_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("exitCode");
    QTest::newRow("distance not a number") << QStringList{"--distances", "1,x"} << 2;
    QTest::newRow("empty distance") << QStringList{"--distances", "1,,2"} << 2;
    QTest::newRow("negative distance") << QStringList{"--distances", "-1"} << 1;
    QTest::newRow("distance too far") << QStringList{"--distances", "100000"} << 1;
    QTest::newRow("unknown probe") << QStringList{"--probe", "coreference"} << 2;
    QTest::newRow("no sentences") << QStringList{"--sentences", "0"} << 2;
    QTest::newRow("an encoder-decoder") << QStringList{"--model", "builtin-translator"} << 1;
    QTest::newRow("no such model") << QStringList{"--model", "/nonexistent/model"} << 1;
}

void TestCliRecall::badArgumentsAreRefused()
{
    QFETCH(QStringList, args);
    QFETCH(int, exitCode);
    const QStringList few = args.contains("--sentences") ? QStringList{} : QStringList{"--sentences", "2"};
    const clitest::Run cli = clitest::runCli(QStringList{"recall"} + few + args);
    QVERIFY(cli.finished);
    QCOMPARE(cli.exitCode, exitCode);
    QVERIFY(cli.out.isEmpty());
    // One sentence; a usage error adds the line saying where the help is.
    QVERIFY2(cli.err.startsWith("error: ") && cli.err.count('\n') == (exitCode == 2 ? 2 : 1), cli.err.constData());
}

QTEST_APPLESS_MAIN(TestCliRecall)
#include "tst_cli_recall.moc"
