// The data exports against the forward pass: every file is parsed back here with readers written for the
// test (an .npy header parser, a zip walker with its own CRC-32, an RFC 4180 CSV splitter) and its numbers
// must equal the forward's bit for bit; statistics are recomputed with plain loops.
//
// Dimension letters: L layers, H heads, T tokens, D d_model, Dh d_head.
#include <QTest>

#include <cmath>
#include <cstring>
#include <map>

#include <nlohmann/json.hpp>

#include "core/dataexport/dataexport.h"
#include "npyreader.h"
#include "numericcheck.h"
#include "core/model/forward.h"
#include "core/model/model.h"
#include "core/open/openmodel.h"

using namespace attnscope;
using npytest::Npy;
using npytest::readNpy;

namespace {

const char* kSpec = "random:layers=2,heads=3,d_model=24,seed=5";
// Punctuation becomes tokens of its own, so the CSV must quote the comma and the quote mark.
const char* kText = "the cat, \"said\" the dog";

struct Fixture {
    ModelPtr model;
    TokenizedText tokens;
    AttentionSettings settings;
};

Fixture fixture()
{
    Fixture f;
    f.model = *loadModel(kSpec);
    f.tokens = *f.model->tokenizer->encode(kText);
    f.settings.temperature = 0.8;
    f.settings.blockedKeys = {2};
    return f;
}

std::string exported(const Fixture& f, DataKind what, DataFormat format, std::optional<HeadSelection> head = std::nullopt)
{
    Result<std::string> bytes = exportData(*f.model, f.tokens, f.settings, {what, format, head, {}});
    if (!bytes) qFatal("%s", bytes.error().c_str());
    return *bytes;
}

// ---- a zip walker of our own ----

std::uint32_t crcBitwise(const std::string& s)
{
    std::uint32_t c = 0xFFFFFFFFu;
    for (unsigned char byte : s) {
        c ^= byte;
        for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
}

std::uint32_t u32(const std::string& s, std::size_t at)
{
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= std::uint32_t(static_cast<unsigned char>(s[at + i])) << (8 * i);
    return v;
}
std::uint16_t u16(const std::string& s, std::size_t at)
{
    return std::uint16_t(static_cast<unsigned char>(s[at]) | (static_cast<unsigned char>(s[at + 1]) << 8));
}

// name -> member bytes; fails the test on a malformed archive.
std::map<std::string, std::string> readZip(const std::string& zip)
{
    std::map<std::string, std::string> members;
    std::size_t at = 0;
    while (at + 4 <= zip.size() && u32(zip, at) == 0x04034b50u) {
        const std::uint16_t method = u16(zip, at + 8);
        const std::uint32_t crc = u32(zip, at + 14), size = u32(zip, at + 18), stored = u32(zip, at + 22);
        const std::uint16_t nameLength = u16(zip, at + 26), extra = u16(zip, at + 28);
        const std::string name = zip.substr(at + 30, nameLength);
        const std::string data = zip.substr(at + 30 + nameLength + extra, size);
        if (method != 0 || size != stored || crcBitwise(data) != crc) qFatal("bad zip member %s", name.c_str());
        members[name] = data;
        at += 30 + nameLength + extra + size;
    }
    // The end record counts the central directory's entries.
    const std::size_t end = zip.rfind(std::string("\x50\x4b\x05\x06", 4));
    if (end == std::string::npos || u16(zip, end + 10) != members.size()) qFatal("bad zip directory");
    return members;
}

// ---- an RFC 4180 splitter of our own ----

std::vector<std::vector<std::string>> readCsv(const std::string& text)
{
    std::vector<std::vector<std::string>> rows(1, std::vector<std::string>(1));
    bool quoted = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') rows.back().back() += '"', ++i;
            else if (c == '"') quoted = false;
            else rows.back().back() += c;
        } else if (c == '"') quoted = true;
        else if (c == ',') rows.back().emplace_back();
        else if (c == '\n') rows.emplace_back(1);
        else rows.back().back() += c;
    }
    if (rows.back().size() == 1 && rows.back()[0].empty()) rows.pop_back();
    return rows;
}

float parseFloat(const std::string& s)
{
    if (s == "-inf") return -std::numeric_limits<float>::infinity();
    return std::strtof(s.c_str(), nullptr);
}

ForwardTrace run(const Fixture& f, std::optional<HeadSelection> detail = std::nullopt)
{
    CaptureRequest c;
    c.detail = detail;
    return *forward(*f.model, f.tokens.ids, f.settings, c);
}

} // namespace

class TestDataExport : public QObject {
    Q_OBJECT
private slots:
    void attentionOfEveryHeadIsAnLhttArrayEqualToTheForward()
    {
        const Fixture f = fixture();
        const Npy n = readNpy(exported(f, DataKind::Attention, DataFormat::Npy));
        QVERIFY2(n.error.empty(), n.error.c_str());
        QCOMPARE(n.descr, std::string("<f4"));
        QVERIFY(!n.fortran);
        const std::size_t L = 2, H = 3, T = f.tokens.ids.size();
        QCOMPARE(n.shape, (std::vector<std::size_t>{L, H, T, T}));
        const ForwardTrace t = run(f);
        std::size_t mismatches = 0;
        for (std::size_t l = 0; l < L; ++l)
            for (std::size_t h = 0; h < H; ++h)
                for (std::size_t q = 0; q < T; ++q)
                    for (std::size_t k = 0; k < T; ++k)
                        mismatches += n.values[((l * H + h) * T + q) * T + k] != t.weights(int(l), int(h))(Eigen::Index(q), Eigen::Index(k));
        QCOMPARE(mismatches, std::size_t(0));
        // The blocked key and the causal triangle are exactly 0 in the file too.
        QCOMPARE(n.values[(0 * T + 3) * T + 2], 0.0f);
        QCOMPARE(n.values[(0 * T + 0) * T + 1], 0.0f);
    }

    void oneHeadIsATtArray()
    {
        const Fixture f = fixture();
        const HeadSelection head{1, 2};
        const Npy n = readNpy(exported(f, DataKind::Attention, DataFormat::Npy, head));
        const std::size_t T = f.tokens.ids.size();
        QCOMPARE(n.shape, (std::vector<std::size_t>{T, T}));
        const ForwardTrace t = run(f);  // kept alive: weights() is a reference into the trace
        const Matrix& w = t.weights(1, 2);
        for (std::size_t q = 0; q < T; ++q)
            for (std::size_t k = 0; k < T; ++k) QCOMPARE(n.values[q * T + k], w(Eigen::Index(q), Eigen::Index(k)));
    }

    void scoresAreTheRawDotProductsOfEachHead()
    {
        const Fixture f = fixture();
        const Npy n = readNpy(exported(f, DataKind::Scores, DataFormat::Npy));
        const std::size_t T = f.tokens.ids.size();
        QCOMPARE(n.shape, (std::vector<std::size_t>{2, 3, T, T}));
        for (int l = 0; l < 2; ++l)
            for (int h = 0; h < 3; ++h) {
                const ForwardTrace t = run(f, HeadSelection{l, h});
                // q k^T recomputed here from the trace's q and k, in double.
                numericcheck::Worst worst;
                worst.label("L%d H%d", l, h);
                for (std::size_t q = 0; q < T; ++q)
                    for (std::size_t k = 0; k < T; ++k) {
                        double dot = 0.0;
                        for (Eigen::Index d = 0; d < t.detail.q.cols(); ++d)
                            dot += double(t.detail.q(Eigen::Index(q), d)) * t.detail.k(Eigen::Index(k), d);
                        worst.add(n.values[((std::size_t(l) * 3 + std::size_t(h)) * T + q) * T + k], dot, long(q), long(k));
                    }
                QVERIFY2(worst.within(1e-4), worst.message("exported scores").c_str());
            }
        const nlohmann::json j = nlohmann::json::parse(exported(f, DataKind::Scores, DataFormat::Json));
        QCOMPARE(j["multiplier"].get<double>(), f.settings.multiplier(f.model->config.dHead));
    }

    void statsAreEntropyAndLargestWeightPerRow()
    {
        const Fixture f = fixture();
        const std::map<std::string, std::string> zip = readZip(exported(f, DataKind::Stats, DataFormat::Npy));
        QCOMPARE(zip.size(), std::size_t(2));
        const Npy entropy = readNpy(zip.at("entropy.npy")), peak = readNpy(zip.at("max_weight.npy"));
        const std::size_t T = f.tokens.ids.size();
        QCOMPARE(entropy.shape, (std::vector<std::size_t>{2, 3, T}));
        const ForwardTrace t = run(f);
        numericcheck::Worst worst;
        for (int l = 0; l < 2; ++l)
            for (int h = 0; h < 3; ++h)
                for (std::size_t q = 0; q < T; ++q) {
                    double e = 0.0, m = 0.0;
                    for (std::size_t k = 0; k < T; ++k) {
                        const double p = t.weights(l, h)(Eigen::Index(q), Eigen::Index(k));
                        if (p > 0) e -= p * std::log(p);
                        m = std::max(m, p);
                    }
                    const std::size_t at = (std::size_t(l) * 3 + std::size_t(h)) * T + q;
                    worst.label("L%d H%d entropy of row", l, h);
                    worst.add(entropy.values[at], e, long(q));
                    worst.label("L%d H%d max weight of row", l, h);
                    worst.add(peak.values[at], m, long(q));
                }
        QVERIFY2(worst.within(1e-5), worst.message("exported stats").c_str());
    }

    void weightsAreTheHeadsSlicesOfTheProjections()
    {
        const Fixture f = fixture();
        const std::map<std::string, std::string> zip = readZip(exported(f, DataKind::Weights, DataFormat::Npy, HeadSelection{1, 2}));
        QCOMPARE(zip.size(), std::size_t(7));
        const std::size_t D = 24, Dh = 8;
        const Npy wq = readNpy(zip.at("w_q.npy")), wo = readNpy(zip.at("w_o.npy")), bv = readNpy(zip.at("b_v.npy"));
        QCOMPARE(wq.shape, (std::vector<std::size_t>{D, Dh}));
        QCOMPARE(wo.shape, (std::vector<std::size_t>{Dh, D}));
        QCOMPARE(bv.shape, (std::vector<std::size_t>{Dh}));
        const LayerWeights& w = f.model->weights.layers[1];
        for (std::size_t i = 0; i < D; ++i)
            for (std::size_t j = 0; j < Dh; ++j) {
                QCOMPARE(wq.values[i * Dh + j], w.wq(Eigen::Index(i), Eigen::Index(2 * Dh + j)));
                QCOMPARE(wo.values[j * D + i], w.wo(Eigen::Index(2 * Dh + j), Eigen::Index(i)));
            }
        for (std::size_t j = 0; j < Dh; ++j) QCOMPARE(bv.values[j], w.bv(Eigen::Index(2 * Dh + j)));
        // Every head: a leading (L, H).
        const std::map<std::string, std::string> all = readZip(exported(f, DataKind::Weights, DataFormat::Npy));
        QCOMPARE(readNpy(all.at("w_k.npy")).shape, (std::vector<std::size_t>{2, 3, D, Dh}));
    }

    void theTraceKeepsMaskedScoresAsMinusInfinity()
    {
        const Fixture f = fixture();
        const std::map<std::string, std::string> zip = readZip(exported(f, DataKind::Trace, DataFormat::Npy, HeadSelection{0, 1}));
        QCOMPARE(zip.size(), std::size_t(11));
        const Npy masked = readNpy(zip.at("masked.npy")), weights = readNpy(zip.at("weights.npy"));
        const std::size_t T = f.tokens.ids.size();
        QVERIFY(std::isinf(masked.values[0 * T + 1]) && masked.values[0 * T + 1] < 0);  // the causal triangle
        QVERIFY(std::isinf(masked.values[4 * T + 2]));                                   // the blocked key
        const ForwardTrace t = run(f, HeadSelection{0, 1});
        for (std::size_t q = 0; q < T; ++q)
            for (std::size_t k = 0; k < T; ++k) QCOMPARE(weights.values[q * T + k], t.detail.weights(Eigen::Index(q), Eigen::Index(k)));
        QVERIFY(!exportData(*f.model, f.tokens, f.settings, {DataKind::Trace, DataFormat::Json, std::nullopt, {}}).hasValue());
    }

    void csvHasKeyTokensAcrossAndQueryTokensDown()
    {
        const Fixture f = fixture();
        const auto rows = readCsv(exported(f, DataKind::Attention, DataFormat::Csv, HeadSelection{1, 0}));
        const std::size_t T = f.tokens.ids.size();
        QCOMPARE(rows.size(), T + 1);
        QCOMPARE(rows[0][0], std::string("query"));
        for (std::size_t k = 0; k < T; ++k) QCOMPARE(rows[0][k + 1], f.tokens.tokens[k]);  // "," and "\"" survive quoting
        const ForwardTrace t = run(f);  // kept alive: weights() is a reference into the trace
        const Matrix& w = t.weights(1, 0);
        for (std::size_t q = 0; q < T; ++q) {
            QCOMPARE(rows[q + 1][0], f.tokens.tokens[q]);
            for (std::size_t k = 0; k < T; ++k) QCOMPARE(parseFloat(rows[q + 1][k + 1]), w(Eigen::Index(q), Eigen::Index(k)));
        }
        // Every head: layer and head columns first, one block of T rows per head.
        const auto all = readCsv(exported(f, DataKind::Attention, DataFormat::Csv));
        QCOMPARE(all.size(), 2 * 3 * T + 1);
        QCOMPARE(all[0][0] + "," + all[0][1] + "," + all[0][2], std::string("layer,head,query"));
        QCOMPARE(all[T * 4 + 1][0] + "," + all[T * 4 + 1][1], std::string("1,1"));
    }

    void jsonCarriesTheContextAndTheSameNumbers()
    {
        const Fixture f = fixture();
        const nlohmann::json j = nlohmann::json::parse(exported(f, DataKind::Attention, DataFormat::Json));
        QCOMPARE(j["what"].get<std::string>(), std::string("attention"));
        QCOMPARE(j["tokens"].get<std::vector<std::string>>(), f.tokens.tokens);
        QCOMPARE(j["settings"]["temperature"].get<double>(), 0.8);
        const std::size_t T = f.tokens.ids.size();
        QCOMPARE(j["shape"].get<std::vector<std::size_t>>(), (std::vector<std::size_t>{2, 3, T, T}));
        const ForwardTrace t = run(f);
        for (int l = 0; l < 2; ++l)
            for (int h = 0; h < 3; ++h)
                for (std::size_t q = 0; q < T; ++q)
                    for (std::size_t k = 0; k < T; ++k)
                        QCOMPARE(j["data"][l][h][q][k].get<float>(), t.weights(l, h)(Eigen::Index(q), Eigen::Index(k)));
    }

    void badRequestsAreSentences()
    {
        const Fixture f = fixture();
        const Result<std::string> head = exportData(*f.model, f.tokens, f.settings, {DataKind::Attention, DataFormat::Npy, HeadSelection{5, 0}, {}});
        QVERIFY(!head.hasValue());
        QVERIFY2(QString::fromStdString(head.error()).contains("not in this model"), head.error().c_str());
        const Result<std::string> empty = exportData(*f.model, TokenizedText{}, f.settings, {DataKind::Attention, DataFormat::Csv, std::nullopt, {}});
        QVERIFY(!empty.hasValue());
        QVERIFY(parseDataKind("everything").error().find("attention, scores") != std::string::npos);
        QVERIFY(!parseDataFormat("xlsx").hasValue());
        QCOMPARE(suggestedSuffix(DataKind::Trace, DataFormat::Npy), std::string(".npz"));
        QCOMPARE(suggestedSuffix(DataKind::Scores, DataFormat::Npy), std::string(".npy"));
    }
};

QTEST_APPLESS_MAIN(TestDataExport)
#include "tst_dataexport.moc"
