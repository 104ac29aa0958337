// BART encoder–decoder folders: tiny checkpoints written here (tests/core/tinybart.h), loaded by the core
// and checked against the plain-loop reference of tests/core/bartreference.h, which parses the file itself
// and shares no code with the core: the encoder's self-attention, the decoder's masked self-attention, the
// cross-attention and the next-token probabilities, within 1e-4, for tied and separate heads, scaled
// embeddings, bare and wrapped tensor names, and under every setting that changes them (mask, √dₖ,
// temperature, blocked source keys). Then the special tokens and one row per kind of bad folder. Marian
// (tests/core/tinymarian.h, with SentencePiece models trained by the test) against the same reference in its
// Marian mode: sinusoidal positions, no embedding norm, swish, SentencePiece ids through vocab.json.
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "core/analysis/crossattention.h"
#include "encdeccompare.h"
#include "numericcheck.h"
#include "fuzzing.h"
#include "bartreference.h"
#include "core/io/formats/safetensors.h"
#include "core/model/encoderdecoder.h"
#include "core/model/forward.h"
#include "core/io/loaders/encoderdecoderloader.h"
#include "tinybart.h"
#include "tinymarian.h"
#include "core/open/openmodel.h"
#include "fixturefiles.h"
#include "tracecompare.h"

using namespace attnscope;
namespace fs = std::filesystem;

Q_DECLARE_METATYPE(std::string)
Q_DECLARE_METATYPE(tinybart::Options)
Q_DECLARE_METATYPE(tinymarian::Options)
Q_DECLARE_METATYPE(attnscope::AblationMode)

namespace {

using Rows = std::vector<std::vector<double>>;
using encdec::softmax;
using encdec::worst;

const char* kSource = "the cat sat on the mat";
const char* kTarget = "the cat sat";

} // namespace

class TestBartLoader : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;

private slots:
    void initTestCase() { QVERIFY(m_tmp.isValid()); }

    void loadsBothStacks()
    {
        Result<ModelPtr> r = loadModel(tinybart::writeFolder(m_tmp, "shape"));
        QVERIFY2(r, r ? "" : r.error().c_str());
        const Model& m = **r;
        QVERIFY(m.isEncoderDecoder());
        QCOMPARE(m.config.architecture, std::string("bart"));
        QCOMPARE(m.config.layers, tinybart::kEncL);
        QCOMPARE(m.decoder->layers, tinybart::kDecL);
        QCOMPARE(m.config.heads, tinybart::kH);
        QCOMPARE(m.config.dModel, tinybart::kD);
        QCOMPARE(m.config.contextLength, tinybart::kC);  // the two offset rows are not positions
        QCOMPARE(m.weights.positionEmbedding.rows(), Eigen::Index(tinybart::kC));
        QVERIFY(!m.config.causal);
    }

    // BART's tokenizer adds <s> … </s> around the source; the decoder input is the start token (</s>) and
    // the target without specials.
    void specialTokens()
    {
        Result<ModelPtr> r = loadModel(tinybart::writeFolder(m_tmp, "specials"));
        QVERIFY(r);
        const std::vector<std::string> vocab = tinybart::vocabulary();
        Result<TokenizedText> plain = (*r)->decoder->targetTokenizer->encode(kSource), source = encodeSource(**r, kSource),
                              target = encodeTarget(**r, kTarget);
        QVERIFY(plain && source && target);
        QCOMPARE(source->ids.size(), plain->ids.size() + 2);
        QCOMPARE(source->ids.front(), tinybart::idOf(vocab, "<s>"));
        QCOMPARE(source->ids.back(), tinybart::idOf(vocab, "</s>"));
        QCOMPARE(source->tokens.front(), std::string("<s>"));
        QCOMPARE(target->ids.front(), tinybart::idOf(vocab, "</s>"));
        QCOMPARE(std::vector<int>(source->ids.begin() + 1, source->ids.end() - 1), plain->ids);
        // The model's own tokenizer is the encoder's, so every view shows <s> … </s> as BERT's show [CLS] … [SEP].
        QCOMPARE((*r)->tokenizer->encode(kSource)->ids, source->ids);
        QCOMPARE(std::vector<int>(target->ids.begin() + 1, target->ids.end()), (*r)->decoder->targetTokenizer->encode(kTarget)->ids);
        // The tokenizer is the byte-level BPE: " cat" is one token of the fixture's vocabulary.
        QVERIFY(std::find(plain->ids.begin(), plain->ids.end(), tinybart::idOf(vocab, "Ġcat")) != plain->ids.end());
    }

    void matchesReference_data()
    {
        QTest::addColumn<tinybart::Options>("options");
        QTest::addColumn<bool>("causal");
        QTest::addColumn<bool>("sqrtScaling");
        QTest::addColumn<double>("temperature");
        QTest::addColumn<std::vector<int>>("blocked");
        tinybart::Options tied, scaled, separate, bare, moreDecoderHeads, fewerDecoderHeads;
        scaled.scaleEmbedding = true;
        // decoder_attention_heads apart from the encoder's 2: the decoder's 4 heads of 2, or 1 head of 8.
        moreDecoderHeads.decoderHeads = 4;
        fewerDecoderHeads.decoderHeads = 1;
        fewerDecoderHeads.seed = 41;
        separate.separateHead = true;
        separate.seed = 23;
        bare.wrapped = false;
        QTest::newRow("tied") << tied << true << true << 1.0 << std::vector<int>{};
        QTest::newRow("scaled embeddings") << scaled << true << true << 1.0 << std::vector<int>{};
        QTest::newRow("separate head") << separate << true << true << 1.0 << std::vector<int>{};
        QTest::newRow("bare names") << bare << true << true << 1.0 << std::vector<int>{};
        QTest::newRow("no causal mask") << tied << false << true << 1.0 << std::vector<int>{};
        QTest::newRow("no sqrt scaling") << tied << true << false << 1.0 << std::vector<int>{};
        QTest::newRow("temperature 3") << separate << true << true << 3.0 << std::vector<int>{};
        QTest::newRow("blocked source keys") << tied << true << true << 1.0 << std::vector<int>{1, 3};
        QTest::newRow("decoder with 4 heads") << moreDecoderHeads << true << true << 1.0 << std::vector<int>{};
        QTest::newRow("decoder with 1 head, no sqrt scaling") << fewerDecoderHeads << true << false << 1.0 << std::vector<int>{0};
        QTest::newRow("decoder with 1 head") << fewerDecoderHeads << true << true << 1.0 << std::vector<int>{};
    }
    void matchesReference()
    {
        QFETCH(tinybart::Options, options);
        QFETCH(bool, causal);
        QFETCH(bool, sqrtScaling);
        QFETCH(double, temperature);
        QFETCH(std::vector<int>, blocked);
        const std::string dir = tinybart::writeFolder(m_tmp, QTest::currentDataTag(), options);
        Result<ModelPtr> model = loadModel(dir);
        QVERIFY2(model, model ? "" : model.error().c_str());
        Result<TokenizedText> source = encodeSource(**model, kSource), target = encodeTarget(**model, kTarget);
        QVERIFY(source && target);

        AttentionSettings s;
        s.mask = causal ? MaskKind::Causal : MaskKind::None;
        s.scaling = sqrtScaling ? Scaling::SqrtDk : Scaling::None;
        s.temperature = temperature;
        s.blockedKeys = blocked;
        EncoderDecoderTrace trace;
        const Status st = forwardEncoderDecoder(**model, source->ids, target->ids, s, true, trace);
        QVERIFY2(st.ok(), st.error().c_str());

        const gpt2ref::Checkpoint ck((fs::path(dir) / "model.safetensors").string());
        bartref::Options ro;
        ro.causal = causal;
        ro.sqrtScaling = sqrtScaling;
        ro.temperature = temperature;
        ro.blockedSource = blocked;
        ro.prefix = options.wrapped ? "model." : "";
        ro.scaleEmbedding = options.scaleEmbedding;
        ro.separateHead = options.separateHead;
        ro.decoderHeads = options.decoderHeads;
        const bartref::Result ref =
            bartref::run(ck, tinybart::kEncL, tinybart::kDecL, tinybart::kH, source->ids, target->ids, ro);

        const int H = tinybart::kH;
        QCOMPARE(trace.encoder.layers, tinybart::kEncL);
        QCOMPARE(trace.encoder.heads, H);
        QCOMPARE(trace.heads, options.decoderHeads);
        QCOMPARE(int(trace.crossAttention.size()), tinybart::kDecL * options.decoderHeads);
        const encdec::AttentionDifference d = encdec::attentionDifference(trace, ref, H, options.decoderHeads);
        QVERIFY2(d.failure(1e-4).empty(), d.failure(1e-4).c_str());
        qInfo("worst differences from the reference: encoder %.2g, decoder self %.2g, cross %.2g", d.encoder.value(), d.self.value(),
              d.cross.value());
        QVERIFY(trace.hasLogits);
        const std::vector<double> p = softmax(trace.nextLogits);
        QCOMPARE(p.size(), ref.nextProbabilities.size());
        const numericcheck::Worst worstP = numericcheck::difference(p, ref.nextProbabilities);
        QVERIFY2(worstP.within(1e-4), worstP.message("next-token probabilities").c_str());
        qInfo("next-token probabilities: worst difference %.2g", worstP.value());

        // The attention is not trivially uniform (a test that cannot fail would pass on uniform rows too).
        double spread = 0.0;
        for (const Matrix& m : trace.crossAttention) spread = std::max(spread, double(m.maxCoeff() - m.minCoeff()));
        QVERIFY(spread > 0.05);
        numericcheck::Worst onBlocked;
        for (int key : blocked)
            for (std::size_t i = 0; i < trace.crossAttention.size(); ++i) {
                onBlocked.label("cross-attention matrix %zu key %d", i, key);
                onBlocked.add(trace.crossAttention[i].col(key), 0.0);
            }
        QVERIFY2(blocked.empty() || onBlocked.atMost(1e-5f), onBlocked.message("weight on a blocked key").c_str());  // qFuzzyIsNull's zero
        if (causal) QCOMPARE(trace.self(0, 0)(0, 1), 0.0f);
        // Generation's one-token steps use the decoder's own heads too: equal to whole passes.
        if (causal && options.decoderHeads != tinybart::kH) {
            const encdec::StepDifference steps = encdec::stepsAgainstWholePasses(**model, source->ids, target->ids, s);
            QVERIFY2(steps.weights.within(1e-5), steps.weights.message("steps' weights").c_str());
            QVERIFY2(steps.logits.within(1e-5), steps.logits.message("steps' logits").c_str());
        }
    }

    // Ablated heads are the encoder's: its output before out_proj replaced (zeros, or its mean over the
    // source), which reaches the decoder through the memory. Checked against the reference run the same way,
    // and against the unablated pass (the change must show, or the test could not fail).
    void encoderAblationMatchesReference_data()
    {
        QTest::addColumn<AblationMode>("mode");
        QTest::newRow("zero") << AblationMode::Zero;
        QTest::newRow("mean") << AblationMode::Mean;
    }
    void encoderAblationMatchesReference()
    {
        QFETCH(AblationMode, mode);
        const std::string dir = tinybart::writeFolder(m_tmp, std::string("ablation-") + QTest::currentDataTag());
        Result<ModelPtr> model = loadModel(dir);
        QVERIFY2(model, model ? "" : model.error().c_str());
        Result<TokenizedText> source = encodeSource(**model, kSource), target = encodeTarget(**model, kTarget);
        QVERIFY(source && target);

        AttentionSettings s;
        s.ablated = {{0, 1}, {tinybart::kEncL - 1, 0}};
        s.ablationMode = mode;
        EncoderDecoderTrace trace, whole;
        Status st = forwardEncoderDecoder(**model, source->ids, target->ids, s, true, trace);
        QVERIFY2(st.ok(), st.error().c_str());
        st = forwardEncoderDecoder(**model, source->ids, target->ids, AttentionSettings{}, true, whole);
        QVERIFY2(st.ok(), st.error().c_str());

        const gpt2ref::Checkpoint ck((fs::path(dir) / "model.safetensors").string());
        bartref::Options ro;
        ro.ablatedEncoderHeads = {{0, 1}, {tinybart::kEncL - 1, 0}};
        ro.ablateByMean = mode == AblationMode::Mean;
        const bartref::Result ref = bartref::run(ck, tinybart::kEncL, tinybart::kDecL, tinybart::kH, source->ids, target->ids, ro);
        const int H = tinybart::kH;
        const numericcheck::Worst enc = worst(trace.encoder.attention, ref.encoder, H), cross = worst(trace.crossAttention, ref.cross, H);
        QVERIFY2(enc.within(1e-4), enc.message("encoder self-attention").c_str());
        QVERIFY2(cross.within(1e-4), cross.message("cross-attention").c_str());
        const std::vector<double> p = softmax(trace.nextLogits);
        QCOMPARE(p.size(), ref.nextProbabilities.size());
        const numericcheck::Worst worstP = numericcheck::difference(p, ref.nextProbabilities);
        QVERIFY2(worstP.within(1e-4), worstP.message("next-token probabilities").c_str());
        const numericcheck::Worst moved = worst(trace.crossAttention, bartref::run(ck, tinybart::kEncL, tinybart::kDecL, tinybart::kH,
                                                                                   source->ids, target->ids, bartref::Options{}).cross, H);
        QVERIFY2(moved.exceeds(1e-3), moved.message("the ablation moved cross-attention by too little").c_str());
        QVERIFY(numericcheck::difference(trace.nextLogits, whole.nextLogits).exceeds(1e-3f));

        // A head the encoder does not have is refused with a sentence naming it.
        s.ablated = {{tinybart::kEncL, 0}};
        st = forwardEncoderDecoder(**model, source->ids, target->ids, s, true, trace);
        QVERIFY(!st.ok());
        QVERIFY2(st.error().find("no head " + std::to_string(tinybart::kEncL) + ".0") != std::string::npos, st.error().c_str());
    }

    // The Cross-attention view's pipeline for one head is the decoder's own, step by step.
    void crossAttentionPipelineIsTheDecoders()
    {
        Result<ModelPtr> model = loadModel(tinybart::writeFolder(m_tmp, "pipeline"));
        QVERIFY(model);
        Result<TokenizedText> source = encodeSource(**model, kSource), target = encodeTarget(**model, kTarget);
        QVERIFY(source && target);
        AttentionSettings s;
        EncoderDecoderTrace trace;
        QVERIFY(forwardEncoderDecoder(**model, source->ids, target->ids, s, false, trace).ok());
        Result<CrossAttentionResult> r = crossAttention(**model, target->ids, source->ids, s, {2, 1});
        QVERIFY2(r, r ? "" : r.error().c_str());
        QVERIFY(r->real);
        QCOMPARE(r->weights.rows(), Eigen::Index(target->ids.size()));
        QCOMPARE(r->weights.cols(), Eigen::Index(source->ids.size()));
        const numericcheck::Worst weights = numericcheck::difference(r->weights, trace.cross(2, 1));
        QVERIFY2(weights.within(1e-6f), weights.message("weights").c_str());
        // Its steps agree with each other: scaled = m·scores, weights = softmax(scaled), output = weights V.
        const numericcheck::Worst scaled = numericcheck::difference(r->scaled, float(r->multiplier) * r->scores);
        QVERIFY2(scaled.within(1e-5f), scaled.message("scaled scores").c_str());
        const numericcheck::Worst output = numericcheck::difference(r->output, r->weights * r->v);
        QVERIFY2(output.within(1e-5f), output.message("output").c_str());
        QCOMPARE(r->k.rows(), Eigen::Index(source->ids.size()));
        // Every decoder head of both kinds comes with it, the same pass's (the views' grids of all heads).
        QCOMPARE(r->decoderLayers, trace.decoderLayers);
        QCOMPARE(r->heads, trace.heads);
        QCOMPARE(r->allCross.size(), trace.crossAttention.size());
        QCOMPARE(r->allSelf.size(), trace.selfAttention.size());
        numericcheck::Worst all;
        for (std::size_t i = 0; i < trace.crossAttention.size(); ++i) {
            all.label("cross-attention matrix %zu", i);
            all.add(r->allCross[i], trace.crossAttention[i]);
            all.label("self-attention matrix %zu", i);
            all.add(r->allSelf[i], trace.selfAttention[i]);
        }
        QVERIFY2(all.within(1e-6f), all.message().c_str());
        QVERIFY(!crossAttention(**model, target->ids, source->ids, s, {tinybart::kDecL, 0}));
    }

    // Recent Hugging Face versions save a tied table once, as shared.weight, without each stack's copy.
    void loadsWithoutTheStacksCopies()
    {
        const int V = int(tinybart::vocabulary().size());
        std::vector<NamedTensor> t = tinybart::tensors(V, {});
        std::erase_if(t, [](const NamedTensor& x) { return x.name.ends_with("embed_tokens.weight"); });
        Result<ModelPtr> shared = loadModel(tinybart::writeFolder(m_tmp, "shared-only", t));
        Result<ModelPtr> full = loadModel(tinybart::writeFolder(m_tmp, "with-copies"));
        QVERIFY2(shared, shared ? "" : shared.error().c_str());
        QVERIFY(full);
        Result<TokenizedText> source = encodeSource(**full, kSource), target = encodeTarget(**full, kTarget);
        EncoderDecoderTrace a, b;
        QVERIFY(forwardEncoderDecoder(**shared, source->ids, target->ids, {}, true, a).ok());
        QVERIFY(forwardEncoderDecoder(**full, source->ids, target->ids, {}, true, b).ok());
        QCOMPARE(a.nextLogits, b.nextLogits);
        QCOMPARE(a.cross(1, 1), b.cross(1, 1));
    }

    void badInput()
    {
        Result<ModelPtr> model = loadModel(tinybart::writeFolder(m_tmp, "input"));
        QVERIFY(model);
        EncoderDecoderTrace trace;
        AttentionSettings s;
        const Status empty = forwardEncoderDecoder(**model, {}, {2}, s, false, trace);
        QVERIFY(!empty.ok());
        QVERIFY2(empty.error().find("source is empty") != std::string::npos, empty.error().c_str());
        const Status outside = forwardEncoderDecoder(**model, {0, 5, 2}, {2, 99999}, s, false, trace);
        QVERIFY2(outside.error().find("99999") != std::string::npos, outside.error().c_str());
        const Status tooLong = forwardEncoderDecoder(**model, {0, 2}, std::vector<int>(tinybart::kC + 1, 5), s, false, trace);
        QVERIFY2(tooLong.error().find("context") != std::string::npos, tooLong.error().c_str());
        s.blockedKeys = {3};
        const Status blocked = forwardEncoderDecoder(**model, {0, 5, 2}, {2}, s, false, trace);
        QVERIFY2(blocked.error().find("blocked key 3") != std::string::npos, blocked.error().c_str());
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
        row("d_model missing", "config:d_model=-", "config.json", "no \"d_model\"");
        row("decoder_layers missing", "config:decoder_layers=-", "config.json", "decoder_layers");
        row("decoder layers absurd", "config:decoder_layers=1000000", "config.json", "decoder_layers 1000000");
        row("decoder heads not dividing d_model", "config:decoder_attention_heads=3", "the decoder's heads", "not divisible");
        row("heads not dividing d_model", "config:encoder_attention_heads=3", "config.json", "not divisible");
        row("mBART's pre-LN", "config:normalize_before=true", "pre-LN", "config.json");
        row("start token outside", "config:decoder_start_token_id=100000", "decoder_start_token_id is 100000", "outside");
        row("unknown activation", "config:activation_function=\"mish\"", "mish", "config.json");
        row("scale_embedding a string", "config:scale_embedding=\"yes\"", "scale_embedding", "config.json");
        row("cross-attention tensor missing", "drop model.decoder.layers.1.encoder_attn.k_proj.bias",
            "decoder.layers.1.encoder_attn.k_proj.bias", "missing");
        row("positions without the offset rows", "positions model.encoder.embed_positions.weight", "embed_positions",
            "implies [34, 8]");
        row("untied head missing", "config:tie_word_embeddings=false", "lm_head.weight", "missing");
        row("tokenizer missing", "rm vocab.json", "no tokenizer", "vocab.json and merges.txt");
        row("vocab larger than vocab_size", "config:vocab_size=100", "has ", "vocab_size is 100");
        row("truncated safetensors", "truncate", "model.safetensors", "outside");
        row("pytorch pickle only", "pickle", "pytorch_model.bin", "safe_serialization=True");
    }
    void badFolders()
    {
        QFETCH(QString, change);
        QFETCH(std::string, expected1);
        QFETCH(std::string, expected2);
        const int V = int(tinybart::vocabulary().size());
        std::vector<NamedTensor> t = tinybart::tensors(V, {});
        const std::string c = change.toStdString();
        if (c.starts_with("drop ")) std::erase_if(t, [&](const NamedTensor& x) { return x.name == c.substr(5); });
        if (c.starts_with("positions ")) {
            for (NamedTensor& x : t)
                if (x.name == c.substr(10)) {
                    x.shape = {tinybart::kC, tinybart::kD};
                    x.values.resize(std::size_t(tinybart::kC * tinybart::kD));
                }
        }
        const fs::path dir = tinybart::writeFolder(m_tmp, "bad", t);
        fixture::applyFolderChange(dir, c, tinybart::config(V, {}));
        Result<ModelPtr> r = loadModel(dir.string());
        fs::remove_all(dir);
        QVERIFY(!r);
        QVERIFY2(r.error().find(expected1) != std::string::npos, r.error().c_str());
        QVERIFY2(r.error().find(expected2) != std::string::npos, r.error().c_str());
    }

    void marianMatchesReference_data()
    {
        QTest::addColumn<tinymarian::Options>("options");
        QTest::addColumn<bool>("causal");
        QTest::addColumn<std::vector<int>>("blocked");
        tinymarian::Options wrapped, bare;
        bare.wrapped = false;
        bare.seed = 29;
        QTest::newRow("wrapped") << wrapped << true << std::vector<int>{};
        QTest::newRow("bare names") << bare << true << std::vector<int>{};
        QTest::newRow("no causal mask, blocked source keys") << wrapped << false << std::vector<int>{0, 2};
    }
    void marianMatchesReference()
    {
        QFETCH(tinymarian::Options, options);
        QFETCH(bool, causal);
        QFETCH(std::vector<int>, blocked);
        const std::string dir = tinymarian::writeFolder(m_tmp, std::string("marian ") + QTest::currentDataTag(), options);
        Result<ModelPtr> model = loadModel(dir);
        QVERIFY2(model, model ? "" : model.error().c_str());
        QCOMPARE((*model)->config.architecture, std::string("marian"));
        QVERIFY((*model)->config.activation == Activation::Silu);
        // SentencePiece's pieces through vocab.json, </s> after the source; the decoder starts from <pad>.
        Result<TokenizedText> source = encodeSource(**model, kSource), target = encodeTarget(**model, "lo mi ta");
        QVERIFY(source && target);
        std::vector<int> expectedSource = tinymarian::encode(kSource);
        expectedSource.push_back(tinymarian::eosId());
        QCOMPARE(source->ids, expectedSource);
        std::vector<int> expectedTarget = {tinymarian::padId()};
        for (int id : tinymarian::encode("lo mi ta", tinymarian::Side::Target)) expectedTarget.push_back(id);
        QCOMPARE(target->ids, expectedTarget);
        QCOMPARE(source->tokens.front(), tinymarian::split(kSource).front());

        AttentionSettings s;
        s.mask = causal ? MaskKind::Causal : MaskKind::None;
        s.blockedKeys = blocked;
        EncoderDecoderTrace trace;
        QVERIFY(forwardEncoderDecoder(**model, source->ids, target->ids, s, true, trace).ok());
        const gpt2ref::Checkpoint ck((fs::path(dir) / "model.safetensors").string());
        bartref::Options ro;
        ro.marian = true;
        ro.causal = causal;
        ro.blockedSource = blocked;
        ro.prefix = options.wrapped ? "model." : "";
        const bartref::Result ref = bartref::run(ck, tinymarian::kEncL, tinymarian::kDecL, tinymarian::kH, source->ids, target->ids, ro);
        const int H = tinymarian::kH;
        const encdec::AttentionDifference d = encdec::attentionDifference(trace, ref, H);
        QVERIFY2(d.failure(1e-4).empty(), d.failure(1e-4).c_str());
        qInfo("worst differences from the reference: encoder %.2g, decoder self %.2g, cross %.2g", d.encoder.value(), d.self.value(),
              d.cross.value());
        const std::vector<double> p = softmax(trace.nextLogits);
        const numericcheck::Worst worstP = numericcheck::difference(p, ref.nextProbabilities);
        QVERIFY2(worstP.within(1e-4), worstP.message("next-token probabilities").c_str());
        qInfo("next-token probabilities: worst difference %.2g", worstP.value());
        // Generation's decoder one token at a time (scaled embeddings, sinusoidal positions, SiLU) against
        // whole passes, where it applies (a mask that hides later keys).
        if (causal) {
            const encdec::StepDifference steps = encdec::stepsAgainstWholePasses(**model, source->ids, target->ids, s);
            QVERIFY2(steps.weights.within(1e-5), steps.weights.message("steps' weights").c_str());
            QVERIFY2(steps.logits.within(1e-5), steps.logits.message("steps' logits").c_str());
        }
    }

    // The stored table is what the model adds; without one, the loader computes the same sinusoid.
    void marianPositionsWithoutTheStoredTable()
    {
        const int V = tinymarian::vocabularySize();
        std::vector<NamedTensor> t = tinymarian::tensors(V, {});
        std::erase_if(t, [](const NamedTensor& x) { return x.name.ends_with("embed_positions.weight"); });
        Result<ModelPtr> computed = loadModel(tinymarian::writeFolder(m_tmp, "marian-computed", t));
        Result<ModelPtr> stored = loadModel(tinymarian::writeFolder(m_tmp, "marian-stored"));
        QVERIFY2(computed, computed ? "" : computed.error().c_str());
        QVERIFY(stored);
        const numericcheck::Worst positions = numericcheck::difference((*computed)->weights.positionEmbedding, (*stored)->weights.positionEmbedding);
        QVERIFY2(positions.within(1e-6f), positions.message("position table").c_str());
        const std::vector<float> table = tinymarian::positionTable(tinymarian::kC, tinymarian::kD);
        QCOMPARE(marianPositionTable(tinymarian::kC, tinymarian::kD)(5, 1), table[5 * tinymarian::kD + 1]);
    }

    // A SentencePiece model with a zero-length piece makes the library throw from its trie builder instead of
    // returning a status (found by fuzz/targets/marian_folder): a sentence, not a terminated program.
    void marianSpmThatThrowsIsRefused()
    {
        std::ifstream in(std::string(ATTNSCOPE_FUZZ_DIR) + "/regressions/marian_folder/spm-zero-length-piece-throws", std::ios::binary);
        const std::string input((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        QVERIFY(!input.empty());
        const std::vector<std::string_view> parts = fuzzing::splitParts(input, 6);
        const fs::path dir = fs::path(m_tmp.path().toStdString()) / "marian-throws";
        fs::create_directories(dir);
        const char* const names[] = {"config.json", "model.safetensors", "vocab.json", "source.spm", "target.spm"};
        for (int i = 0; i < 5; ++i)
            if (!parts[std::size_t(i)].empty()) fixture::writeText(dir / names[i], std::string(parts[std::size_t(i)]));
        Result<ModelPtr> r = loadModel(dir.string());
        QVERIFY(!r);
        QVERIFY2(r.error().find(".spm' could not be loaded") != std::string::npos, r.error().c_str());
    }

    void marianBadFolders_data()
    {
        QTest::addColumn<QString>("change");
        QTest::addColumn<std::string>("expected1");
        QTest::addColumn<std::string>("expected2");
        auto row = [](const char* name, const char* change, const char* e1, const char* e2) {
            QTest::newRow(name) << QString(change) << std::string(e1) << std::string(e2);
        };
        row("source.spm missing", "rm source.spm", "no source.spm", "vocab.json, source.spm and target.spm");
        row("target.spm not a model", "write target.spm:not a protobuf", "target.spm", "could not be loaded");
        row("vocab.json ids with a gap", "write vocab.json:{\"</s>\":0,\"<unk>\":5}", "vocab.json", "ids must be whole numbers");
        row("vocab.json without <unk>", "write vocab.json:{\"</s>\":0,\"a\":1}", "vocab.json", "no \"<unk>\"");
        row("vocab.json one id twice", "write vocab.json:{\"</s>\":0,\"<unk>\":0}", "vocab.json", "more than one piece");
        row("separate decoder vocabulary", "config:share_encoder_decoder_embeddings=false", "config.json", "vocabulary of its own");
        row("decoder_vocab_size differs", "config:decoder_vocab_size=10", "config.json", "vocabulary of its own");
        row("pad_token_id missing", "config:pad_token_id=-", "config.json", "pad_token_id");
        row("unknown activation", "config:activation_function=\"mish\"", "mish", "config.json");
        row("position table of the wrong length", "positions", "embed_positions", "implies [32, 8]");
    }
    void marianBadFolders()
    {
        QFETCH(QString, change);
        QFETCH(std::string, expected1);
        QFETCH(std::string, expected2);
        const int V = tinymarian::vocabularySize();
        std::vector<NamedTensor> t = tinymarian::tensors(V, {});
        const std::string c = change.toStdString();
        if (c == "positions")
            for (NamedTensor& x : t)
                if (x.name == "model.encoder.embed_positions.weight") {
                    x.shape = {tinymarian::kC - 2, tinymarian::kD};
                    x.values.resize(std::size_t((tinymarian::kC - 2) * tinymarian::kD));
                }
        const fs::path dir = tinymarian::writeFolder(m_tmp, "bad-marian", t);
        if (c.starts_with("write ")) {
            const std::string rest = c.substr(6);
            fixture::writeText(dir / rest.substr(0, rest.find(':')), rest.substr(rest.find(':') + 1));
        } else {
            fixture::applyFolderChange(dir, c, tinymarian::config(V, {}));
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
        std::vector<NamedTensor> t = tinybart::tensors(tinybart::vocabularySize());
        const std::string folder = tinybart::writeFolder(m_tmp, "one-file", t);
        const std::string problem = tracecompare::shardsAgainstOneFile(folder, t);
        QVERIFY2(problem.empty(), problem.c_str());
    }
};

QTEST_APPLESS_MAIN(TestBartLoader)
#include "tst_bartloader.moc"
