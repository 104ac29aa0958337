// The safetensors reader and writer: round trips in every dtype, unaligned buffers, the scalar
// conversions, and one row per kind of hostile file.
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <csignal>
#include <cstring>
#include <fstream>

#include <sys/resource.h>

#include "childprocess.h"
#include "core/io/formats/safetensors.h"
#include "numericcheck.h"

using namespace attnscope;

Q_DECLARE_METATYPE(std::string)
Q_DECLARE_METATYPE(attnscope::DType)

namespace {

// 8-byte little-endian length, the header text as given, then `dataBytes` bytes of data.
std::string rawFile(const std::string& header, std::size_t dataBytes, std::uint64_t declaredLength = UINT64_MAX)
{
    const std::uint64_t length = declaredLength == UINT64_MAX ? header.size() : declaredLength;
    std::string bytes(8, '\0');
    for (int i = 0; i < 8; ++i) bytes[static_cast<std::size_t>(i)] = static_cast<char>(length >> (8 * i));
    return bytes + header + std::string(dataBytes, '\0');
}

// "1,1,...,1": a shape list of n dimensions of one.
std::string onesList(int n)
{
    std::string s = "1";
    for (int i = 1; i < n; ++i) s += ",1";
    return s;
}

void writeBytes(const std::string& path, const std::string& bytes)
{
    std::ofstream out(path, std::ios::binary);
    out << bytes;
}

} // namespace

class TestSafetensors : public QObject {
    Q_OBJECT
private slots:
    void scalarConversions()
    {
        QCOMPARE(halfToFloat(0x3C00), 1.0f);
        QCOMPARE(halfToFloat(0xC000), -2.0f);
        QCOMPARE(halfToFloat(0x7BFF), 65504.0f);
        QCOMPARE(halfToFloat(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
        QVERIFY(std::isinf(halfToFloat(0x7C00)));
        QVERIFY(std::isnan(halfToFloat(0x7E00)));
        QCOMPARE(floatToHalf(1.0f), std::uint16_t(0x3C00));
        QCOMPARE(floatToHalf(65504.0f), std::uint16_t(0x7BFF));
        QCOMPARE(floatToHalf(65520.0f), std::uint16_t(0x7C00));          // ties to even: infinity
        QCOMPARE(floatToHalf(std::ldexp(1.0f, -24)), std::uint16_t(0x0001));
        QCOMPARE(floatToHalf(std::ldexp(1.0f, -25)), std::uint16_t(0x0000));  // tie to even: zero
        QCOMPARE(floatToHalf(1.0f + std::ldexp(1.0f, -11)), std::uint16_t(0x3C00));  // tie to even: down
        QCOMPARE(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), std::uint16_t(0x3C02));  // tie to even: up
        QCOMPARE(bfloat16ToFloat(0x3F80), 1.0f);
        QCOMPARE(floatToBfloat16(1.0f), std::uint16_t(0x3F80));
        QVERIFY(std::isnan(bfloat16ToFloat(floatToBfloat16(std::nanf("")))));
        // Every finite half survives half -> float -> half.
        for (std::uint32_t h = 0; h < 0x10000; ++h) {
            const float f = halfToFloat(static_cast<std::uint16_t>(h));
            if (std::isfinite(f)) QCOMPARE(floatToHalf(f), static_cast<std::uint16_t>(h));
        }
    }

    void roundTrip_data()
    {
        QTest::addColumn<DType>("dtype");
        QTest::addColumn<double>("tolerance");  // relative
        QTest::newRow("F32 exact") << DType::F32 << 0.0;
        QTest::newRow("F16 within half precision") << DType::F16 << 1.0 / 1024;
        QTest::newRow("BF16 within bfloat precision") << DType::BF16 << 1.0 / 128;
    }
    void roundTrip()
    {
        QFETCH(DType, dtype);
        QFETCH(double, tolerance);
        QTemporaryDir dir;
        const std::string path = dir.filePath("t.safetensors").toStdString();
        std::vector<NamedTensor> tensors = {{"a", {2, 3}, {1.5f, -2.25f, 3.0f, 0.1f, -0.7f, 100.0f}},
                                            {"b.bias", {4}, {0.0f, 1e-3f, -1e-3f, 42.0f}},
                                            {"empty", {0, 5}, {}}};
        QVERIFY(writeSafetensors(path, tensors, dtype, {{"format", "pt"}}).ok());
        Result<SafetensorsFile> f = SafetensorsFile::open(path);
        QVERIFY2(f, f.error().c_str());
        QCOMPARE(f->tensors().size(), tensors.size());
        QCOMPARE(f->metadata().at("format"), std::string("pt"));
        numericcheck::Worst worst;
        for (const NamedTensor& t : tensors) {
            worst.label("%s", t.name.c_str());
            const TensorInfo* info = f->find(t.name);
            QVERIFY(info);
            QVERIFY(info->dtype == dtype);
            QCOMPARE(info->shape, t.shape);
            const std::vector<float> back = f->readFloats(*info);
            QCOMPARE(back.size(), t.values.size());
            worst.addRelative(back, t.values);
        }
        QVERIFY2(worst.atMost(tolerance), worst.message().c_str());
    }

    void readsUnalignedBuffers()
    {
        // A 3-byte header puts the data at file offset 11: floats must be read without alignment.
        QTemporaryDir dir;
        const std::string path = dir.filePath("odd.safetensors").toStdString();
        const std::string header = R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[1,13]}})";
        std::string bytes = rawFile(header, 13);
        const float values[3] = {1.25f, -3.5f, 7.0f};
        std::memcpy(bytes.data() + 8 + header.size() + 1, values, sizeof values);
        writeBytes(path, bytes);
        Result<SafetensorsFile> f = SafetensorsFile::open(path);
        QVERIFY2(f, f.error().c_str());
        QCOMPARE(f->readFloats(*f->find("x")), (std::vector<float>{1.25f, -3.5f, 7.0f}));
    }

    void hostileFiles_data()
    {
        QTest::addColumn<std::string>("bytes");
        QTest::addColumn<std::string>("problem");
        const std::string ok = R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
        QTest::newRow("empty file") << std::string() << std::string("too short");
        QTest::newRow("truncated inside the length") << std::string("\x10\x00\x00", 3) << std::string("too short");
        QTest::newRow("header length past the end") << rawFile(ok, 8, 4096) << std::string("truncated");
        QTest::newRow("header length over 100 MB") << rawFile(ok, 8, 200'000'000) << std::string("100 MB");
        QTest::newRow("header length near 2^64") << rawFile(ok, 8, UINT64_MAX - 1) << std::string("100 MB");
        QTest::newRow("header not JSON") << rawFile(R"({"x":{"dtype":"F32","shape":[2)", 0) << std::string("not valid JSON");
        QTest::newRow("header not JSON from its first byte") << rawFile("garbage", 0) << std::string("not valid JSON");
        // The reader stops at the first problem: a list where a tensor's object belongs is named before the
        // truncation after it.
        QTest::newRow("header truncated after a first problem") << rawFile("{\"x\": [", 0) << std::string("not described by a JSON object");
        QTest::newRow("header a JSON list") << rawFile("[1,2,3]", 0) << std::string("not a JSON object");
        QTest::newRow("header a list that is not even JSON") << rawFile("[1,2,", 0) << std::string("not a JSON object");
        QTest::newRow("header a string after white space") << rawFile(" \n\t\"x\"", 0) << std::string("not a JSON object");
        QTest::newRow("header nested 65 deep") << rawFile(R"({"__metadata__":)" + std::string(64, '[') + std::string(64, ']') + "}", 0)
                                               << std::string("deeper than 64");
        QTest::newRow("entry not an object") << rawFile(R"({"x": 3})", 0) << std::string("not described by a JSON object");
        QTest::newRow("dtype missing") << rawFile(R"({"x":{"shape":[2],"data_offsets":[0,8]}})", 8) << std::string("no dtype");
        QTest::newRow("dtype not a string") << rawFile(R"({"x":{"dtype":7,"shape":[2],"data_offsets":[0,8]}})", 8) << std::string("no dtype");
        QTest::newRow("shape missing") << rawFile(R"({"x":{"dtype":"F32","data_offsets":[0,8]}})", 8) << std::string("no shape");
        QTest::newRow("shape entry negative") << rawFile(R"({"x":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8) << std::string("shape entry");
        QTest::newRow("shape of 65 dimensions") << rawFile(R"({"x":{"dtype":"F32","shape":[)" + onesList(65) + R"(],"data_offsets":[0,4]}})", 4)
                                                << std::string("more than 64 dimensions");
        QTest::newRow("shape entry a string") << rawFile(R"({"x":{"dtype":"F32","shape":["2"],"data_offsets":[0,8]}})", 8) << std::string("shape entry");
        QTest::newRow("offsets missing") << rawFile(R"({"x":{"dtype":"F32","shape":[2]}})", 8) << std::string("data_offsets");
        QTest::newRow("offsets of three") << rawFile(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,4,8]}})", 8) << std::string("data_offsets");
        QTest::newRow("offsets negative") << rawFile(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[-8,0]}})", 8) << std::string("data_offsets");
        QTest::newRow("offsets past the buffer") << rawFile(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 4) << std::string("outside");
        QTest::newRow("offsets reversed") << rawFile(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", 8) << std::string("outside");
        QTest::newRow("offsets not matching dtype x shape") << rawFile(R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8) << std::string("does not match");
        QTest::newRow("F16 sized as F32") << rawFile(R"({"x":{"dtype":"F16","shape":[2],"data_offsets":[0,8]}})", 8) << std::string("does not match");
        QTest::newRow("shape whose numel overflows") << rawFile(R"({"x":{"dtype":"F32","shape":[4294967296,4294967296,16],"data_offsets":[0,0]}})", 0) << std::string("does not match");
        QTest::newRow("overlapping tensors") << rawFile(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"y":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12) << std::string("overlap");
        QTest::newRow("unsupported dtype I64") << rawFile(R"({"x":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})", 8) << std::string("cannot read");
        QTest::newRow("unknown dtype") << rawFile(R"({"x":{"dtype":"Q4","shape":[1],"data_offsets":[0,8]}})", 8) << std::string("cannot read");
    }
    void hostileFiles()
    {
        QFETCH(std::string, bytes);
        QFETCH(std::string, problem);
        QTemporaryDir dir;
        const std::string path = dir.filePath("model.safetensors").toStdString();
        writeBytes(path, bytes);
        Result<SafetensorsFile> f = SafetensorsFile::open(path);
        QVERIFY(!f);
        QVERIFY2(f.error().find(path) != std::string::npos, f.error().c_str());
        QVERIFY2(f.error().find(problem) != std::string::npos, f.error().c_str());
    }

    void missingFile()
    {
        Result<SafetensorsFile> f = SafetensorsFile::open("/nonexistent/model.safetensors");
        QVERIFY(!f);
        QVERIFY2(f.error().find("cannot open '/nonexistent/model.safetensors'") != std::string::npos, f.error().c_str());
    }

    // Found by fuzz_safetensors (fuzz/regressions/safetensors/empty-tensor): reading a tensor of shape
    // [0, 5] passed a null pointer to memcpy, undefined behaviour that the sanitizer build reports.
    void emptyTensorReadsNothing()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("e.safetensors").toStdString();
        QVERIFY(writeSafetensors(path, {{"empty", {0, 5}, {}}, {"x", {1}, {2.0f}}}).ok());
        Result<SafetensorsFile> f = SafetensorsFile::open(path);
        QVERIFY2(f, f.error().c_str());
        QVERIFY(f->readFloats(*f->find("empty")).empty());
        f->readFloats(*f->find("empty"), nullptr);  // the raw form with no buffer at all
        QCOMPARE(f->readFloats(*f->find("x")), std::vector<float>{2.0f});
    }

    // The writer goes through AtomicFile: a model that cannot be written whole leaves the previous one.
    void failedWriteKeepsThePreviousModel()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("model.safetensors").toStdString();
        QVERIFY(writeSafetensors(path, {{"old", {2}, {1.0f, 2.0f}}}).ok());
        const std::string message = childtest::inChild([&] {
            std::signal(SIGXFSZ, SIG_IGN);  // write() then fails with EFBIG, as a full disk fails with ENOSPC
            const rlimit cap{4096, 4096};
            if (::setrlimit(RLIMIT_FSIZE, &cap) != 0) return std::string("setrlimit failed");
            return writeSafetensors(path, {{"new", {4096}, std::vector<float>(4096, 3.0f)}}).error();
        });
        QVERIFY2(message.find("the previous file is unchanged") != std::string::npos, message.c_str());
        Result<SafetensorsFile> f = SafetensorsFile::open(path);
        QVERIFY2(f, f.error().c_str());
        QVERIFY(f->find("old") && !f->find("new"));
        const Status missing = writeSafetensors(dir.filePath("gone/model.safetensors").toStdString(), {});
        QVERIFY2(missing.error().find("does not exist") != std::string::npos, missing.error().c_str());
    }

    // The dimension limit's edge: 64 ones are a shape of one element, read as such.
    void shapeOf64DimensionsIsRead()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("model.safetensors").toStdString();
        writeBytes(path, rawFile(R"({"x":{"dtype":"F32","shape":[)" + onesList(64) + R"(],"data_offsets":[0,4]}})", 4));
        Result<SafetensorsFile> f = SafetensorsFile::open(path);
        QVERIFY2(f, f.error().c_str());
        QCOMPARE(f->find("x")->shape.size(), std::size_t(64));
        QCOMPARE(f->find("x")->numel(), std::int64_t(1));
    }

    void metadataIsAllowed()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("m.safetensors").toStdString();
        writeBytes(path, rawFile(R"({"__metadata__":{"format":"pt"},"x":{"dtype":"BF16","shape":[1],"data_offsets":[0,2]}})", 2));
        Result<SafetensorsFile> f = SafetensorsFile::open(path);
        QVERIFY2(f, f.error().c_str());
        QCOMPARE(f->tensors().size(), std::size_t(1));
    }
};

QTEST_APPLESS_MAIN(TestSafetensors)
#include "tst_safetensors.moc"
