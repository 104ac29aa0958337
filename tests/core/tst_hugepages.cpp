// The background move onto 2 MB pages. Off, nothing is queued. On, packed weights and a model's token
// embedding are queued and handled, the memory then really is on huge pages (the kernel's own account in
// /proc/self/smaps) and still holds the same numbers, and ranges whose owner has gone or that hold no whole
// 2 MB page are skipped, never touched.
#include <QtTest>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "core/compute/hugepages.h"
#include "core/compute/packedproduct.h"
#include "core/model/randommodel.h"
#include "numericcheck.h"
#include "randommatrix.h"

using namespace attnscope;
using attnscope::test::randomMatrix;

namespace {

// The kernel's count of huge-page memory in the mapping that holds p, in kB; -1 when no mapping holds it
// or the file cannot be read.
long anonHugeKb(const void* p)
{
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    std::ifstream smaps("/proc/self/smaps");
    std::string line;
    bool inside = false;
    while (std::getline(smaps, line)) {
        std::uintptr_t begin = 0, end = 0;
        char dash = 0;
        std::istringstream head(line);
        if (head >> std::hex >> begin >> dash >> end && dash == '-') {
            inside = begin <= at && at < end;
            continue;
        }
        if (inside && line.rfind("AnonHugePages:", 0) == 0) return std::stol(line.substr(14));
    }
    return -1;
}

HugePageCounts since(const HugePageCounts& before)
{
    const HugePageCounts now = hugePageCounts();
    HugePageCounts d;
    d.ranges = now.ranges - before.ranges;
    d.collapsed = now.collapsed - before.collapsed;
    d.refused = now.refused - before.refused;
    d.skipped = now.skipped - before.skipped;
    d.collapsedBytes = now.collapsedBytes - before.collapsedBytes;
    return d;
}

} // namespace

class TestHugePages : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { setHugePageCollapse(true); }  // off by default; the command-line tool turns it on

    void nothingIsQueuedWhileOff()
    {
        waitForHugePages();
        setHugePageCollapse(false);
        const HugePageCounts before = hugePageCounts();
        const Eigen::MatrixXf w = randomMatrix(1024, 1024, 5);
        const PackedWeights packed(w);
        waitForHugePages();
        setHugePageCollapse(true);
        QCOMPARE(since(before).ranges, 0L);
    }

    void packedWeightsMoveOntoHugePagesAndKeepTheirNumbers()
    {
        waitForHugePages();
        const HugePageCounts before = hugePageCounts();
        const Eigen::MatrixXf w = randomMatrix(1024, 1024, 3);  // 4 MB packed: two whole 2 MB pages
        const PackedWeights packed(w);
        waitForHugePages();
        const HugePageCounts d = since(before);
        QCOMPARE(d.ranges, 1L);
        QCOMPARE(d.skipped, 0L);
        QCOMPARE(d.collapsed + d.refused, 1L);

        // Whatever the system did, the product reads the same numbers.
        const Eigen::MatrixXf x = randomMatrix(20, 1024, 4);
        PackedRows rows;
        rows.reserve(x);
        for (Eigen::Index b = 0; b < PackedRows::depthBlocks(x.cols()); ++b) rows.packBlock(x, b);
        Eigen::MatrixXf out = Eigen::MatrixXf::Zero(20, 1024);
        multiplyPacked(rows, packed, 0, 1024, out);
        const numericcheck::Worst worst = numericcheck::difference(out, x.cast<double>() * w.cast<double>());
        QVERIFY2(worst.within(1e-3), worst.message("product").c_str());

        if (d.refused == 1) QSKIP("this system refused to collapse memory into 2 MB pages (huge pages off or none free)");
        QCOMPARE(d.collapsedBytes, std::size_t(4) << 20);
        const long kb = anonHugeKb(packed.data());
        QVERIFY2(kb >= 4096, qPrintable(QString("the packed weights' mapping has %1 kB on huge pages").arg(kb)));
    }

    void goneOwnersAndSmallRangesAreSkipped()
    {
        waitForHugePages();
        const HugePageCounts before = hugePageCounts();
        std::weak_ptr<const void> gone;
        {
            auto owner = std::make_shared<int>(1);
            gone = owner;
        }
        // Never dereferenced nor passed to the system: its owner is gone. Were it passed, the system would
        // refuse an address nothing is mapped at, and the counts below would say so.
        collapseToHugePagesLater(gone, reinterpret_cast<const void*>(std::uintptr_t(64) << 20), std::size_t(8) << 20);
        const auto owner = std::make_shared<std::vector<char>>(std::size_t(1) << 20);
        collapseToHugePagesLater(owner, owner->data(), owner->size());  // 1 MB: no whole 2 MB page inside
        waitForHugePages();
        const HugePageCounts d = since(before);
        QCOMPARE(d.ranges, 2L);
        QCOMPARE(d.skipped, 2L);
        QCOMPARE(d.collapsed + d.refused, 0L);
    }

    void finalisedModelQueuesItsTokenEmbedding()
    {
        waitForHugePages();
        const HugePageCounts before = hugePageCounts();
        // 8,192 x 128 floats: a 4 MB embedding; the layers are under 2 MB each, so only it is queued.
        Result<ModelPtr> made = makeRandomModel(RandomModelSpec{2, 4, 128, 0, 8192, 256, 9});
        QVERIFY(made.hasValue());
        const Eigen::MatrixXf copy = (*made)->weights.tokenEmbedding;
        waitForHugePages();
        const HugePageCounts d = since(before);
        QCOMPARE(d.ranges, 1L);
        QCOMPARE(d.collapsed + d.refused, 1L);
        QVERIFY((*made)->weights.tokenEmbedding == copy);
        if (d.refused == 1) QSKIP("this system refused to collapse memory into 2 MB pages (huge pages off or none free)");
        const long kb = anonHugeKb((*made)->weights.tokenEmbedding.data() + (std::size_t(2) << 20) / sizeof(float));
        QVERIFY2(kb >= 2048, qPrintable(QString("the embedding's mapping has %1 kB on huge pages").arg(kb)));
    }
};

QTEST_APPLESS_MAIN(TestHugePages)
#include "tst_hugepages.moc"
