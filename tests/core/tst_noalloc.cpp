// The forward pass's hot path does not allocate once its workspace is warm.
//
// Eigen's EIGEN_RUNTIME_NO_MALLOC check is an eigen_assert, which a Release build compiles out, so a test
// built on it could never fail here. Instead this executable interposes malloc (glibc lets a program
// define it and forward to __libc_malloc) and counts every call made while counting is on; a control
// row shows the counter does see an allocation. Under AddressSanitizer, which owns malloc, the same
// counter is fed by the sanitizer's allocation hook instead (interposing would hand ASan foreign blocks).
#include <QtTest>

#include <atomic>
#include <cstdlib>

#include "core/compute/threadpool.h"
#include "core/model/forward.h"
#include "tinybert.h"
#include "tinyllama.h"
#include "core/open/openmodel.h"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
void noteAllocation()
{
    if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
}
} // namespace

#if defined(__SANITIZE_ADDRESS__)
// ASan calls this weak hook on every allocation when a program defines it.
extern "C" void __sanitizer_malloc_hook(const volatile void*, std::size_t) { noteAllocation(); }
#else
extern "C" void* __libc_malloc(std::size_t size);

extern "C" void* malloc(std::size_t size)
{
    noteAllocation();
    return __libc_malloc(size);
}
#endif

using namespace attnscope;

namespace {
template <class F>
long countAllocations(F&& f)
{
    g_allocations = 0;
    g_counting = true;
    // The compiler knows malloc and operator new touch none of the program's memory, so without a barrier
    // it may move the two stores across the allocation (it did, in the ASan build).
    std::atomic_signal_fence(std::memory_order_seq_cst);
    f();
    std::atomic_signal_fence(std::memory_order_seq_cst);
    g_counting = false;
    return g_allocations.load();
}
} // namespace

class TestNoAlloc : public QObject {
    Q_OBJECT
private slots:
    void counterSeesAnAllocation();
    void warmedUpForwardDoesNotAllocate_data();
    void warmedUpForwardDoesNotAllocate();
    void warmedUpStoredLlamaForwardDoesNotAllocate();
};

void TestNoAlloc::counterSeesAnAllocation()
{
    Matrix* sink = nullptr;
    const long n = countAllocations([&] { sink = new Matrix(64, 64); });
    delete sink;
    QVERIFY2(n >= 1, "the malloc counter saw nothing: the probe is broken, so the next test would prove nothing");
}

void TestNoAlloc::warmedUpForwardDoesNotAllocate_data()
{
    QTest::addColumn<int>("mask");
    QTest::addColumn<bool>("logits");
    QTest::addColumn<bool>("detail");
    QTest::addColumn<int>("ablation");  // 0 none, 1 zero, 2 mean
    QTest::addColumn<bool>("encoder");
    QTest::addColumn<int>("threads");  // the pool's size, the caller included: 3 is more than CI's cores
    QTest::addColumn<int>("tokens");   // 0: the sentence below; otherwise that many tokens
    // 0 no overviews; 1 one head kept, every head's overview made in the pass; 2 the same, value-weighted;
    // 3 overviews made in the pass with every head and the focused head's pipeline kept
    QTest::addColumn<int>("overview");
    QTest::newRow("causal, all heads") << 0 << false << false << 0 << false << 3 << 0 << 0;
    QTest::newRow("causal, all heads, one thread") << 0 << false << false << 0 << false << 1 << 0 << 0;
    QTest::newRow("no mask, all heads") << 1 << false << false << 0 << false << 3 << 0 << 0;
    QTest::newRow("causal, all heads, next-token logits") << 0 << true << false << 0 << false << 3 << 0 << 0;
    QTest::newRow("causal, all heads, logits and one head's pipeline (what the window asks)") << 0 << true << true << 0 << false << 3 << 0 << 0;
    QTest::newRow("two heads zero-ablated, logits and pipeline") << 0 << true << true << 1 << false << 3 << 0 << 0;
    QTest::newRow("two heads mean-ablated, logits and pipeline") << 0 << true << true << 2 << false << 3 << 0 << 0;
    // Post-LN blocks, GELU-erf, segment embedding, embedding layer norm and the final hidden states.
    QTest::newRow("BERT, no mask, final hidden states and one head's pipeline") << 1 << false << true << 0 << true << 3 << 0 << 0;
    // Past the rows the norms and the softmax keep their statistics for on the stack (2,048).
    QTest::newRow("causal, 2,100 tokens, logits and one head's pipeline") << 0 << true << true << 0 << false << 3 << 2100 << 0;
    QTest::newRow("causal, 600 tokens") << 0 << false << false << 0 << false << 3 << 600 << 0;
    QTest::newRow("no mask, 600 tokens") << 1 << false << false << 0 << false << 3 << 600 << 0;
    // mask 2: sinks:2,window:50, whose row blocks take a band of keys and the sinks apart.
    QTest::newRow("sinks 2 + window 50, 600 tokens") << 2 << true << false << 0 << false << 2 << 600 << 0;
    QTest::newRow("4 random keys, 600 tokens, logits") << 3 << true << false << 0 << false << 2 << 600 << 0;
    QTest::newRow("global 0, 300 + window 20, two-sided, 600 tokens, pipeline") << 4 << false << true << 0 << false << 2 << 600 << 0;
    QTest::newRow("dilated 8 keys 3 apart, 600 tokens, one head kept and every head's overview") << 5 << true << true << 0 << false << 2 << 600 << 1;
    QTest::newRow("no mask, 2,100 tokens, one thread") << 1 << false << false << 0 << false << 1 << 2100 << 0;
    // A long text's pass (CaptureRequest::onlyDetailWeights): blocks of rows folded into every head's overview.
    QTest::newRow("causal, 600 tokens, one head kept and every head's overview") << 0 << true << true << 0 << false << 3 << 600 << 1;
    QTest::newRow("sinks 2 + window 50, 600 tokens, one head kept, value-weighted overviews") << 2 << true << true << 0 << false << 2 << 600 << 2;
    QTest::newRow("no mask, 2,100 tokens, one head kept and every head's overview") << 1 << false << true << 0 << false << 3 << 2100 << 1;
    // Any thread may run the focused head whole one pass and a summarised head the next.
    QTest::newRow("causal, 600 tokens, overviews with every head and the pipeline kept") << 0 << true << true << 0 << false << 3 << 600 << 3;
}

void TestNoAlloc::warmedUpForwardDoesNotAllocate()
{
    QFETCH(int, mask);
    QFETCH(bool, logits);
    QFETCH(bool, detail);
    QFETCH(int, ablation);
    QFETCH(bool, encoder);
    QFETCH(int, threads);
    QFETCH(int, tokens);
    QFETCH(int, overview);
    ThreadPool::shared().setThreads(threads);
    ThreadPool::shared().setMinSharedMultiplyAdds(0.0);  // the tiny model's products through the pool too
    QTemporaryDir tmp;
    ModelPtr model = encoder ? *loadModel(tinybert::writeFolder(tmp, "bert", tinybert::Family::Bert))
                             : *loadModel(tokens > 0 ? "random:layers=1,heads=2,d_model=128,context=4096,seed=1"
                                                     : "random:layers=2,heads=4,d_model=64,seed=1");
    // The tiny BERT's context is 32 tokens and its vocabulary spells most words letter by letter. The
    // random model's sentence is longer than one block of the causal pass (64 rows).
    std::vector<int> ids = model->tokenizer->encode(encoder ? "the quick brown fox sat on the [MASK] mat, the dog ran"
                                                            : "no allocation once the workspace is warm, for a sentence of some length")->ids;
    if (tokens > 0) {
        const std::vector<int> sentence = ids;
        ids.clear();
        for (int i = 0; i < tokens; ++i) ids.push_back(sentence[std::size_t(i) % sentence.size()]);
    }
    AttentionSettings s;
    // masks 3 to 5: sparse patterns, whose masks are set a row at a time in each path (random draws its keys
    // with no storage); 4 is two-sided.
    const char* const patterns[] = {"random:4,9", "global:0,300;window:20", "dilated:8,3"};
    if (mask == 2) applyMask(s, {MaskKind::Causal, 50, 2, {}});
    else if (mask >= 3) applyMask(s, *parseMaskSetting(patterns[mask - 3]));
    else s.mask = MaskKind(mask);
    if (mask == 4) s.mask = MaskKind::None;
    s.blockedKeys = {3};
    if (ablation > 0) {
        s.ablated = {{0, 1}, {1, 2}};
        s.ablationMode = ablation == 1 ? AblationMode::Zero : AblationMode::Mean;
    }
    CaptureRequest capture;
    capture.nextTokenLogits = logits;
    capture.finalHidden = encoder;
    if (detail) capture.detail = tokens > 0 ? HeadSelection{0, 1} : HeadSelection{1, encoder ? 1 : 2};
    if (overview > 0) {
        capture.overviewCells = 256;
        capture.onlyDetailWeights = overview != 3;
        capture.valueNorms = capture.overviewValueWeighted = overview == 2;
    }
    ForwardTrace trace;
    Workspace ws;
    QVERIFY(forward(*model, ids, s, capture, trace, ws).ok());  // warm-up sizes everything
    QCOMPARE(trace.hasOverviews, overview > 0);
    Status again;
    const long n = countAllocations([&] { again = forward(*model, ids, s, capture, trace, ws); });
    QVERIFY(again.ok());
    QVERIFY2(n == 0, qPrintable(QString("the warmed-up forward allocated %1 times").arg(n)));
}

// A Llama-family model keeps BF16 weights mapped and converts a layer at a time into the workspace; with
// rotary positions, grouped-query heads, SwiGLU, the chunked unembedding and one head's pipeline, a warm
// forward still touches no heap.
void TestNoAlloc::warmedUpStoredLlamaForwardDoesNotAllocate()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    tinyllama::Spec spec;
    spec.dtype = DType::BF16;
    Result<ModelPtr> model = loadModel(tinyllama::writeFolder(tmp, "bf16", spec));
    QVERIFY2(model, model.error().c_str());
    QVERIFY((*model)->weights.stored != nullptr);
    const std::vector<int> ids = (*model)->tokenizer->encode("no allocation once the workspace is warm, for a llama")->ids;
    ThreadPool::shared().setThreads(3);
    CaptureRequest capture;
    capture.nextTokenLogits = true;
    capture.detail = HeadSelection{1, 3};
    ForwardTrace trace;
    Workspace ws;
    QVERIFY(forward(**model, ids, {}, capture, trace, ws).ok());
    Status again;
    const long n = countAllocations([&] { again = forward(**model, ids, {}, capture, trace, ws); });
    QVERIFY(again.ok());
    QVERIFY2(n == 0, qPrintable(QString("the warmed-up forward allocated %1 times").arg(n)));
}

QTEST_APPLESS_MAIN(TestNoAlloc)
#include "tst_noalloc.moc"
