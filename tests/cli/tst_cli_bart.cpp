// attnscope-cli on a BART folder (tests/core/tinybart.h): info says encoder-decoder with both stacks'
// depths, attention takes --source and --text and prints the three kinds of attention and the next tokens
// exactly as the core computes them, tokenize --source adds BART's special tokens, and the usage and input
// errors are one sentence with exit code 2 or 1.
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

#include <nlohmann/json.hpp>

#include "clirunner.h"
#include "numericcheck.h"
#include "wordrule.h"
#include "core/model/encoderdecoder.h"
#include "core/model/generate.h"
#include "tinybart.h"
#include "tinymarian.h"
#include "tinyt5.h"
#include "core/open/openmodel.h"

using namespace attnscope;

class TestCliBart : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    QString m_bart;

    nlohmann::json run(const QStringList& args)
    {
        const clitest::Run cli = clitest::runCli(args);
        if (!cli.finished || cli.exitCode != 0) {
            qWarning("%s", cli.err.constData());
            return {};
        }
        return nlohmann::json::parse(cli.out.toStdString());
    }

    // The largest difference between a JSON [layer][head][row][col] list and the core's matrices. A null
    // (how JSON prints a NaN) is read as NaN, so it fails.
    static numericcheck::Worst worst(const nlohmann::json& j, const std::vector<Matrix>& m, int heads)
    {
        numericcheck::Worst w;
        for (std::size_t l = 0; l < j.size(); ++l)
            for (std::size_t h = 0; h < j[l].size(); ++h) {
                const Matrix& x = m[l * std::size_t(heads) + h];
                w.label("layer %zu head %zu", l, h);
                if (Eigen::Index(j[l][h].size()) != x.rows()) w.fail("the printed matrix has another number of rows");
                for (Eigen::Index r = 0; r < x.rows() && w.finite(); ++r) {
                    const nlohmann::json& row = j[l][h][std::size_t(r)];
                    if (Eigen::Index(row.size()) != x.cols()) w.fail("a printed row has another number of columns");
                    for (Eigen::Index c = 0; c < x.cols() && w.finite(); ++c) {
                        const nlohmann::json& value = row[std::size_t(c)];
                        w.add(value.is_number() ? value.get<double>() : NAN, double(x(r, c)), r, c);
                    }
                }
            }
        return w;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        m_bart = QString::fromStdString(tinybart::writeFolder(m_tmp, "tiny-bart"));
    }

    void infoSaysEncoderDecoder()
    {
        const nlohmann::json j = run({"info", "--model", m_bart});
        QCOMPARE(j.value("architecture", ""), std::string("bart"));
        QCOMPARE(j.value("encoder_decoder", false), true);
        QCOMPARE(j.value("encoder_layers", 0), tinybart::kEncL);
        QCOMPARE(j.value("decoder_layers", 0), tinybart::kDecL);
        QCOMPARE(j.value("positional", ""), std::string("learned"));
        QCOMPARE(run({"info"}).value("encoder_decoder", true), false);
    }

    void attentionIsTheCores()
    {
        const nlohmann::json j =
            run({"attention", "--model", m_bart, "--source", "the cat sat on the mat", "--text", "the cat", "--top-k", "5", "--stats"});
        QVERIFY(!j.is_null());
        const auto source = j.at("source_tokens").get<std::vector<std::string>>();
        const auto target = j.at("tokens").get<std::vector<std::string>>();
        QCOMPARE(source.front(), std::string("<s>"));
        QCOMPARE(source.back(), std::string("</s>"));
        QCOMPARE(target.front(), std::string("</s>"));  // BART's decoder starts from </s>

        Result<ModelPtr> model = loadModel(m_bart.toStdString());
        QVERIFY(model);
        AttentionSettings s;  // the defaults: causal decoder, √dₖ, temperature 1
        EncoderDecoderTrace trace;
        QVERIFY(forwardEncoderDecoder(**model, j.at("source_token_ids").get<std::vector<int>>(),
                                      j.at("token_ids").get<std::vector<int>>(), s, true, trace)
                    .ok());
        const int H = tinybart::kH;
        QCOMPARE(int(j.at("encoder_attention").size()), tinybart::kEncL);
        QCOMPARE(int(j.at("cross_attention").size()), tinybart::kDecL);
        const numericcheck::Worst encoderWeights = worst(j.at("encoder_attention"), trace.encoder.attention, H);
        QVERIFY2(encoderWeights.within(1e-6), encoderWeights.message("encoder_attention").c_str());
        const numericcheck::Worst selfWeights = worst(j.at("attention"), trace.selfAttention, H);
        QVERIFY2(selfWeights.within(1e-6), selfWeights.message("attention").c_str());
        const numericcheck::Worst crossWeights = worst(j.at("cross_attention"), trace.crossAttention, H);
        QVERIFY2(crossWeights.within(1e-6), crossWeights.message("cross_attention").c_str());
        QCOMPARE(j.at("cross_attention")[0][0].size(), target.size());
        QCOMPARE(j.at("cross_attention")[0][0][0].size(), source.size());
        QCOMPARE(j.at("stats").at("entropy").size(), std::size_t(tinybart::kDecL));

        // The next tokens: the core's logits through a softmax, best first.
        const Eigen::RowVectorXf& logits = trace.nextLogits;
        Eigen::Index best = 0;
        const float top = logits.maxCoeff(&best);
        const double sum = (logits.array() - top).exp().sum();
        const nlohmann::json& first = j.at("next_tokens")[0];
        QCOMPARE(first.at("id").get<int>(), int(best));
        QVERIFY(std::abs(first.at("p").get<double>() - 1.0 / sum) < 1e-6);
    }

    // decoder_attention_heads of its own: each stack's attention has its own head count, and each stack's
    // kv_head names its own heads; the numbers are the core's, and trace names the decoder's heads.
    void decoderWithHeadsOfItsOwn()
    {
        tinybart::Options o;
        o.decoderHeads = 4;
        const QString folder = QString::fromStdString(tinybart::writeFolder(m_tmp, "tiny-bart-4-decoder-heads", o));
        const nlohmann::json j = run({"attention", "--model", folder, "--source", "the cat sat on the mat", "--text", "the cat"});
        QVERIFY(!j.is_null());
        QCOMPARE(j.at("encoder_attention")[0].size(), std::size_t(tinybart::kH));
        QCOMPARE(j.at("attention")[0].size(), std::size_t(4));
        QCOMPARE(j.at("cross_attention")[0].size(), std::size_t(4));
        QCOMPARE(j.at("encoder_kv_head").get<std::vector<int>>(), (std::vector<int>{0, 1}));
        QCOMPARE(j.at("cross_kv_head").get<std::vector<int>>(), (std::vector<int>{0, 1, 2, 3}));
        Result<ModelPtr> model = loadModel(folder.toStdString());
        QVERIFY(model);
        EncoderDecoderTrace trace;
        QVERIFY(forwardEncoderDecoder(**model, j.at("source_token_ids").get<std::vector<int>>(), j.at("token_ids").get<std::vector<int>>(),
                                      AttentionSettings{}, false, trace)
                    .ok());
        const numericcheck::Worst crossWeights = worst(j.at("cross_attention"), trace.crossAttention, 4);
        QVERIFY2(crossWeights.within(1e-6), crossWeights.message("cross_attention").c_str());
        // The decoder's head 3 exists though the encoder has two heads.
        const clitest::Run traced = clitest::runCli({"trace", "--model", folder, "--source", "the cat sat", "--text", "the cat",
                                                     "--layer", "0", "--head", "3"});
        QCOMPARE(traced.exitCode, 0);
        const clitest::Run past = clitest::runCli({"trace", "--model", folder, "--source", "the cat sat", "--text", "the cat",
                                                   "--layer", "0", "--head", "4"});
        QCOMPARE(past.exitCode, 1);
    }

    void errorsAreOneSentence()
    {
        clitest::Run r = clitest::runCli({"attention", "--model", m_bart, "--text", "the cat"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("--source"), r.err.constData());
        r = clitest::runCli({"attention", "--text", "the cat", "--source", "a dog"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("encoder-decoder"), r.err.constData());
        r = clitest::runCli({"attention", "--model", m_bart, "--source", "the cat", "--text", "a", "--block-keys", "9"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("9"), r.err.constData());
        r = clitest::runCli({"attention", "--model", m_bart, "--source", "", "--text", "a"});
        QCOMPARE(r.exitCode, 0);  // an empty source is still <s> </s>
        // The decoder's mask (core's decoderSettings): causal as trained, or unmasked on a given --text; a
        // window is refused, and generation always writes as trained.
        r = clitest::runCli({"attention", "--model", m_bart, "--source", "the cat", "--text", "a", "--mask", "window:2"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("window"), r.err.constData());
        r = clitest::runCli({"generate", "--model", m_bart, "--source", "the cat", "--mask", "none"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("causal mask it was trained with"), r.err.constData());
        QCOMPARE(clitest::runCli({"generate", "--model", m_bart, "--source", "the cat", "--mask", "causal", "--max-new-tokens", "1"}).exitCode, 0);
    }

    // --mask none draws the decoder's counterfactual pass: its self-attention reaches later target tokens,
    // which the causal pass never does; the core's pass under the same rule gives the same numbers.
    void decoderUnmaskedIsTheCounterfactual()
    {
        const nlohmann::json causal = run({"attention", "--model", m_bart, "--source", "the cat sat", "--text", "the cat"});
        const nlohmann::json open = run({"attention", "--model", m_bart, "--source", "the cat sat", "--text", "the cat", "--mask", "none"});
        QVERIFY(!causal.is_null() && !open.is_null());
        double aboveCausal = 0, aboveOpen = 0;
        for (const auto& layer : causal.at("attention"))
            for (const auto& head : layer)
                for (std::size_t q = 0; q < head.size(); ++q)
                    for (std::size_t k = q + 1; k < head[q].size(); ++k) aboveCausal += head[q][k].get<double>();
        for (const auto& layer : open.at("attention"))
            for (const auto& head : layer)
                for (std::size_t q = 0; q < head.size(); ++q)
                    for (std::size_t k = q + 1; k < head[q].size(); ++k) aboveOpen += head[q][k].get<double>();
        QCOMPARE(aboveCausal, 0.0);
        QVERIFY(aboveOpen > 0.01);
        Result<ModelPtr> model = loadModel(m_bart.toStdString());
        QVERIFY(model);
        EncoderDecoderTrace trace;
        QVERIFY(forwardEncoderDecoder(**model, open.at("source_token_ids").get<std::vector<int>>(), open.at("token_ids").get<std::vector<int>>(),
                                      decoderSettings({}, DecoderMask::Unmasked), true, trace)
                    .ok());
        const numericcheck::Worst selfWeights = worst(open.at("attention"), trace.selfAttention, tinybart::kH);
        QVERIFY2(selfWeights.within(1e-6), selfWeights.message("attention").c_str());
    }

    // generate: the core's greedy steps, each with its cross-attention row over the source; decoder-only
    // models give their self-attention row instead.
    void generateWritesFromTheSource()
    {
        const nlohmann::json j = run({"generate", "--model", m_bart, "--source", "the cat sat", "--max-new-tokens", "3", "--top-k", "2"});
        QVERIFY(!j.is_null());
        Result<ModelPtr> model = loadModel(m_bart.toStdString());
        QVERIFY(model);
        Result<TokenizedText> source = encodeSource(**model, "the cat sat");
        QVERIFY(source);
        Result<TokenGeneration> g = generateTokens(**model, source->ids, 3, {});
        QVERIFY(g);
        QCOMPARE(j.at("token_ids").get<std::vector<int>>(), g->ids);
        QCOMPARE(j.at("steps").size(), g->steps.size());
        const nlohmann::json& step = j.at("steps")[0];
        QCOMPARE(step.at("id").get<int>(), g->steps[0].chosen.id);
        QCOMPARE(step.at("candidates").size(), std::size_t(2));
        QVERIFY(!step.contains("attention"));
        const nlohmann::json& cross = step.at("cross_attention");
        QCOMPARE(int(cross.size()), tinybart::kDecL);
        QCOMPARE(cross[2][1].size(), g->source.size());
        for (std::size_t k = 0; k < g->source.size(); ++k)
            QVERIFY(std::abs(cross[2][1][k].get<double>() - g->steps[0].attention[std::size_t(2 * tinybart::kH + 1)][Eigen::Index(k)]) < 1e-6);

        const nlohmann::json d = run({"generate", "--text", "the cat", "--max-new-tokens", "2"});
        QCOMPARE(d.at("steps").size(), std::size_t(2));
        QVERIFY(d.at("steps")[1].contains("attention"));
        QVERIFY(!d.contains("source_tokens"));
        QCOMPARE(clitest::runCli({"generate", "--model", m_bart, "--text", "the cat"}).exitCode, 2);
        QCOMPARE(clitest::runCli({"generate", "--source", "the cat"}).exitCode, 2);
        QCOMPARE(clitest::runCli({"generate", "--text", "the cat", "--max-new-tokens", "0"}).exitCode, 2);
    }

    // A Marian folder through the same commands: its fixed sinusoidal positions, SentencePiece tokens with
    // </s> after the source, and the decoder starting from <pad>.
    void marianThroughTheCli()
    {
        const QString marian = QString::fromStdString(tinymarian::writeFolder(m_tmp, "tiny-marian"));
        const nlohmann::json info = run({"info", "--model", marian});
        QCOMPARE(info.value("architecture", ""), std::string("marian"));
        QCOMPARE(info.value("positional", ""), std::string("sinusoidal"));
        QCOMPARE(info.value("activation", ""), std::string("silu"));
        QCOMPARE(info.value("tokenizer", ""), std::string("sentencepiece"));
        const nlohmann::json j = run({"attention", "--model", marian, "--source", "the cat sat", "--text", "lo mi"});
        QVERIFY(!j.is_null());
        QCOMPARE(j.at("source_tokens").back().get<std::string>(), std::string("</s>"));
        QCOMPARE(j.at("token_ids")[0].get<int>(), tinymarian::padId());
        QCOMPARE(j.at("cross_attention")[1][1].size(), j.at("tokens").size());
        const nlohmann::json g = run({"generate", "--model", marian, "--source", "the cat sat", "--max-new-tokens", "3"});
        QVERIFY(!g.at("steps").empty());
    }

    // A T5 folder: relative buckets, the folded √dₖ and gated-gelu said by info; attention matches the core's
    // own run; generation stops or runs out of steps without an error.
    void t5ThroughTheCli()
    {
        tinyt5::Options gated;
        gated.gated = true;
        const std::string dir = tinyt5::writeFolder(m_tmp, "tiny-t5", gated);
        const QString t5 = QString::fromStdString(dir);
        const nlohmann::json info = run({"info", "--model", t5});
        QCOMPARE(info.value("architecture", ""), std::string("t5"));
        QCOMPARE(info.value("positional", ""), std::string("relative-buckets"));
        QCOMPARE(info.value("activation", ""), std::string("gated-gelu"));
        QCOMPARE(info.value("normalization", ""), std::string("rms-norm"));
        QCOMPARE(info.value("relative_buckets", 0), tinyt5::kBuckets);
        QCOMPARE(info.value("sqrt_dk_folded_into_weights", false), true);
        QCOMPARE(info.value("encoder_decoder", false), true);
        const nlohmann::json j = run({"attention", "--model", t5, "--source", "the cat sat on the mat", "--text", "lo miska"});
        QVERIFY(!j.is_null());
        QCOMPARE(j.at("source_tokens").back().get<std::string>(), std::string("</s>"));
        QCOMPARE(j.at("token_ids")[0].get<int>(), tinyt5::kPadId);
        Result<ModelPtr> model = loadModel(dir);
        QVERIFY(model);
        EncoderDecoderTrace trace;
        QVERIFY(forwardEncoderDecoder(**model, encodeSource(**model, "the cat sat on the mat")->ids,
                                      encodeTarget(**model, "lo miska")->ids, AttentionSettings{}, false, trace)
                    .ok());
        const numericcheck::Worst crossWeights = worst(j.at("cross_attention"), trace.crossAttention, tinyt5::kH);
        QVERIFY2(crossWeights.within(1e-6), crossWeights.message("cross_attention").c_str());
        const numericcheck::Worst selfWeights = worst(j.at("attention"), trace.selfAttention, tinyt5::kH);
        QVERIFY2(selfWeights.within(1e-6), selfWeights.message("attention").c_str());
        const numericcheck::Worst encoderWeights = worst(j.at("encoder_attention"), trace.encoder.attention, tinyt5::kH);
        QVERIFY2(encoderWeights.within(1e-6), encoderWeights.message("encoder_attention").c_str());
        const nlohmann::json g = run({"generate", "--model", t5, "--source", "the cat sat", "--max-new-tokens", "3"});
        QVERIFY(!g.at("steps").empty());
    }

    // export --what cross-attention: the core's cross-attention, (L_dec, H, T, S) or one head's (T, S), with the
    // source tokens across a CSV's header.
    void exportCrossAttention()
    {
        const nlohmann::json j = run({"export", "--model", m_bart, "--what", "cross-attention", "--source", "the cat sat on the mat",
                                      "--text", "the cat", "--format", "json", "--out", "-"});
        QVERIFY(!j.is_null());
        Result<ModelPtr> model = loadModel(m_bart.toStdString());
        const TokenizedText source = *encodeSource(**model, "the cat sat on the mat"), target = *encodeTarget(**model, "the cat");
        EncoderDecoderTrace trace;
        QVERIFY(forwardEncoderDecoder(**model, source.ids, target.ids, {}, false, trace).ok());
        QCOMPARE(j.at("shape").get<std::vector<int>>(),
                 (std::vector<int>{tinybart::kDecL, tinybart::kH, int(target.ids.size()), int(source.ids.size())}));
        QCOMPARE(j.at("source_token_ids").get<std::vector<int>>(), source.ids);
        QCOMPARE(j.at("token_ids").get<std::vector<int>>(), target.ids);
        const numericcheck::Worst exported = worst(j.at("data"), trace.crossAttention, tinybart::kH);
        QVERIFY2(exported.within(1e-6), exported.message("data").c_str());

        // One decoder layer past the encoder's: the layer counts the decoder's layers.
        const clitest::Run csv = clitest::runCli({"export", "--model", m_bart, "--what", "cross-attention", "--source", "the cat",
                                                  "--text", "a", "--layer", "2", "--head", "1", "--format", "csv", "--out", "-"});
        QCOMPARE(csv.exitCode, 0);
        const QList<QByteArray> lines = csv.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 1 + 2);                                       // the header, then </s> and "a"
        QVERIFY2(lines[0].startsWith("query,<s>,the,"), lines[0].constData());  // the source across

        QCOMPARE(clitest::runCli({"export", "--model", m_bart, "--what", "cross-attention", "--text", "a", "--out", "-"}).exitCode, 2);
        QCOMPARE(clitest::runCli({"export", "--what", "cross-attention", "--source", "a", "--text", "a", "--out", "-"}).exitCode, 2);
        QCOMPARE(clitest::runCli({"export", "--model", m_bart, "--what", "cross-attention", "--source", "a", "--text", "a",
                                  "--layer", "3", "--head", "0", "--out", "-", "--format", "json"}).exitCode, 1);
    }

    // --words on an encoder–decoder: the source's words (<s> and </s> each alone) and the typed target's, and
    // the encoder's, the decoder's and the cross-attention merged into words by the rule worked here.
    void wordsOfSourceAndTarget()
    {
        const nlohmann::json j = run({"attention", "--model", m_bart, "--source", "the cat, sat", "--text", "the cat", "--words"});
        QVERIFY(!j.is_null());
        QCOMPARE(j.at("source_words").get<std::vector<std::string>>(), (std::vector<std::string>{"<s>", "the", "cat,", "sat", "</s>"}));
        const auto sourceOf = j.at("source_word_of_token").get<std::vector<int>>(), targetOf = j.at("word_of_token").get<std::vector<int>>();
        QCOMPARE(sourceOf.size(), j.at("source_tokens").size());
        QCOMPARE(targetOf.size(), j.at("tokens").size());
        QCOMPARE(j.at("words").back().get<std::string>(), std::string("cat"));
        const numericcheck::Worst encoder = clitest::againstWordRule(j.at("word_encoder_attention"), j.at("encoder_attention"), sourceOf, sourceOf),
                                  self = clitest::againstWordRule(j.at("word_attention"), j.at("attention"), targetOf, targetOf),
                                  cross = clitest::againstWordRule(j.at("word_cross_attention"), j.at("cross_attention"), targetOf, sourceOf);
        QVERIFY2(encoder.within(1e-5), encoder.message("encoder").c_str());
        QVERIFY2(self.within(1e-5), self.message("decoder").c_str());
        QVERIFY2(cross.within(1e-5), cross.message("cross").c_str());
        const nlohmann::json t = run({"trace", "--model", m_bart, "--source", "the cat, sat", "--text", "the cat", "--words", "--layer", "1", "--head", "0"});
        numericcheck::Worst same;
        same.add(t.at("word_weights").get<std::vector<std::vector<double>>>(), j.at("word_cross_attention")[1][0].get<std::vector<std::vector<double>>>());
        QVERIFY2(same.within(1e-6), same.message("trace's word_weights").c_str());
        const nlohmann::json e = run({"export", "--model", m_bart, "--what", "cross-attention", "--source", "the cat, sat", "--text", "the cat",
                                      "--words", "--format", "json", "--out", "-"});
        QCOMPARE(e.at("level").get<std::string>(), std::string("words"));
        QCOMPARE(e.at("source_words"), j.at("source_words"));
        numericcheck::Worst exported;
        exported.add(e.at("data")[1][0].get<std::vector<std::vector<double>>>(), j.at("word_cross_attention")[1][0].get<std::vector<std::vector<double>>>());
        QVERIFY2(exported.within(1e-6), exported.message("export").c_str());
    }

    // trace --source: a decoder layer's cross-attention head step by step, each step recomputable from the one
    // before it: scores = q kᵀ, weights = softmax(m · scores) over the source, head_output = weights v.
    void traceCrossAttentionHead()
    {
        const nlohmann::json j = run({"trace", "--model", m_bart, "--source", "the cat sat on the mat", "--text", "the cat",
                                      "--layer", "2", "--head", "1"});
        QVERIFY(!j.is_null());
        auto matrix = [&](const char* key) {
            const nlohmann::json& rows = j.at(key);
            Matrix m(Eigen::Index(rows.size()), Eigen::Index(rows[0].size()));
            for (Eigen::Index r = 0; r < m.rows(); ++r)
                for (Eigen::Index c = 0; c < m.cols(); ++c) m(r, c) = rows[std::size_t(r)][std::size_t(c)].get<float>();
            return m;
        };
        const Matrix q = matrix("q"), k = matrix("k"), v = matrix("v"), scores = matrix("scores"), weights = matrix("weights");
        const std::size_t S = j.at("source_tokens").size(), T = j.at("tokens").size();
        QCOMPARE(k.rows(), Eigen::Index(S));
        QCOMPARE(q.rows(), Eigen::Index(T));
        QCOMPARE(matrix("memory").rows(), Eigen::Index(S));
        const numericcheck::Worst dScores = numericcheck::difference(scores, q * k.transpose()),
                                  dOutput = numericcheck::difference(matrix("head_output"), weights * v);
        QVERIFY2(dScores.within(1e-4f), dScores.message("scores against q kᵀ").c_str());
        QVERIFY2(dOutput.within(1e-4f), dOutput.message("head output against weights v").c_str());
        // The weights are the core's cross-attention for that head.
        Result<ModelPtr> model = loadModel(m_bart.toStdString());
        const TokenizedText source = *encodeSource(**model, "the cat sat on the mat"), target = *encodeTarget(**model, "the cat");
        EncoderDecoderTrace trace;
        QVERIFY(forwardEncoderDecoder(**model, source.ids, target.ids, {}, false, trace).ok());
        const numericcheck::Worst dWeights = numericcheck::difference(weights, trace.cross(2, 1));
        QVERIFY2(dWeights.within(1e-6f), dWeights.message("printed weights against the core's").c_str());
    }

    void tokenizeSource()
    {
        const nlohmann::json j = run({"tokenize", "--model", m_bart, "--source", "the cat"});
        const auto tokens = j.at("tokens").get<std::vector<std::string>>();
        QCOMPARE(tokens.front(), std::string("<s>"));
        QCOMPARE(tokens.back(), std::string("</s>"));
        // --text is the target: the decoder's start token (</s>), then the text without specials.
        const auto target = run({"tokenize", "--model", m_bart, "--text", "the cat"}).at("tokens").get<std::vector<std::string>>();
        QCOMPARE(target.size(), tokens.size() - 1);
        QCOMPARE(target.front(), std::string("</s>"));
    }
};

QTEST_GUILESS_MAIN(TestCliBart)
#include "tst_cli_bart.moc"
