// Loading BERT and DistilBERT folders: tiny checkpoints written here, checked for the config, the
// [out, in] -> (in, out) orientation of nn.Linear weights, exactness of every head's attention against the
// plain-loop reference in tests/core/bertreference.h (mask none and causal, scaling on and off), the
// masked-token probabilities against the same reference, F16/BF16, the name variants, and one row per
// kind of bad folder.
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "bertreference.h"
#include "core/io/loaders/bertloader.h"
#include "core/io/formats/safetensors.h"
#include "core/model/forward.h"
#include "core/model/maskedlm.h"
#include "core/model/trainingmask.h"
#include "core/text/wordpiecetokenizer.h"
#include "tinybert.h"
#include "numericcheck.h"
#include "tracecompare.h"
#include "core/open/openmodel.h"
#include "fixturefiles.h"

using namespace attnscope;
namespace fs = std::filesystem;

Q_DECLARE_METATYPE(std::string)
Q_DECLARE_METATYPE(attnscope::DType)
Q_DECLARE_METATYPE(tinybert::Family)

namespace {

using namespace tinybert;

using tracecompare::worstDifference;

const char* kSentence = "The quick brown fox [MASK] over the lazy dog, un[MASK]able!";

} // namespace

class TestBertLoader : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    std::string m_bert, m_distil;

    std::string folderOf(Family f) const { return f == Family::Bert ? m_bert : m_distil; }

private slots:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        m_bert = writeFolder(m_tmp, "tiny-bert", Family::Bert);
        m_distil = writeFolder(m_tmp, "tiny-distilbert", Family::DistilBert);
    }

    void loadsConfigAndShapes_data()
    {
        QTest::addColumn<Family>("family");
        QTest::newRow("bert") << Family::Bert;
        QTest::newRow("distilbert") << Family::DistilBert;
    }
    void loadsConfigAndShapes()
    {
        QFETCH(Family, family);
        Result<ModelPtr> r = loadModel(folderOf(family));
        QVERIFY2(r, r.error().c_str());
        const Model& m = **r;
        QCOMPARE(m.config.architecture, std::string(family == Family::Bert ? "bert" : "distilbert"));
        QCOMPARE(m.config.layers, kL);
        QCOMPARE(m.config.heads, kH);
        QCOMPARE(m.config.dModel, kD);
        QCOMPARE(m.config.dFF, kF);
        QCOMPARE(m.config.contextLength, kC);
        QCOMPARE(m.config.vocabSize, int(vocabulary().size()));
        QVERIFY(!m.config.causal);
        QVERIFY(m.config.norm == NormPlacement::PostLN);
        QVERIFY(m.config.activation == Activation::GeluErf);
        QCOMPARE(m.config.layerNormEps, 1e-12f);
        QVERIFY(trainingMask(m.config) == MaskKind::None);
        QCOMPARE(m.checkShapes().error(), std::string());
        QVERIFY(m.warnings.empty());
        QCOMPARE(m.tokenizer->kind(), std::string("wordpiece"));
        QCOMPARE(m.tokenizer->maskTokenId(), 4);
        QCOMPARE(m.weights.tokenTypeEmbedding.rows(), Eigen::Index(family == Family::Bert ? kTypes : 0));
        QCOMPARE(m.weights.embLnGain.size(), Eigen::Index(kD));
        QVERIFY(m.weights.mlm.has_value());
        QCOMPARE(m.weights.mlm->decoder.size(), Eigen::Index(0));  // tied
        QCOMPARE(canPredictMasked(m).error(), std::string());
    }

    void linearWeightsAreTransposedOnLoad()
    {
        // query.weight[o][i] = 100 o + i, stored [out, in]; the model multiplies x W with W (in, out), so
        // W(i, o) must be 100 o + i. intermediate.dense is [F, D]: not square, so a missed transpose shows.
        const int V = int(vocabulary().size());
        std::vector<NamedTensor> t = tensors(Family::Bert, V, 3);
        NamedTensor& q = tensor(t, "bert.encoder.layer.1.attention.self.query.weight");
        for (int o = 0; o < kD; ++o)
            for (int i = 0; i < kD; ++i) q.values[std::size_t(o * kD + i)] = float(100 * o + i);
        NamedTensor& fc = tensor(t, "bert.encoder.layer.0.intermediate.dense.weight");
        for (int o = 0; o < kF; ++o)
            for (int i = 0; i < kD; ++i) fc.values[std::size_t(o * kD + i)] = float(100 * o + i);
        Result<ModelPtr> r = loadModel(writeFolder(m_tmp, "orientation", Family::Bert, t));
        QVERIFY2(r, r.error().c_str());
        const LayerWeights& l1 = (*r)->weights.layers[1];
        for (int i = 0; i < kD; ++i)
            for (int o = 0; o < kD; ++o) QCOMPARE(l1.wq(i, o), float(100 * o + i));
        const Matrix& w1 = (*r)->weights.layers[0].w1;
        QCOMPARE(w1.rows(), Eigen::Index(kD));
        QCOMPARE(w1.cols(), Eigen::Index(kF));
        QCOMPARE(w1(3, 17), float(1703));
    }

    void matchesReference_data()
    {
        QTest::addColumn<Family>("family");
        QTest::addColumn<bool>("causal");
        QTest::addColumn<bool>("sqrtScaling");
        QTest::addColumn<double>("temperature");
        for (Family f : {Family::Bert, Family::DistilBert})
            for (bool causal : {false, true})
                for (bool sqrtScaling : {true, false})
                    for (double temperature : {0.5, 1.0, 3.0}) {
                        const QString name = QString("%1, %2, %3, T=%4")
                                                 .arg(f == Family::Bert ? "bert" : "distilbert", causal ? "causal" : "no mask",
                                                      sqrtScaling ? "sqrt-dk" : "unscaled")
                                                 .arg(temperature);
                        QTest::newRow(qPrintable(name)) << f << causal << sqrtScaling << temperature;
                    }
    }
    void matchesReference()
    {
        QFETCH(Family, family);
        QFETCH(bool, causal);
        QFETCH(bool, sqrtScaling);
        QFETCH(double, temperature);
        Result<ModelPtr> model = loadModel(folderOf(family));
        QVERIFY2(model, model.error().c_str());
        Result<TokenizedText> text = (*model)->tokenizer->encode(kSentence);
        QVERIFY(text);
        QVERIFY(text->ids.size() > 12);
        AttentionSettings s;
        s.mask = causal ? MaskKind::Causal : MaskKind::None;
        s.scaling = sqrtScaling ? Scaling::SqrtDk : Scaling::None;
        s.temperature = temperature;
        Result<ForwardTrace> trace = forward(**model, text->ids, s);
        QVERIFY2(trace, trace.error().c_str());
        const gpt2ref::Checkpoint ck(folderOf(family) + "/model.safetensors");
        bertref::Options o;
        o.distil = family == Family::DistilBert;
        o.causal = causal;
        o.sqrtScaling = sqrtScaling;
        o.temperature = temperature;
        const numericcheck::Worst worst = worstDifference(*trace, bertref::run(ck, kL, kH, text->ids, o).attention);
        QVERIFY2(worst.within(1e-4), worst.message("attention").c_str());
        // The encoder's rows are not all alike: the test would pass on uniform weights otherwise.
        QVERIFY(trace->weights(1, 0).maxCoeff() > 2.0f / float(text->ids.size()));
    }

    void maskedTokensMatchReference_data() { loadsConfigAndShapes_data(); }
    void maskedTokensMatchReference()
    {
        QFETCH(Family, family);
        Result<ModelPtr> model = loadModel(folderOf(family));
        QVERIFY2(model, model.error().c_str());
        const Model& m = **model;
        Result<TokenizedText> text = m.tokenizer->encode(kSentence);
        QVERIFY(text);
        const std::vector<int> masks = maskPositions(m, text->ids);
        QCOMPARE(masks.size(), std::size_t(2));
        CaptureRequest capture;
        capture.finalHidden = true;
        AttentionSettings s;
        s.mask = MaskKind::None;
        Result<ForwardTrace> trace = forward(m, text->ids, s, capture);
        QVERIFY2(trace, trace.error().c_str());
        const int V = m.config.vocabSize;
        const std::vector<MaskedPrediction> predicted = predictMasked(m, *trace, text->ids, V);
        QCOMPARE(predicted.size(), masks.size());

        const gpt2ref::Checkpoint ck(folderOf(family) + "/model.safetensors");
        bertref::Options o;
        o.distil = family == Family::DistilBert;
        const bertref::Result ref = bertref::run(ck, kL, kH, text->ids, o);
        numericcheck::Worst worst;
        double sum = 0.0;
        for (std::size_t n = 0; n < masks.size(); ++n) {
            QCOMPARE(predicted[n].position, masks[n]);
            QCOMPARE(int(predicted[n].top.size()), V);
            const std::vector<double> p = bertref::maskedProbabilities(ck, ref.hidden[std::size_t(masks[n])], o);
            sum = 0.0;
            worst.label("position %d token", masks[n]);
            for (std::size_t i = 0; i < predicted[n].top.size(); ++i) {
                const NextToken& t = predicted[n].top[i];
                worst.add(t.p, p[std::size_t(t.id)], t.id);
                sum += t.p;
                if (i > 0) QVERIFY(t.p <= predicted[n].top[i - 1].p);
                QCOMPARE(t.token, m.tokenizer->displayToken(t.id));
            }
            QVERIFY2(std::abs(sum - 1.0) < 1e-4, qPrintable(QString("probabilities sum to %1").arg(sum)));
        }
        QVERIFY2(worst.within(1e-4), worst.message("masked-token probabilities").c_str());
        // Different positions get different predictions (the head reads each position's own row).
        QVERIFY(predicted[0].top[0].p != predicted[1].top[0].p);
    }

    void storedDecoderIsUsedWhenUntied()
    {
        const int V = int(vocabulary().size());
        std::vector<NamedTensor> t = tensors(Family::Bert, V, 11);
        std::uint64_t s = 99;
        t.push_back({"cls.predictions.decoder.weight", {V, kD}, filled(std::size_t(V) * kD, s, 1.0f)});
        const std::string folder = writeFolder(m_tmp, "untied", Family::Bert, t);
        Result<ModelPtr> model = loadModel(folder);
        QVERIFY2(model, model.error().c_str());
        QCOMPARE((*model)->weights.mlm->decoder.rows(), Eigen::Index(V));
        const std::vector<int> ids = (*model)->tokenizer->encode("the [MASK] sat")->ids;
        CaptureRequest capture;
        capture.finalHidden = true;
        AttentionSettings settings;
        settings.mask = MaskKind::None;
        Result<ForwardTrace> trace = forward(**model, ids, settings, capture);
        QVERIFY(trace);
        const std::vector<MaskedPrediction> p = predictMasked(**model, *trace, ids, V);
        QCOMPARE(p.size(), std::size_t(1));
        const gpt2ref::Checkpoint ck(folder + "/model.safetensors");
        bertref::Options o;
        o.decoder = "cls.predictions.decoder.weight";
        const std::vector<double> ref = bertref::maskedProbabilities(ck, bertref::run(ck, kL, kH, ids, o).hidden[2], o);
        numericcheck::Worst worst;
        worst.label("token");
        for (const NextToken& n : p[0].top) worst.add(n.p, ref[std::size_t(n.id)], n.id);
        QVERIFY2(worst.within(1e-4), worst.message("masked-token probabilities").c_str());
    }

    void halfPrecisionCheckpointsAgree_data()
    {
        QTest::addColumn<DType>("dtype");
        QTest::newRow("F16") << DType::F16;
        QTest::newRow("BF16") << DType::BF16;
    }
    void halfPrecisionCheckpointsAgree()
    {
        QFETCH(DType, dtype);
        const std::string folder = writeFolder(m_tmp, dtype == DType::F16 ? "f16" : "bf16", Family::Bert,
                                               tensors(Family::Bert, int(vocabulary().size()), 7), dtype);
        Result<ModelPtr> model = loadModel(folder);
        QVERIFY2(model, model.error().c_str());
        const std::vector<int> ids = (*model)->tokenizer->encode(kSentence)->ids;
        AttentionSettings s;
        s.mask = MaskKind::None;
        Result<ForwardTrace> trace = forward(**model, ids, s);
        QVERIFY(trace);
        const gpt2ref::Checkpoint ck(folder + "/model.safetensors");
        const numericcheck::Worst worst = worstDifference(*trace, bertref::run(ck, kL, kH, ids, {}).attention);
        QVERIFY2(worst.within(1e-3), worst.message("attention").c_str());
    }

    void acceptsBareNamesGammaBetaAndTokenizerJson()
    {
        // A base-model checkpoint (no "bert." prefix), layer norms named gamma/beta as in TensorFlow
        // conversions, and the vocabulary as tokenizer.json only: the same weights as the prefixed folder.
        std::vector<NamedTensor> t = tensors(Family::Bert, int(vocabulary().size()), 7);
        for (NamedTensor& x : t) {
            if (x.name.starts_with("bert.")) x.name = x.name.substr(5);
            if (x.name.ends_with("LayerNorm.weight")) x.name.replace(x.name.size() - 6, 6, "gamma");
            else if (x.name.ends_with("LayerNorm.bias")) x.name.replace(x.name.size() - 4, 4, "beta");
        }
        const fs::path dir = writeFolder(m_tmp, "bare", Family::Bert, t);
        fs::remove(dir / "vocab.txt");
        writeText(dir / "tokenizer.json", tokenizerJson(vocabulary(), true).dump());
        Result<ModelPtr> bare = loadModel(dir.string());
        QVERIFY2(bare, bare.error().c_str());
        Result<ModelPtr> prefixed = loadModel(m_bert);
        QVERIFY(prefixed);
        QVERIFY((*bare)->weights.layers[1].wv == (*prefixed)->weights.layers[1].wv);
        QVERIFY((*bare)->weights.layers[0].ln2Gain == (*prefixed)->weights.layers[0].ln2Gain);
        QVERIFY((*bare)->weights.embLnBias == (*prefixed)->weights.embLnBias);
        QVERIFY((*bare)->weights.mlm->lnGain == (*prefixed)->weights.mlm->lnGain);
        QCOMPARE((*bare)->tokenizer->encode(kSentence)->ids, (*prefixed)->tokenizer->encode(kSentence)->ids);
    }

    void withoutTheHeadThereIsNoMaskedPrediction()
    {
        const std::string folder = writeFolder(m_tmp, "headless", Family::DistilBert,
                                               tensors(Family::DistilBert, int(vocabulary().size()), 5, false));
        Result<ModelPtr> model = loadModel(folder);
        QVERIFY2(model, model.error().c_str());
        QVERIFY(!(*model)->weights.mlm);
        const std::string why = canPredictMasked(**model).error();
        QVERIFY2(why.find("no masked-language-model head") != std::string::npos, why.c_str());
        const std::vector<int> ids = (*model)->tokenizer->encode("the [MASK]")->ids;
        CaptureRequest capture;
        capture.finalHidden = true;
        Result<ForwardTrace> trace = forward(**model, ids, AttentionSettings{}, capture);
        QVERIFY(trace);
        QVERIFY(predictMasked(**model, *trace, ids, 5).empty());
    }

    void trainingMaskAndCounterfactualLabels()
    {
        Result<ModelPtr> bert = loadModel(m_bert);
        QVERIFY(bert);
        const ModelConfig& c = (*bert)->config;
        QCOMPARE(counterfactualNote(c, MaskKind::None), std::string());
        QVERIFY(counterfactualNote(c, MaskKind::Causal).find("without a mask") != std::string::npos);
        ModelConfig gpt2 = c;
        gpt2.causal = true;
        QCOMPARE(counterfactualNote(gpt2, MaskKind::Causal), std::string());
        QVERIFY(counterfactualNote(gpt2, MaskKind::None).find("causal mask") != std::string::npos);
        QVERIFY(trainingDescription(c).find("encoder") != std::string::npos);
    }

    void nonFiniteWeightsLoadWithAWarning()
    {
        std::vector<NamedTensor> t = tensors(Family::Bert, int(vocabulary().size()), 9);
        tensor(t, "bert.encoder.layer.1.intermediate.dense.bias").values[5] = std::nanf("");
        Result<ModelPtr> r = loadModel(writeFolder(m_tmp, "nan", Family::Bert, t));
        QVERIFY2(r, r.error().c_str());
        QCOMPARE((*r)->warnings.size(), std::size_t(1));
        QVERIFY2((*r)->warnings[0].find("intermediate.dense.bias") != std::string::npos &&
                     (*r)->warnings[0].find("index 5") != std::string::npos, (*r)->warnings[0].c_str());
    }

    // One row per kind of bad folder: the sentence names the file or tensor and the problem.
    void badFolders_data()
    {
        QTest::addColumn<QString>("change");
        QTest::addColumn<std::string>("expected1");
        QTest::addColumn<std::string>("expected2");
        auto row = [](const char* name, const char* change, const char* e1, const char* e2) {
            QTest::newRow(name) << QString(change) << std::string(e1) << std::string(e2);
        };
        row("unknown model_type", "config:model_type=\"roberta\"", "roberta", "BERT-family");
        row("hidden_size missing", "config:hidden_size=-", "config.json", "no \"hidden_size\"");
        row("layers absurd", "config:num_hidden_layers=1000000", "config.json", "number of layers is 1000000");
        row("heads not dividing d_model", "config:num_attention_heads=3", "config.json", "not divisible");
        row("vocab_size past 2^31", "config:vocab_size=99999999999", "config.json", "absurd");
        row("type_vocab_size zero", "config:type_vocab_size=0", "type_vocab_size is 0", "config.json");
        row("relative positions", "config:position_embedding_type=\"relative_key\"", "relative_key", "absolute");
        row("unknown activation", "config:hidden_act=\"mish\"", "mish", "config.json");
        row("eps a string", "config:layer_norm_eps=\"tiny\"", "layer_norm_eps", "not a number");
        row("tensor missing", "drop bert.encoder.layer.1.output.dense.bias", "'encoder.layer.1.output.dense.bias' is missing", "model.safetensors");
        row("segment table missing", "drop bert.embeddings.token_type_embeddings.weight", "token_type_embeddings", "missing");
        row("linear stored the wrong way round", "transpose bert.encoder.layer.0.intermediate.dense.weight",
            "intermediate.dense.weight", "has shape [8, 32] but config.json implies [32, 8]");
        row("context longer than the position table", "config:max_position_embeddings=64", "position_embeddings",
            "implies [64, 8]");
        row("head only in part", "drop cls.predictions.transform.LayerNorm.bias", "cls.predictions.transform.LayerNorm.bias", "missing");
        row("tokenizer missing", "rm vocab.txt", "no tokenizer", "vocab.txt or tokenizer.json");
        row("vocab.txt empty", "vocab:", "vocab.txt", "empty");
        row("vocab.txt not UTF-8", "vocab:bad-utf8", "line 3", "not valid UTF-8");
        row("vocab.txt without [CLS]", "vocab:[PAD]\n[UNK]\n[SEP]\nthe\n", "no [CLS] token", "vocab.txt");
        row("vocab larger than vocab_size", "config:vocab_size=100", "has " , "vocab_size is 100");
        row("tokenizer.json not JSON", "tokenizer.json:{", "tokenizer.json", "not valid JSON");
        row("tokenizer.json is BPE", "tokenizer.json:{\"model\":{\"type\":\"BPE\",\"vocab\":{},\"merges\":[]}}", "\"BPE\"", "WordPiece");
        row("tokenizer.json duplicate ids", "tokenizer.json:{\"model\":{\"type\":\"WordPiece\",\"vocab\":{\"[UNK]\":0,\"[CLS]\":1,\"[SEP]\":1}}}",
            "id 1", "more than one token");
        row("tokenizer.json negative id", "tokenizer.json:{\"model\":{\"vocab\":{\"[UNK]\":-3}}}", "id -3", "outside");
        row("tokenizer.json huge id", "tokenizer.json:{\"model\":{\"vocab\":{\"[UNK]\":99999999999}}}", "99999999999", "outside");
        row("tokenizer.json other normalizer", "tokenizer.json:{\"normalizer\":{\"type\":\"NFKC\"},\"model\":{\"vocab\":{\"[UNK]\":0}}}",
            "\"NFKC\"", "BertNormalizer");
        row("tokenizer.json lowercase not a flag", "tokenizer.json:{\"normalizer\":{\"type\":\"BertNormalizer\",\"lowercase\":\"yes\"},\"model\":{\"vocab\":{\"[UNK]\":0}}}",
            "lowercase", "not true or false");
        row("tokenizer.json absurd word length", "tokenizer.json:{\"model\":{\"max_input_chars_per_word\":-1,\"vocab\":{\"[UNK]\":0}}}",
            "max_input_chars_per_word", "1 to");
        row("tokenizer.json deeply nested", "tokenizer.json:deep", "tokenizer.json", "deeper than");
        row("tokenizer_config.json flag not boolean", "tokenizer_config.json:{\"do_lower_case\":\"yes\"}", "do_lower_case", "not true or false");
        row("tokenizer_config.json not JSON", "tokenizer_config.json:{", "tokenizer_config.json", "not valid JSON");
        row("tokenizer_config.json a list", "tokenizer_config.json:[", "tokenizer_config.json", "not a JSON object");
        row("truncated safetensors", "truncate", "model.safetensors", "outside");
        row("pytorch pickle only", "pickle", "pytorch_model.bin", "safe_serialization=True");
    }
    void badFolders()
    {
        QFETCH(QString, change);
        QFETCH(std::string, expected1);
        QFETCH(std::string, expected2);
        const int V = int(vocabulary().size());
        std::vector<NamedTensor> t = tensors(Family::Bert, V, 1);
        const std::string c = change.toStdString();
        if (c.starts_with("drop ")) std::erase_if(t, [&](const NamedTensor& x) { return x.name == c.substr(5); });
        if (c.starts_with("transpose ")) tensor(t, c.substr(10)).shape = {kD, kF};
        const fs::path dir = writeFolder(m_tmp, "bad", Family::Bert, t);
        if (!fixture::applyFolderChange(dir, c, config(Family::Bert, V))) {
            if (c == "vocab:bad-utf8") {
                writeText(dir / "vocab.txt", "[PAD]\n[UNK]\n\xff\xfe\n[CLS]\n[SEP]\n");  // raw bytes: a QString would repair them
            } else if (c.starts_with("vocab:")) {
                writeText(dir / "vocab.txt", c.substr(6));
            } else if (c.starts_with("tokenizer.json:")) {
                fs::remove(dir / "vocab.txt");
                const std::string body = c.substr(15);
                writeText(dir / "tokenizer.json",
                          body == "deep" ? "{\"model\": " + std::string(100000, '[') + std::string(100000, ']') + "}" : body);
            } else if (c.starts_with("tokenizer_config.json:")) {
                writeText(dir / "tokenizer_config.json", c.substr(22));
            }
        }
        Result<ModelPtr> r = loadModel(dir.string());
        fs::remove_all(dir);
        QVERIFY(!r);
        QVERIFY2(r.error().find(expected1) != std::string::npos, r.error().c_str());
        QVERIFY2(r.error().find(expected2) != std::string::npos, r.error().c_str());
    }

    // The same tensors as three shards with model.safetensors.index.json (as large checkpoints and
    // `download` come): the same numbers as from one file.
    void shardsGiveTheSameNumbersAsOneFile()
    {
        std::vector<NamedTensor> t = tinybert::tensors(tinybert::Family::Bert, int(tinybert::vocabulary().size()), 21);
        const std::string folder = tinybert::writeFolder(m_tmp, "one-file", tinybert::Family::Bert, t);
        const std::string problem = tracecompare::shardsAgainstOneFile(folder, t);
        QVERIFY2(problem.empty(), problem.c_str());
    }
};

QTEST_APPLESS_MAIN(TestBertLoader)
#include "tst_bertloader.moc"
