// The forward pass's hot path does not allocate once its workspace is warm.
//
// Eigen's EIGEN_RUNTIME_NO_MALLOC check is an eigen_assert, which a Release build compiles out, so a test
// built on it could never fail here. Instead this executable interposes malloc (glibc lets a program
// define it and forward to __libc_malloc) and counts every call made while counting is on; a control
// row shows the counter does see an allocation.
#include <QtTest>

#include <atomic>
#include <cstdlib>

#include "model/forward.h"

extern "C" void* __libc_malloc(std::size_t size);

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
} // namespace

extern "C" void* malloc(std::size_t size)
{
    if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
    return __libc_malloc(size);
}

using namespace attnscope;

namespace {
template <class F>
long countAllocations(F&& f)
{
    g_allocations = 0;
    g_counting = true;
    f();
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
    QTest::newRow("causal, all heads") << 0 << false << false << 0;
    QTest::newRow("no mask, all heads") << 1 << false << false << 0;
    QTest::newRow("causal, all heads, next-token logits") << 0 << true << false << 0;
    QTest::newRow("causal, all heads, logits and one head's pipeline (what the window asks)") << 0 << true << true << 0;
    QTest::newRow("two heads zero-ablated, logits and pipeline") << 0 << true << true << 1;
    QTest::newRow("two heads mean-ablated, logits and pipeline") << 0 << true << true << 2;
}

void TestNoAlloc::warmedUpForwardDoesNotAllocate()
{
    QFETCH(int, mask);
    QFETCH(bool, logits);
    QFETCH(bool, detail);
    QFETCH(int, ablation);
    ModelPtr model = *loadModel("random:layers=2,heads=4,d_model=64,seed=1");
    const std::vector<int> ids = model->tokenizer->encode("no allocation once the workspace is warm, for a sentence of some length")->ids;
    AttentionSettings s;
    s.mask = MaskKind(mask);
    s.blockedKeys = {3};
    if (ablation > 0) {
        s.ablated = {{0, 1}, {1, 2}};
        s.ablationMode = ablation == 1 ? AblationMode::Zero : AblationMode::Mean;
    }
    CaptureRequest capture;
    capture.nextTokenLogits = logits;
    if (detail) capture.detail = HeadSelection{1, 2};
    ForwardTrace trace;
    Workspace ws;
    QVERIFY(forward(*model, ids, s, capture, trace, ws).ok());  // warm-up sizes everything
    Status again;
    const long n = countAllocations([&] { again = forward(*model, ids, s, capture, trace, ws); });
    QVERIFY(again.ok());
    QVERIFY2(n == 0, qPrintable(QString("the warmed-up forward allocated %1 times").arg(n)));
}

QTEST_APPLESS_MAIN(TestNoAlloc)
#include "tst_noalloc.moc"
