// The translator's path from trainer to window: a TranslatorTrainer's folder, opened by the model-folder
// loader, must compute what the training network computed (every cross-attention weight, and the loss as
// the sum of the next-token log-probabilities of the inference forward pass), read the source and target
// as training did, and refuse broken folders with a sentence. The scores of translatoreval are checked on
// a model whose translations are known.
#include <QtTest>

#include <QTemporaryDir>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/builtin/builtinfiles.h"
#include "core/io/modelfolder.h"
#include "core/io/formats/safetensors.h"
#include "core/model/encoderdecoder.h"
#include "core/model/generate.h"
#include "core/train/translator/translatoreval.h"
#include "core/train/translator/translatortrainer.h"
#include "core/open/openmodel.h"
#include "numericcheck.h"

using namespace attnscope;
using namespace attnscope::train;

namespace {

// Six pairs in the shape of the generated corpus; the target words are invented.
constexpr const char* kPairs = "the dog runs .\tkapo runa .\n"
                               "the old dog runs .\tkapo sevi runa .\n"
                               "the dogs saw the red ball .\tkapo ri bali rupa tiko .\n"
                               "the cat sleeps .\tmilu sona .\n"
                               "the cat saw the dog .\tmilu kapo tiko .\n"
                               "the red cat sleeps on the mat .\tmilu rupa mato na sona .\n";

TranslatorConfig tinyConfig()
{
    TranslatorConfig c;
    c.encoderLayers = 2;
    c.decoderLayers = 2;
    c.heads = 2;
    c.dModel = 16;
    c.dFF = 32;
    c.sourceContext = 12;
    c.targetContext = 12;
    return c;
}

struct Trained {
    std::shared_ptr<const VocabTokenizer> tokenizer;
    std::shared_ptr<const PairBatch> pairs;
    std::unique_ptr<TranslatorTrainer> trainer;
};

Trained trainTiny(int steps)
{
    Trained t;
    Result<VocabTokenizer> vocab = buildPairVocabulary(kPairs);
    if (!vocab) qFatal("%s", vocab.error().c_str());
    t.tokenizer = std::make_shared<const VocabTokenizer>(std::move(*vocab));
    TranslatorTrainOptions o;
    o.network = tinyConfig();
    o.network.vocab = t.tokenizer->vocabSize();
    o.steps = steps;
    o.batchPairs = 4;
    o.shards = 2;
    o.warmupSteps = 2;
    o.learningRate = 1e-2;
    Result<PairBatch> pairs = tokenizePairs(kPairs, *t.tokenizer, o.network);
    if (!pairs) qFatal("%s", pairs.error().c_str());
    t.pairs = std::make_shared<const PairBatch>(std::move(*pairs));
    Result<std::unique_ptr<TranslatorTrainer>> made = TranslatorTrainer::create(o, t.tokenizer, t.pairs);
    if (!made) qFatal("%s", made.error().c_str());
    t.trainer = std::move(*made);
    while (!t.trainer->finished()) t.trainer->step();
    return t;
}

std::vector<int> slice(const std::vector<int>& v, int from, int to) { return {v.begin() + from, v.begin() + to}; }

} // namespace

class TestTranslator : public QObject {
    Q_OBJECT
private slots:
    void pairsBecomeIdsAsTheDecoderReadsThem();
    void badPairsAreRefusedWithTheirLine();
    void loadedModelComputesWhatTheTrainerTrained();
    void sourceAndTargetAreEncodedAsInTraining();
    void brokenFoldersAreRefused_data();
    void brokenFoldersAreRefused();
    void scoresCountWordsAndAlignment();
    void alignmentHeadIsChosenOnOneSetAndReportedOnAnother();
    void builtinTranslatorTranslatesUnseenCombinations();
    void greedyTargetIsWhatGenerationWrote();
    void decoderBlockKeepsEachSublayer();
};

void TestTranslator::pairsBecomeIdsAsTheDecoderReadsThem()
{
    Result<VocabTokenizer> vocab = buildPairVocabulary(kPairs);
    QVERIFY2(vocab.hasValue(), vocab.hasValue() ? "" : vocab.error().c_str());
    // <bos>, <unk>, <eos>, then words by frequency: "." and "the" are the commonest.
    QCOMPARE(vocab->displayToken(0), std::string("<bos>"));
    QCOMPARE(vocab->displayToken(1), std::string("<unk>"));
    QCOMPARE(vocab->displayToken(2), std::string("<eos>"));
    QCOMPARE(vocab->displayToken(3), std::string("."));
    QCOMPARE(vocab->displayToken(4), std::string("the"));
    TranslatorConfig c = tinyConfig();
    c.vocab = vocab->vocabSize();
    Result<PairBatch> pairs = tokenizePairs(kPairs, *vocab, c);
    QVERIFY2(pairs.hasValue(), pairs.hasValue() ? "" : pairs.error().c_str());
    QCOMPARE(pairs->pairs(), 6);
    // Pair 0: source <bos> the dog runs . ; decoder input <bos> kapo runa . ; targets kapo runa . <eos>.
    auto ids = [&](std::initializer_list<const char*> words) {
        std::vector<int> out;
        for (const char* w : words) out.push_back(vocab->idOf(w));
        return out;
    };
    QCOMPARE(slice(pairs->source, 0, pairs->sourceStart[1]), ids({"<bos>", "the", "dog", "runs", "."}));
    QCOMPARE(slice(pairs->input, 0, pairs->targetStart[1]), ids({"<bos>", "kapo", "runa", "."}));
    QCOMPARE(slice(pairs->target, 0, pairs->targetStart[1]), ids({"kapo", "runa", ".", "<eos>"}));
}

void TestTranslator::badPairsAreRefusedWithTheirLine()
{
    Result<VocabTokenizer> vocab = buildPairVocabulary(kPairs);
    QVERIFY(vocab.hasValue());
    TranslatorConfig c = tinyConfig();
    c.vocab = vocab->vocabSize();
    const std::pair<const char*, const char*> cases[] = {
        {"the dog runs .\tkapo runa .\nno tab here\n", "line 2 of the pairs is not 'source<TAB>target'."},
        {"the dog runs .\t  \n", "line 1 of the pairs has an empty side."},
        {"the dog flies .\tkapo runa .\n", "line 1 has the word 'flies', which is not in the vocabulary."},
        {"the dog runs . the dog runs . the dog runs .\tkapo .\n", "line 1 has 13 source and 3 target tokens; the network takes at most 12 and 12."},
    };
    for (const auto& [text, sentence] : cases) {
        Result<PairBatch> pairs = tokenizePairs(text, *vocab, c);
        QVERIFY2(!pairs.hasValue(), text);
        QVERIFY2(pairs.error().find(sentence) != std::string::npos, pairs.error().c_str());
    }
}

void TestTranslator::loadedModelComputesWhatTheTrainerTrained()
{
    Trained t = trainTiny(30);
    QTemporaryDir dir;
    const std::string folder = dir.filePath("tiny-translator").toStdString();
    QVERIFY(t.trainer->writeModelFolder(folder, "tiny-translator", {{"lexicon.tsv", "dog\tkapo\n"}}).ok());
    QVERIFY(std::filesystem::exists(std::filesystem::path(folder) / "lexicon.tsv"));
    Result<ModelPtr> model = loadModelFolder(folder);
    QVERIFY2(model.hasValue(), model.hasValue() ? "" : model.error().c_str());
    QVERIFY((*model)->isEncoderDecoder());
    QCOMPARE((*model)->config.architecture, std::string("attnscope-translator"));

    TranslatorNetwork<float> net(t.trainer->options().network);
    const PairBatch& pairs = *t.pairs;
    numericcheck::Worst worstWeight, worstLoss;
    worstLoss.label("pair");
    for (int p = 0; p < pairs.pairs(); ++p) {
        const double trainedLoss = net.run(t.trainer->parameters(), pairs, p, 1, 1.0f, nullptr);
        const std::vector<int> source = slice(pairs.source, pairs.sourceStart[p], pairs.sourceStart[p + 1]);
        const std::vector<int> input = slice(pairs.input, pairs.targetStart[p], pairs.targetStart[p + 1]);
        const std::vector<int> target = slice(pairs.target, pairs.targetStart[p], pairs.targetStart[p + 1]);
        EncoderDecoderTrace trace;
        QVERIFY(forwardEncoderDecoder(**model, source, input, AttentionSettings{}, false, trace).ok());
        for (int l = 0; l < 2; ++l)
            for (int h = 0; h < 2; ++h) {
                worstWeight.label("pair %d layer %d head %d", p, l, h);
                worstWeight.add(trace.cross(l, h), net.crossAttention(0, l, h));
            }
        // The loss again, one prefix at a time: -log softmax(next logits)[the next target id].
        double loss = 0;
        for (std::size_t i = 1; i <= input.size(); ++i) {
            EncoderDecoderTrace step;
            QVERIFY(forwardEncoderDecoder(**model, source, slice(input, 0, int(i)), AttentionSettings{}, true, step).ok());
            const Eigen::RowVectorXd logits = step.nextLogits.cast<double>();
            const double max = logits.maxCoeff();
            loss += std::log((logits.array() - max).exp().sum()) + max - logits[target[i - 1]];
        }
        worstLoss.addDeviation(std::abs(loss - trainedLoss) / loss, p);
    }
    qInfo("worst cross-attention difference %.2g, worst relative loss difference %.2g", worstWeight.value(), worstLoss.value());
    QVERIFY2(worstWeight.within(1e-5), worstWeight.message("cross-attention").c_str());
    QVERIFY2(worstLoss.within(1e-5), worstLoss.message("relative loss").c_str());
}

void TestTranslator::sourceAndTargetAreEncodedAsInTraining()
{
    Trained t = trainTiny(1);
    QTemporaryDir dir;
    const std::string folder = dir.filePath("m").toStdString();
    QVERIFY(t.trainer->writeModelFolder(folder, "m").ok());
    Result<ModelPtr> model = loadModelFolder(folder);
    QVERIFY(model.hasValue());
    Result<TokenizedText> source = encodeSource(**model, "The dog runs.");
    Result<TokenizedText> target = encodeTarget(**model, "kapo runa .");
    QVERIFY(source.hasValue() && target.hasValue());
    QCOMPARE(source->tokens, (std::vector<std::string>{"<bos>", "the", "dog", "runs", "."}));
    QCOMPARE(target->tokens, (std::vector<std::string>{"<bos>", "kapo", "runa", "."}));
    QCOMPARE(slice(t.pairs->source, 0, t.pairs->sourceStart[1]), source->ids);
    QCOMPARE(slice(t.pairs->input, 0, t.pairs->targetStart[1]), target->ids);
    QCOMPARE((*model)->decoder->endId, t.tokenizer->idOf("<eos>"));
}

void TestTranslator::brokenFoldersAreRefused_data()
{
    QTest::addColumn<QString>("breakage");
    QTest::addColumn<QString>("sentence");
    QTest::newRow("a tensor missing") << "drop decoder.layers.1.cross_attn.kv.weight" << "decoder.layers.1.cross_attn.kv.weight";
    QTest::newRow("vocabulary of another size") << "vocab" << "vocab_size is";
    QTest::newRow("no <eos>") << "eos" << "no end-of-sentence token '<eos>'";
    QTest::newRow("config without a size") << "config" << "decoder_layers";
}

void TestTranslator::brokenFoldersAreRefused()
{
    QFETCH(QString, breakage);
    QFETCH(QString, sentence);
    Trained t = trainTiny(1);
    QTemporaryDir dir;
    const std::filesystem::path folder = dir.filePath("broken").toStdString();
    QVERIFY(t.trainer->writeModelFolder(folder.string(), "broken").ok());
    auto write = [](const std::filesystem::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; };
    if (breakage.startsWith("drop ")) {
        const std::string drop = breakage.mid(5).toStdString();
        std::vector<NamedTensor> kept;
        for (NamedTensor& n : namedTensors(makeTranslatorLayout(t.trainer->options().network).tensors, t.trainer->parameters()))
            if (n.name != drop) kept.push_back(std::move(n));
        QVERIFY(writeSafetensors((folder / "model.safetensors").string(), kept).ok());
    } else if (breakage == "vocab") {
        write(folder / "vocab.txt", t.tokenizer->toText() + "extra\n");
    } else if (breakage == "eos") {
        std::string text = t.tokenizer->toText();
        text.replace(text.find("<eos>"), 5, "<end>");
        write(folder / "vocab.txt", text);
    } else {
        std::string config = translatorConfigJson(t.trainer->options().network, "broken");
        const std::size_t at = config.find("\"decoder_layers\"");
        config.erase(at, config.find('\n', at) - at + 1);
        write(folder / "config.json", config);
    }
    Result<ModelPtr> model = loadModelFolder(folder.string());
    QVERIFY(!model.hasValue());
    QVERIFY2(model.error().find(sentence.toStdString()) != std::string::npos, model.error().c_str());
}

void TestTranslator::scoresCountWordsAndAlignment()
{
    // A model trained long enough on six pairs writes them back; the scores then count every word, and the
    // arithmetic of a perfect and of a broken reference is checked by hand.
    Trained t = trainTiny(400);
    QTemporaryDir dir;
    const std::string folder = dir.filePath("m").toStdString();
    QVERIFY(t.trainer->writeModelFolder(folder, "m").ok());
    Result<ModelPtr> model = loadModelFolder(folder);
    QVERIFY(model.hasValue());
    TranslationPair known{"the cat saw the dog .", "milu kapo tiko .", {2, 5, 3, 6}, {true, true, true, false}};
    Result<TranslationScores> s = scoreTranslator(**model, {known});
    QVERIFY2(s.hasValue(), s.hasValue() ? "" : s.error().c_str());
    QCOMPARE(s->pairs, 1);
    QCOMPARE(s->words, 4);
    QCOMPARE(s->correctWords, 4);
    QCOMPARE(s->exactSentences, 1);
    QCOMPARE(s->alignedWords, 3);  // "." is not a content word
    QCOMPARE(int(s->headHits.size()), 4);
    // The alignment figure recomputed from one teacher-forced pass on the sentence the model wrote (it wrote
    // `known`): under the causal mask, row i of a cross-attention matrix is the row the step that wrote word i
    // chose it from. A head hits a content word when its largest weight there falls on the source token the
    // word translates; the figure is the chosen head's share of the aligned words.
    Result<TokenizedText> source = encodeSource(**model, known.source), target = encodeTarget(**model, known.target);
    QVERIFY(source.hasValue() && target.hasValue());
    const int offset = int(source->ids.size()) - 6;  // 6 source words; the model's own first token, if it adds one
    AttentionSettings causal;
    causal.mask = MaskKind::Causal;
    EncoderDecoderTrace trace;
    QVERIFY(forwardEncoderDecoder(**model, source->ids, target->ids, causal, false, trace).ok());
    std::vector<int> hits(std::size_t(trace.decoderLayers * trace.heads), 0);
    for (int l = 0; l < trace.decoderLayers; ++l)
        for (int h = 0; h < trace.heads; ++h)
            for (std::size_t i = 0; i < known.alignment.size(); ++i) {
                if (!known.targetContent[i]) continue;
                Eigen::Index top = 0;
                trace.cross(l, h).row(Eigen::Index(i)).maxCoeff(&top);
                hits[std::size_t(l * trace.heads + h)] += top == known.alignment[i] + offset;
            }
    QCOMPARE(s->headHits, hits);
    QCOMPARE(s->heads, trace.heads);
    for (int l = 0; l < trace.decoderLayers; ++l)
        for (int h = 0; h < trace.heads; ++h) QCOMPARE(s->headAccuracy(l, h), hits[std::size_t(l * trace.heads + h)] / 3.0);
    // A reference with a word inserted second: only "milu" agrees position by position (then kapo meets
    // "sevi", tiko "kapo", "." "tiko"), out of the longer sentence's 5 words.
    TranslationPair wrong{"the cat saw the dog .", "milu sevi kapo tiko .", {2, -1, 5, 3, 6}, {true, false, true, true, false}};
    s = scoreTranslator(**model, {wrong});
    QVERIFY(s.hasValue());
    QCOMPARE(s->words, 5);
    QCOMPARE(s->correctWords, 1);
    QCOMPARE(s->exactSentences, 0);
    QCOMPARE(s->alignedWords, 1);
}

void TestTranslator::alignmentHeadIsChosenOnOneSetAndReportedOnAnother()
{
    // Worked by hand, 2 layers of 2 heads, 10 aligned words on each set: on the selection set heads 1 and 2
    // tie at 5 hits and the first (layer 0, head 1) is chosen; on the report set that head has 3 hits, and
    // the report set's own best (layer 0 head 0, 9 hits) is not what is reported.
    TranslationScores selection, report;
    selection.heads = report.heads = 2;
    selection.alignedWords = report.alignedWords = 10;
    selection.headHits = {1, 5, 5, 2};
    report.headHits = {9, 3, 4, 0};
    const AlignmentHead head = chooseAlignmentHead(selection, report);
    QCOMPARE(head.layer, 0);
    QCOMPARE(head.head, 1);
    QCOMPARE(head.selectionAccuracy, 0.5);
    QCOMPARE(head.reportAccuracy, 0.3);
    QCOMPARE(report.headAccuracy(1, 1), 0.0);
    QCOMPARE(TranslationScores{}.headAccuracy(0, 0), 0.0);  // nothing aligned: no share, not a division by zero

    // The two held-out sets share no source sentence, and the report set has the pairs asked for.
    const HeldOutSets sets = heldOutSelectionAndReport(60, 7);
    QCOMPARE(int(sets.report.size()), 60);
    QVERIFY(sets.selection.size() >= 30);
    for (const TranslationPair& chosenOn : sets.selection)
        for (const TranslationPair& reported : sets.report) QVERIFY(chosenOn.source != reported.source);
}

void TestTranslator::builtinTranslatorTranslatesUnseenCombinations()
{
    // The committed weights: on sentences whose adjective–noun pairs never occurred in training, the
    // issue's bars (word accuracy 90 %, alignment 80 %), and its lexicon is the generator's dictionary. The
    // alignment head is chosen on one held-out set and measured on another.
    Result<ModelPtr> model = loadModel("builtin-translator");
    QVERIFY2(model.hasValue(), model.hasValue() ? "" : model.error().c_str());
    QCOMPARE((*model)->config.architecture, std::string("attnscope-translator"));
    const HeldOutSets sets = heldOutSelectionAndReport(150, 7);
    Result<TranslationScores> chosenOn = scoreTranslator(**model, sets.selection);
    QVERIFY2(chosenOn.hasValue(), chosenOn.hasValue() ? "" : chosenOn.error().c_str());
    Result<TranslationScores> s = scoreTranslator(**model, sets.report);
    QVERIFY2(s.hasValue(), s.hasValue() ? "" : s.error().c_str());
    const AlignmentHead head = chooseAlignmentHead(*chosenOn, *s);
    qInfo("150 held-out pairs: word accuracy %.4f, %d exact, alignment %.4f (L%d H%d chosen on %d other pairs at %.4f; %d words)",
          s->wordAccuracy(), s->exactSentences, head.reportAccuracy, head.layer, head.head, chosenOn->pairs, head.selectionAccuracy,
          s->alignedWords);
    QVERIFY2(s->wordAccuracy() >= 0.9, qPrintable(QString::number(s->wordAccuracy())));
    QVERIFY2(head.reportAccuracy >= 0.8, qPrintable(QString::number(head.reportAccuracy)));
    QVERIFY(s->alignedWords > 500);
    const std::shared_ptr<const std::string> lexicon = builtinTranslatorFile("lexicon.tsv");
    QVERIFY(lexicon);
    QCOMPARE(*lexicon, translationLexiconTsv());
}

void TestTranslator::greedyTargetIsWhatGenerationWrote()
{
    // The views' default target: generation's own tokens without the closing end token, under the causal
    // mask whatever the settings say, and teacher-forced its cross-attention rows are the rows each step
    // chose its token from.
    Result<ModelPtr> model = loadModel("builtin-translator");
    QVERIFY(model.hasValue());
    const Model& m = **model;
    AttentionSettings causal, unmasked;
    causal.mask = MaskKind::Causal;
    unmasked.mask = MaskKind::None;
    for (const TranslationPair& pair : heldOutTranslationPairs(4, 11)) {
        Result<TokenizedText> source = encodeSource(m, pair.source);
        QVERIFY(source.hasValue());
        Result<TokenGeneration> written = generateTokens(m, source->ids, 40, causal);
        QVERIFY(written.hasValue());
        QVERIFY(written->stoppedAtEnd);
        Result<TokenizedText> target = greedyTarget(m, source->ids, 40, unmasked);
        QVERIFY2(target.hasValue(), target.hasValue() ? "" : target.error().c_str());
        QCOMPARE(target->ids, std::vector<int>(written->ids.begin(), written->ids.end() - 1));
        QCOMPARE(target->tokens.size(), target->ids.size());
        // The words after <bos> are the pair's translation (the model translates these sentences exactly).
        std::string words;
        for (std::size_t i = 1; i < target->tokens.size(); ++i) words += (i > 1 ? " " : "") + target->tokens[i];
        QCOMPARE(words, pair.target);
        EncoderDecoderTrace trace;
        QVERIFY(forwardEncoderDecoder(m, source->ids, target->ids, causal, false, trace).ok());
        QCOMPARE(written->steps.size(), target->ids.size());
        numericcheck::Worst worst;
        for (std::size_t step = 0; step < written->steps.size(); ++step)
            for (int l = 0; l < trace.decoderLayers; ++l)
                for (int h = 0; h < trace.heads; ++h) {
                    const Eigen::RowVectorXf& row = written->steps[step].attention[std::size_t(l * trace.heads + h)];
                    worst.label("step %zu layer %d head %d", step, l, h);
                    worst.add(trace.cross(l, h).row(Eigen::Index(step)), row);
                }
        QVERIFY2(worst.within(1e-5f), worst.message("teacher-forced rows against generation's").c_str());
    }
    Result<TokenizedText> source = encodeSource(m, "the small dogs see a red bird .");
    QVERIFY(source.hasValue());
    Result<TokenizedText> two = greedyTarget(m, source->ids, 2, causal);
    QVERIFY(two.hasValue());
    QCOMPARE(two->ids.size(), std::size_t(3));  // the start token and two words
    Result<ModelPtr> decoderOnly = loadModel("builtin");
    QVERIFY(decoderOnly.hasValue());
    QVERIFY(!greedyTarget(**decoderOnly, {1, 2}, 4, causal).hasValue());
}

namespace {

// Plain-loop layer norm of one row.
Eigen::RowVectorXd layerNormRow(const Eigen::RowVectorXd& x, const RowVector& gain, const RowVector& bias, double eps)
{
    const double mean = x.mean();
    const double var = (x.array() - mean).square().mean();
    Eigen::RowVectorXd y(x.size());
    for (Eigen::Index i = 0; i < x.size(); ++i) y[i] = (x[i] - mean) / std::sqrt(var + eps) * gain[i] + bias[i];
    return y;
}

} // namespace

void TestTranslator::decoderBlockKeepsEachSublayer()
{
    // The Block view's decoder block: each sublayer's contribution and the stream after it (pre-LN: the
    // stream plus the contribution), the stream passing from one layer to the next, the last one giving the
    // logits through the final norm, and cross-attention's contribution recomputed by plain loops from the
    // weights, the encoder's output and the trace's cross-attention weights.
    Result<ModelPtr> model = loadModel("builtin-translator");
    QVERIFY(model.hasValue());
    const Model& m = **model;
    const DecoderStack& dec = *m.decoder;
    const std::vector<int> source = encodeSource(m, "the girl saw the red birds near the river .")->ids;
    const std::vector<int> target = encodeTarget(m, "sifa mope ri daze vito")->ids;
    AttentionSettings causal;
    causal.mask = MaskKind::Causal;
    std::vector<EncoderDecoderTrace> traces(std::size_t(dec.layers));
    for (int l = 0; l < dec.layers; ++l)
        QVERIFY(forwardEncoderDecoder(m, source, target, causal, true, traces[std::size_t(l)], HeadSelection{l, 1}).ok());
    const int T = int(target.size()), S = int(source.size()), D = m.config.dModel, H = m.config.heads, Dh = D / H;
    numericcheck::Worst worst;  // a shape that differs counts as infinite
    for (int l = 0; l < dec.layers; ++l) {
        const EncoderDecoderTrace::DecoderBlock& b = traces[std::size_t(l)].block;
        worst.label("layer %d, stream after self-attention", l);
        worst.add(b.residualIn + b.selfOutput, b.afterSelf);
        worst.label("layer %d, stream after cross-attention", l);
        worst.add(b.afterSelf + b.crossOutput, b.afterCross);
        worst.label("layer %d, stream after the feed-forward", l);
        worst.add(b.afterCross + b.ffOutput, b.residualOut);
        QCOMPARE(b.ffHidden.cols(), dec.stack[std::size_t(l)].w1.cols());
        worst.label("layer %d, stream into the next layer", l);
        if (l + 1 < dec.layers) worst.add(b.residualOut, traces[std::size_t(l + 1)].block.residualIn);

        // Cross-attention's contribution: sum over heads of A_h (M W_V,h + b_V,h) W_O,h, plus b_O.
        const AttentionWeights& a = dec.stack[std::size_t(l)].cross;
        const EncoderDecoderTrace& t = traces[std::size_t(l)];
        Eigen::MatrixXd memory(S, D);
        for (int s = 0; s < S; ++s)
            memory.row(s) = layerNormRow(t.encoder.finalHidden.row(s).cast<double>(), m.weights.lnfGain, m.weights.lnfBias, m.config.layerNormEps);
        Eigen::MatrixXd expected = Eigen::MatrixXd::Zero(T, D);
        for (int h = 0; h < H; ++h)
            for (int q = 0; q < T; ++q)
                for (int s = 0; s < S; ++s) {
                    const double w = t.cross(l, h)(q, s);
                    for (int j = 0; j < Dh; ++j) {
                        double v = a.bv[h * Dh + j];
                        for (int d = 0; d < D; ++d) v += memory(s, d) * a.wv(d, h * Dh + j);
                        for (int o = 0; o < D; ++o) expected(q, o) += w * v * a.wo(h * Dh + j, o);
                    }
                }
        for (int q = 0; q < T; ++q) expected.row(q) += a.bo.cast<double>();
        worst.label("layer %d, cross-attention's contribution by plain loops", l);
        worst.add(expected.cast<float>(), b.crossOutput);
    }
    // The last block's stream, through the decoder's final norm, gives the logits.
    const EncoderDecoderTrace& last = traces.back();
    const Eigen::RowVectorXd top = layerNormRow(last.block.residualOut.row(T - 1).cast<double>(), dec.finalNormGain, dec.finalNormBias,
                                                m.config.layerNormEps);
    const Eigen::RowVectorXd logits = (top * double(dec.logitScale)) * dec.unembedding.cast<double>().transpose();
    // Relative to the largest logit's size: every |logit| is at most the scale, so max(scale, |logit|) is it.
    numericcheck::Worst logitError;
    logitError.addRelative(logits, last.nextLogits.cast<double>(), double(last.nextLogits.cwiseAbs().maxCoeff()));
    QVERIFY2(worst.within(1e-4), worst.message().c_str());
    QVERIFY2(logitError.within(1e-4), logitError.message("logits").c_str());
}

QTEST_APPLESS_MAIN(TestTranslator)
#include "tst_translator.moc"
