// A model that does not fit is refused before it is loaded, with both numbers in the sentence; one that
// fits loads. The machine's memory is played by ATTNSCOPE_MEMORY_AVAILABLE, so every case is the same on
// any machine; one case reads this machine's own figure.
#include <QtTest>

#include <fstream>

#include "core/compute/memoryfit.h"
#include "core/model/memoryneed.h"
#include "core/io/modelfolder.h"
#include "core/model/randommodel.h"
#include "tinygpt2.h"
#include "core/open/openmodel.h"

using namespace attnscope;

namespace {

// Sets the playing figure for one scope.
class MemoryLimit {
public:
    explicit MemoryLimit(const QByteArray& bytes) { qputenv("ATTNSCOPE_MEMORY_AVAILABLE", bytes); }
    ~MemoryLimit() { qunsetenv("ATTNSCOPE_MEMORY_AVAILABLE"); }
};

// Llama 3.2 3B's sizes (its config.json): 28 layers, 24 heads of 128 with 8 key/value heads, d_ff 8192, a
// vocabulary of 128256, tied embeddings, context 131072 (cut to AttnScope's 65536).
ModelConfig llama3b()
{
    ModelConfig c;
    c.architecture = "llama";
    c.layers = 28;
    c.heads = 24;
    c.kvHeads = 8;
    c.dModel = 3072;
    c.dHead = 128;
    c.dFF = 8192;
    c.vocabSize = 128256;
    c.contextLength = 65536;
    c.positional = PositionalKind::Rotary;
    c.activation = Activation::SwiGlu;
    c.norm = NormPlacement::PreLN;
    c.tiedEmbeddings = true;
    return c;
}

} // namespace

class TestMemoryFit : public QObject {
    Q_OBJECT

private slots:
    void theNeedIsWorkedOutByHand()
    {
        // random-model-like sizes: L 2, H 2, D 8, F 32, V 100, C 16, learned positions, tied.
        ModelConfig c;
        c.layers = 2;
        c.heads = 2;
        c.dModel = 8;
        c.dHead = 4;
        c.dFF = 32;
        c.vocabSize = 100;
        c.contextLength = 16;
        c.positional = PositionalKind::Learned;
        c.activation = Activation::GeluTanh;
        c.tiedEmbeddings = true;
        // Parameters: 100*8 + 16*8 + 2 * (2*64 + 2*8*8 + 2*8*32) = 800 + 128 + 2*768 = 2464.
        QCOMPARE(c.parameterCount(), 2464.0);
        // As float32, plus the packed copy of the layers (2 * 768 floats).
        QCOMPARE(float32WeightBytes(c), 4.0 * 2464 + 4.0 * 1536);
        // A pass of 16 tokens: 2*2*16*16 attention weights, a workspace of 16*(5*8 + 32), 100 logits.
        const MemoryNeed need = memoryNeed(c, 1000.0);
        QCOMPARE(need.weightBytes, 1000.0);
        QCOMPARE(need.passBytes, 4.0 * (1024 + 1152 + 100));
    }

    void aFolderThatDoesNotFitIsRefusedWithBothNumbers()
    {
        QTemporaryDir tmp;
        const std::string folder = tinygpt2::writeFolder(tmp, "tiny", tinygpt2::tinyTensors(3));
        {
            const MemoryLimit small("1000000");  // 1 MB; the tiny model's weights are 1.7 MB
            const Result<ModelPtr> refused = loadModelFolder(folder);
            QVERIFY(!refused);
            const QString error = QString::fromStdString(refused.error());
            QVERIFY2(error.contains(QStringLiteral("needs about 2 MB")), qPrintable(error));
            QVERIFY2(error.contains(QStringLiteral("can give it 1 MB (ATTNSCOPE_MEMORY_AVAILABLE)")), qPrintable(error));
            QVERIFY2(!error.contains(QLatin1Char('\n')), "one sentence");
        }
        const MemoryLimit enough("100000000");
        QVERIFY(loadModelFolder(folder));
    }

    void aRandomModelIsCheckedToo()
    {
        const MemoryLimit small("100000");
        const Result<ModelPtr> refused = loadModel("random:layers=2,heads=2,d_model=64,seed=1");
        QVERIFY(!refused);
        QVERIFY2(QString::fromStdString(refused.error()).contains(QStringLiteral("can give it")), refused.error().c_str());
    }

    // The old fixed cap (2,000 million parameters) refused this model outright; a 16 GB laptop with 12 GB
    // free holds its 6.4 GB of BF16 weights, mapped, and a pass of 1,024 tokens.
    void aThreeBillionParameterLlamaFitsALaptopButNotASmallMachine()
    {
        const ModelConfig c = llama3b();
        QVERIFY2(c.validate().ok(), c.validate().error().c_str());
        QVERIFY(c.parameterCount() > 3.2e9 && c.parameterCount() < 3.3e9);
        const MemoryNeed need = memoryNeed(c, 2.0 * c.parameterCount());  // BF16, as the files hold it
        {
            const MemoryLimit laptop("12000000000");
            QVERIFY(checkMemoryFits(need, "Llama 3.2 3B").ok());
        }
        const MemoryLimit small("4000000000");
        const Status refused = checkMemoryFits(need, "Llama 3.2 3B");
        QVERIFY(!refused.ok());
        QVERIFY2(QString::fromStdString(refused.error()).contains(QStringLiteral("can give it 4.0 GB")), refused.error().c_str());
    }

    void thisMachineSaysHowMuchItHas()
    {
        const std::optional<MemoryAvailable> room = memoryAvailable();
        QVERIFY(room.has_value());  // Linux: /proc/meminfo is always there
        QVERIFY(room->bytes > 0);
        // At most the machine's whole memory.
        std::ifstream meminfo("/proc/meminfo");
        std::string key;
        double totalKb = 0;
        meminfo >> key >> totalKb;
        QCOMPARE(key, std::string("MemTotal:"));
        QVERIFY(room->bytes <= totalKb * 1024.0);
    }
};

QTEST_GUILESS_MAIN(TestMemoryFit)
#include "tst_memoryfit.moc"
