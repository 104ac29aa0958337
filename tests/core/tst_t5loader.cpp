// T5 encoder–decoder folders: tiny checkpoints written here (tests/core/tinyt5.h, with a SentencePiece model
// trained by the test), loaded by the core and checked against the plain-loop reference of
// tests/core/t5reference.h, which parses the file itself and shares no code with the core: the encoder's
// self-attention with bidirectional relative buckets, the decoder's masked self-attention with causal
// buckets, the cross-attention without any, and the next-token probabilities, within 1e-4, for relu and
// gated-gelu feed-forwards, tied and untied heads, and under every setting that changes them. Then the
// tokenizer's ids, the bucket rule on hand-worked offsets, and one row per kind of bad folder.
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "encdeccompare.h"
#include "numericcheck.h"
#include "fuzzing.h"
#include "core/io/formats/safetensors.h"
#include "core/model/encoderdecoder.h"
#include "core/model/forward.h"
#include "core/model/relativebias.h"
#include "t5reference.h"
#include "tinyt5.h"
#include "core/open/openmodel.h"
#include "fixturefiles.h"
#include "tracecompare.h"

using namespace attnscope;
namespace fs = std::filesystem;

Q_DECLARE_METATYPE(std::string)
Q_DECLARE_METATYPE(tinyt5::Options)

namespace {

using encdec::softmax;
using encdec::worst;

// Long enough that offsets pass the maximum distance of 12 and reach the last buckets.
const char* kSource = "the cat sat on the mat and the dog sat on the log by the door";
const char* kTarget = "lo miska tavek pel lo nami";

} // namespace

class TestT5Loader : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;

private slots:
    void initTestCase() { QVERIFY(m_tmp.isValid()); }

    void loadsBothStacks()
    {
        Result<ModelPtr> r = loadModel(tinyt5::writeFolder(m_tmp, "shape"));
        QVERIFY2(r, r ? "" : r.error().c_str());
        const Model& m = **r;
        QVERIFY(m.isEncoderDecoder());
        QCOMPARE(m.config.architecture, std::string("t5"));
        QVERIFY(m.config.positional == PositionalKind::RelativeBuckets);
        QVERIFY(m.config.normKind == NormKind::RmsNorm);
        QVERIFY(m.config.norm == NormPlacement::PreLN);
        QVERIFY(m.config.scaleFolded);
        QVERIFY(!m.config.causal);
        QCOMPARE(m.config.layers, tinyt5::kEncL);
        QCOMPARE(m.decoder->layers, tinyt5::kDecL);
        QCOMPARE(m.config.relativeBuckets, tinyt5::kBuckets);
        QCOMPARE(m.config.relativeMaxDistance, tinyt5::kMaxDistance);
        QCOMPARE(m.weights.relativeBias.rows(), Eigen::Index(tinyt5::kBuckets));
        QCOMPARE(m.decoder->relativeBias.cols(), Eigen::Index(tinyt5::kH));
        QVERIFY(m.weights.positionEmbedding.size() == 0);
        QCOMPARE(m.config.vocabSize, tinyt5::vocabularySize());
    }

    // Hand-worked buckets for 8 buckets and a maximum distance of 12. Bidirectional: 4 buckets a side, 2 exact
    // (offsets 0 and 1), then 2 + floor(ln(d / 2) / ln 6 * 2): d = 2..4 → 2, d = 5..11 → 3, d ≥ 12 → 3
    // (the last); keys after the query add 4. Causal: 8 buckets of the past, 4 exact, then
    // 4 + floor(ln(d / 4) / ln 3 * 4): d = 4,5 → 4, 6 → 5, 7..9 → 6, 10.. → 7.
    void bucketsByHand()
    {
        const int b = tinyt5::kBuckets, m = tinyt5::kMaxDistance;
        const std::vector<std::pair<int, int>> both = {{0, 0}, {-1, 1}, {-2, 2}, {-4, 2}, {-5, 3}, {-30, 3},
                                                       {1, 5}, {2, 6}, {4, 6}, {5, 7}, {40, 7}};
        for (auto [offset, bucket] : both) QCOMPARE(relativeBucket(offset, true, b, m), bucket);
        const std::vector<std::pair<int, int>> past = {{0, 0}, {3, 0}, {-3, 3}, {-4, 4}, {-5, 4}, {-6, 5},
                                                       {-7, 6}, {-9, 6}, {-10, 7}, {-100, 7}};
        for (auto [offset, bucket] : past) QCOMPARE(relativeBucket(offset, false, b, m), bucket);
        // The engine's rule and the reference's agree on every offset a text of 200 tokens has.
        for (int offset = -200; offset <= 200; ++offset) {
            QCOMPARE(relativeBucket(offset, true, b, m), t5ref::bucket(0, offset, true, b, m));
            QCOMPARE(relativeBucket(offset, false, b, m), t5ref::bucket(0, offset, false, b, m));
            QCOMPARE(relativeBucket(offset, true, 32, 128), t5ref::bucket(0, offset, true, 32, 128));
            QCOMPARE(relativeBucket(offset, false, 32, 128), t5ref::bucket(0, offset, false, 32, 128));
        }
    }

    // The source is SentencePiece's ids then </s>; the decoder input is decoder_start_token_id (<pad>) then the
    // target's ids, as Hugging Face's T5 tokenizer gives them.
    void tokenizer()
    {
        Result<ModelPtr> r = loadModel(tinyt5::writeFolder(m_tmp, "tokens"));
        QVERIFY(r);
        Result<TokenizedText> source = encodeSource(**r, kSource), target = encodeTarget(**r, kTarget);
        QVERIFY(source && target);
        std::vector<int> expected = tinyt5::encode(kSource);
        expected.push_back(tinyt5::kEosId);
        QCOMPARE(source->ids, expected);
        QCOMPARE(source->tokens.back(), std::string("</s>"));
        QCOMPARE(source->tokens.front(), tinyt5::piece(expected.front()));
        expected = tinyt5::encode(kTarget);
        expected.insert(expected.begin(), tinyt5::kPadId);
        QCOMPARE(target->ids, expected);
        // The sentinels follow the pieces, <extra_id_0> last.
        const Tokenizer& t = *(*r)->decoder->targetTokenizer;
        QCOMPARE(t.displayToken(tinyt5::pieceCount()), std::string("<extra_id_99>"));
        QCOMPARE(t.displayToken(tinyt5::pieceCount() + tinyt5::kExtraIds - 1), std::string("<extra_id_0>"));
    }

    void matchesReference_data()
    {
        QTest::addColumn<tinyt5::Options>("options");
        QTest::addColumn<bool>("causal");
        QTest::addColumn<bool>("sqrtScaling");
        QTest::addColumn<double>("temperature");
        QTest::addColumn<std::vector<int>>("blocked");
        QTest::addColumn<int>("repeatTarget");
        tinyt5::Options relu, gated, untied, gatedUntied, wide, narrow;
        gated.gated = true;
        // num_heads × d_kv other than d_model (8): 2 × 6 = 12 and 2 × 3 = 6, as flan-t5-small's 6 × 64 in 512.
        wide.gated = true;
        wide.dKv = 6;
        narrow.dKv = 3;
        narrow.seed = 37;
        untied.tied = false;
        untied.seed = 31;
        gatedUntied.gated = true;
        gatedUntied.tied = false;
        QTest::newRow("relu, tied") << relu << true << true << 1.0 << std::vector<int>{} << 1;
        QTest::newRow("gated-gelu, tied") << gated << true << true << 1.0 << std::vector<int>{} << 1;
        QTest::newRow("relu, untied") << untied << true << true << 1.0 << std::vector<int>{} << 1;
        QTest::newRow("gated-gelu, untied") << gatedUntied << true << true << 1.0 << std::vector<int>{} << 1;
        QTest::newRow("no causal mask") << gated << false << true << 1.0 << std::vector<int>{} << 1;
        QTest::newRow("sqrt scaling off") << relu << true << false << 1.0 << std::vector<int>{} << 1;
        QTest::newRow("temperature 0.5") << gated << true << true << 0.5 << std::vector<int>{} << 1;
        QTest::newRow("blocked source keys") << relu << true << true << 1.0 << std::vector<int>{0, 4} << 1;
        // A target past 64 tokens takes the engine's blocked causal path, which adds the bias block by block.
        QTest::newRow("long target") << gated << true << true << 1.0 << std::vector<int>{} << 14;
        QTest::newRow("heads wider than d_model") << wide << true << true << 1.0 << std::vector<int>{} << 1;
        QTest::newRow("heads narrower than d_model") << narrow << true << true << 1.0 << std::vector<int>{} << 1;
        QTest::newRow("narrower heads, sqrt scaling off") << narrow << true << false << 1.0 << std::vector<int>{} << 1;
    }
    void matchesReference()
    {
        QFETCH(tinyt5::Options, options);
        QFETCH(bool, causal);
        QFETCH(bool, sqrtScaling);
        QFETCH(double, temperature);
        QFETCH(std::vector<int>, blocked);
        QFETCH(int, repeatTarget);
        const std::string dir = tinyt5::writeFolder(m_tmp, QTest::currentDataTag(), options);
        Result<ModelPtr> model = loadModel(dir);
        QVERIFY2(model, model ? "" : model.error().c_str());
        std::string targetText;
        for (int i = 0; i < repeatTarget; ++i) targetText += std::string(i ? " " : "") + kTarget;
        Result<TokenizedText> source = encodeSource(**model, kSource), target = encodeTarget(**model, targetText);
        QVERIFY(source && target);
        QVERIFY(source->ids.size() > std::size_t(tinyt5::kMaxDistance));
        if (repeatTarget > 1) QVERIFY(target->ids.size() > 64);

        AttentionSettings s;
        s.mask = causal ? MaskKind::Causal : MaskKind::None;
        s.scaling = sqrtScaling ? Scaling::SqrtDk : Scaling::None;
        s.temperature = temperature;
        s.blockedKeys = blocked;
        EncoderDecoderTrace trace;
        const Status st = forwardEncoderDecoder(**model, source->ids, target->ids, s, true, trace);
        QVERIFY2(st.ok(), st.error().c_str());

        const gpt2ref::Checkpoint ck((fs::path(dir) / "model.safetensors").string());
        t5ref::Options ro;
        ro.gated = options.gated;
        ro.tied = options.tied;
        ro.causal = causal;
        ro.sqrtScaling = sqrtScaling;
        ro.temperature = temperature;
        ro.blockedSource = blocked;
        const t5ref::Result ref = t5ref::run(ck, tinyt5::kEncL, tinyt5::kDecL, source->ids, target->ids, ro);

        const int H = tinyt5::kH;
        const encdec::AttentionDifference d = encdec::attentionDifference(trace, ref, H);
        QVERIFY2(d.failure(1e-4).empty(), d.failure(1e-4).c_str());
        qInfo("worst differences from the reference: encoder %.2g, decoder self %.2g, cross %.2g", d.encoder.value(), d.self.value(),
              d.cross.value());
        const std::vector<double> p = softmax(trace.nextLogits);
        QCOMPARE(p.size(), ref.nextProbabilities.size());
        const numericcheck::Worst worstP = numericcheck::difference(p, ref.nextProbabilities);
        QVERIFY2(worstP.within(1e-4), worstP.message("next-token probabilities").c_str());
        qInfo("next-token probabilities: worst difference %.2g", worstP.value());

        // Not trivially uniform, and the relative bias matters: without it the encoder's weights change.
        double spread = 0.0;
        for (const Matrix& m : trace.crossAttention) spread = std::max(spread, double(m.maxCoeff() - m.minCoeff()));
        QVERIFY(spread > 0.05);
        AttentionSettings noPositions = s;
        noPositions.positional = PositionalOverride::None;
        EncoderDecoderTrace without;
        QVERIFY(forwardEncoderDecoder(**model, source->ids, target->ids, noPositions, false, without).ok());
        QVERIFY(worst(without.encoder.attention, ref.encoder, H).exceeds(1e-2));
        QVERIFY(worst(without.selfAttention, ref.decoderSelf, H).exceeds(1e-2));
        // Generation steps the decoder one token at a time only without the relative buckets (their bias is
        // rebuilt for every length); without them, pre-LN with RMS norms, the steps equal whole passes.
        QVERIFY(!DecoderSteps::canStep(**model, s));
        if (noPositions.mask == MaskKind::Causal) {
            QVERIFY(DecoderSteps::canStep(**model, noPositions));
            const encdec::StepDifference steps = encdec::stepsAgainstWholePasses(**model, source->ids, target->ids, noPositions);
            QVERIFY2(steps.weights.within(1e-5), steps.weights.message("steps' weights").c_str());
            QVERIFY2(steps.logits.within(1e-5), steps.logits.message("steps' logits").c_str());
        }

        // The window's views run the Model alone: the encoder's self-attention, the same numbers.
        AttentionSettings alone = s;
        alone.mask = MaskKind::None;
        Result<ForwardTrace> encoderOnly = forward(**model, source->ids, alone);
        QVERIFY(encoderOnly);
        const numericcheck::Worst encoderAlone = worst(encoderOnly->attention, ref.encoder, H);
        QVERIFY2(encoderAlone.within(1e-4), encoderAlone.message("the encoder alone").c_str());
    }

    // The step-by-step pipeline of a cross head: its scores are Q K^T with no bias, and its weights the trace's.
    void crossDetail()
    {
        Result<ModelPtr> model = loadModel(tinyt5::writeFolder(m_tmp, "detail"));
        QVERIFY(model);
        Result<TokenizedText> source = encodeSource(**model, kSource), target = encodeTarget(**model, kTarget);
        EncoderDecoderTrace trace;
        QVERIFY(forwardEncoderDecoder(**model, source->ids, target->ids, AttentionSettings{}, false, trace, HeadSelection{1, 1}).ok());
        QVERIFY(trace.hasCrossDetail);
        const HeadDetail& d = trace.crossDetail;
        const numericcheck::Worst scores = numericcheck::difference(d.scores, d.q * d.k.transpose());
        QVERIFY2(scores.within(1e-5f), scores.message("scores").c_str());
        const numericcheck::Worst scaled = numericcheck::difference(d.scaled, d.scores);  // T5 as trained: a multiplier of 1
        QVERIFY2(scaled.within(1e-6f), scaled.message("scaled scores").c_str());
        const numericcheck::Worst weights = numericcheck::difference(d.weights, trace.cross(1, 1));
        QVERIFY2(weights.within(1e-7f), weights.message("weights").c_str());
    }

    // A SentencePiece model whose piece is not UTF-8 loads in the library, but its pieces are shown as text:
    // refused with a sentence naming the id (found by fuzz/targets/t5_folder).
    void spmPieceThatIsNotTextIsRefused()
    {
        std::ifstream in(std::string(ATTNSCOPE_FUZZ_DIR) + "/regressions/t5_folder/spm-piece-not-utf8", std::ios::binary);
        const std::string input((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        QVERIFY(!input.empty());
        const std::vector<std::string_view> parts = fuzzing::splitParts(input, 4);
        const fs::path dir = fs::path(m_tmp.path().toStdString()) / "spm-not-text";
        fs::create_directories(dir);
        const char* const names[] = {"config.json", "model.safetensors", "spiece.model"};
        for (int i = 0; i < 3; ++i)
            if (!parts[std::size_t(i)].empty()) fixture::writeText(dir / names[i], std::string(parts[std::size_t(i)]));
        Result<ModelPtr> r = loadModel(dir.string());
        QVERIFY(!r);
        QVERIFY2(r.error().find("holds a piece that is not valid UTF-8") != std::string::npos, r.error().c_str());
    }

    void refusesBadFolders_data()
    {
        QTest::addColumn<std::string>("change");
        QTest::addColumn<std::string>("expected");
        QTest::newRow("no tokenizer") << std::string("rm spiece.model") << std::string("has neither spiece.model nor tokenizer.json");
        // 3 heads of d_kv 4 are 12 wide; the file's projections are 8.
        QTest::newRow("heads wider than the projections") << std::string("config:num_heads=3")
                                                          << std::string("implies [8, 3]");
        QTest::newRow("unknown feed-forward") << std::string("config:feed_forward_proj=\"gated-swoosh\"")
                                              << std::string("feed_forward_proj is \"gated-swoosh\"");
        QTest::newRow("too few buckets") << std::string("config:relative_attention_num_buckets=2") << std::string("between 4 and 4096 buckets");
        QTest::newRow("eos outside the vocabulary") << std::string("config:eos_token_id=100000") << std::string("eos_token_id is 100000");
        QTest::newRow("vocabulary smaller than the tokenizer") << std::string("config:vocab_size=20")
                                                               << std::string("config.json's vocab_size is 20");
        QTest::newRow("more buckets than the table") << std::string("config:relative_attention_num_buckets=16")
                                                     << std::string("relative_attention_bias");
        QTest::newRow("untied without lm_head") << std::string("config:tie_word_embeddings=false") << std::string("lm_head.weight");
        QTest::newRow("truncated weights") << std::string("truncate") << std::string("model.safetensors");
        QTest::newRow("pickle only") << std::string("pickle") << std::string("pytorch_model.bin");
    }
    void refusesBadFolders()
    {
        QFETCH(std::string, change);
        QFETCH(std::string, expected);
        const fs::path dir = tinyt5::writeFolder(m_tmp, std::string("bad-") + QTest::currentDataTag());
        QVERIFY(fixture::applyFolderChange(dir, change, tinyt5::config(tinyt5::vocabularySize())));
        Result<ModelPtr> r = loadModel(dir.string());
        QVERIFY(!r);
        QVERIFY2(r.error().find(expected) != std::string::npos, r.error().c_str());
    }

    // The same tensors as three shards with model.safetensors.index.json (as large checkpoints and
    // `download` come): the same numbers as from one file.
    void shardsGiveTheSameNumbersAsOneFile()
    {
        std::vector<NamedTensor> t = tinyt5::tensors(tinyt5::vocabularySize());
        const std::string folder = tinyt5::writeFolder(m_tmp, "one-file", t);
        const std::string problem = tracecompare::shardsAgainstOneFile(folder, t);
        QVERIFY2(problem.empty(), problem.c_str());
    }
};

QTEST_GUILESS_MAIN(TestT5Loader)
#include "tst_t5loader.moc"
