// The built-in model that ships inside AttnScope: what it is, and the heads docs/builtin-model.md claims for it,
// measured on text it was not trained on (the held-out noun pairs and random word lists of headprobes.h).
#include <QtTest>

#include "core/builtin/builtinfiles.h"
#include "core/model/forward.h"
#include "core/model/model.h"
#include "core/model/nexttokens.h"
#include "core/model/trainingmask.h"
#include "core/train/probes/headprobes.h"
#include "core/open/openmodel.h"

using namespace attnscope;

class TestBuiltinModel : public QObject {
    Q_OBJECT
private slots:
    void isTheDefaultAndSmall();
    void heads();
    void nextTokensAreRealWords();
    void isNamedForWhatItIs();
};

// The status bar names the model AttnScope trained as that, not by the layout it shares with GPT-2; a
// random model says it is untrained; a folder's model keeps its name and architecture.
void TestBuiltinModel::isNamedForWhatItIs()
{
    Result<ModelPtr> builtin = loadModel("builtin");
    QVERIFY(builtin.hasValue());
    const ModelConfig& c = (*builtin)->config;
    QCOMPARE(modelDescription(c), "AttnScope's built-in model (trained by AttnScope; decoder, causal mask; " + std::to_string(c.layers) +
                                      " layers × " + std::to_string(c.heads) + " heads)");
    Result<ModelPtr> random = loadModel("random:layers=1,heads=2,d_model=16,seed=3");
    QVERIFY2(random.hasValue(), random.error().c_str());
    QCOMPARE(modelDescription((*random)->config),
             (*random)->config.name + " (random weights, untrained; gpt2 layout; 1 layer × 2 heads)");
    ModelConfig folder;
    folder.name = "gpt2-medium";
    folder.architecture = "gpt2";
    folder.layers = 24;
    folder.heads = 16;
    folder.causal = true;
    QCOMPARE(modelDescription(folder), std::string("gpt2-medium (gpt2, decoder, trained with the causal mask; 24 layers × 16 heads)"));
    folder.causal = false;
    folder.architecture = "bert";
    QCOMPARE(modelDescription(folder), std::string("gpt2-medium (bert, encoder, trained bidirectional (no mask); 24 layers × 16 heads)"));
}

void TestBuiltinModel::isTheDefaultAndSmall()
{
    QCOMPARE(defaultModelSpec(), std::string("builtin"));
    Result<ModelPtr> m = loadModel("builtin");
    QVERIFY2(m.hasValue(), m.error().c_str());
    QCOMPARE((*m)->config.name, std::string("builtin"));
    QCOMPARE((*m)->tokenizer->kind(), std::string("word-vocab"));
    QVERIFY((*m)->warnings.empty());
    std::size_t bytes = 0;
    for (const char* f : {"config.json", "model.safetensors", "vocab.txt"}) {
        const auto file = builtinModelFile(f);
        QVERIFY2(file, f);
        bytes += file->size();
    }
    QVERIFY2(bytes <= 5u * 1024 * 1024, qPrintable(QString("%1 bytes").arg(bytes)));
    QVERIFY((*m)->tokenizer->vocabSize() >= 2000);
}

void TestBuiltinModel::heads()
{
    Result<ModelPtr> m = loadModel("builtin");
    QVERIFY(m.hasValue());
    Result<train::HeadProbeResults> r = train::probeHeads(**m);
    QVERIFY2(r.hasValue(), r.error().c_str());
    const auto prev = r->previousToken.best(), ind = r->induction.best(), pro = r->pronoun.best();
    qInfo("previous-token head L%d H%d: %.3f on %d held-out sentences", prev.layer, prev.head, prev.score, r->sentences);
    qInfo("induction head L%d H%d: %.3f on %d random word lists said twice", ind.layer, ind.head, ind.score, r->sequences);
    qInfo("pronoun head L%d H%d: %.3f of %d held-out noun pairs", pro.layer, pro.head, pro.score, r->pronounPairs);
    QVERIFY2(prev.score >= 0.8, qPrintable(QString::number(prev.score)));
    QVERIFY2(ind.score >= 0.5, qPrintable(QString::number(ind.score)));
    QVERIFY2(pro.score >= 0.8, qPrintable(QString::number(pro.score)));
    QVERIFY(r->pronounPairs >= 300 && r->sentences >= 100 && r->sequences >= 100);
}

void TestBuiltinModel::nextTokensAreRealWords()
{
    Result<ModelPtr> m = loadModel("builtin");
    QVERIFY(m.hasValue());
    // Only a dog barks or growls: after "the dog sat on the rug because it" those should lead the list.
    Result<TokenizedText> t = (*m)->tokenizer->encode("the dog sat on the rug because it");
    CaptureRequest capture;
    capture.nextTokenLogits = true;
    Result<ForwardTrace> trace = forward(**m, t->ids, {}, capture);
    QVERIFY(trace.hasValue());
    const std::vector<NextToken> top = topK(*trace, *(*m)->tokenizer, 3);
    QStringList words;
    for (const NextToken& n : top) words << QString::fromStdString(n.token);
    QVERIFY2(words.contains("barked") || words.contains("growled"), qPrintable(words.join(' ')));
}

QTEST_APPLESS_MAIN(TestBuiltinModel)
#include "tst_builtinmodel.moc"
