#pragma once
// The one way the tests compare numbers: the worst difference between what was computed ("got") and what
// it should be ("want"), where any NaN or infinity on either side, or two shapes that differ, makes the
// worst difference +infinity. A check that the worst difference is small then fails on a NaN instead of
// losing it: std::max(0.0, NaN) is 0, and Eigen's maxCoeff() may skip a NaN as well.
//
//     numericcheck::Worst worst;
//     for (int l = 0; l < L; ++l)
//         for (int h = 0; h < H; ++h) {
//             worst.label("layer %d head %d", l, h);
//             worst.add(trace.weights(l, h), ref[l][h]);  // (T, T) against (T, T)
//         }
//     QVERIFY2(worst.within(1e-4), worst.message().c_str());
//
// On failure the message names where: "worst difference 3.1e-05 at layer 1 head 2 (4, 5): got 0.25003,
// want 0.25", "NaN in got at layer 1 head 2 (4, 5)", "shape (3, 4) against (3, 5) at layer 0 head 1".
//
// What can be compared: two numbers; two matrices or vectors of one shape, each an Eigen object (or
// expression), a std::vector<std::vector<T>> of rows, or a flat container of numbers (std::vector, QList);
// or every element of one of those against a single number. Two vectors of one length match whatever
// their orientation (a row vector against a std::vector). Nothing here allocates per element: only an
// Eigen expression is evaluated once into a matrix.
//
// A Worst that compared nothing is not within any tolerance: a loop that ran zero times proves nothing.
#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>

namespace numericcheck {

namespace detail {

// An Eigen dense object or expression: rows(), cols() and, once evaluated, (i, j).
template <class M>
concept Dense = requires(const M& m) {
    m.rows();
    m.cols();
    m.eval();
};

// Rows of numbers: a std::vector<std::vector<double>> and the like.
template <class M>
concept Nested = !Dense<M> && requires(const M& m) {
    m.size();
    m[0].size();
    double(m[0][0]);
};

// A flat container of numbers, compared as a vector.
template <class M>
concept Flat = !Dense<M> && !Nested<M> && requires(const M& m) {
    m.size();
    double(m[0]);
};

template <class M>
concept Comparable = Dense<M> || Nested<M> || Flat<M>;

// Rows and columns; a flat container is one column. A ragged Nested has cols -1, which matches nothing.
template <class M>
void shapeOf(const M& m, long& rows, long& cols)
{
    if constexpr (Dense<M>) {
        rows = long(m.rows());
        cols = long(m.cols());
    } else if constexpr (Nested<M>) {
        rows = long(m.size());
        cols = rows == 0 ? 0 : long(m[0].size());
        for (const auto& row : m)
            if (long(row.size()) != cols) cols = -1;
    } else {
        rows = long(m.size());
        cols = 1;
    }
}

// Element (i, j) of an evaluated object; `linear` for a vector compared by its one index.
template <class M>
double at(const M& m, long i, long j, bool linear, long k)
{
    if constexpr (Dense<M>) {
        if (linear) return double(m.rows() == 1 ? m(0, k) : m(k, 0));
        return double(m(i, j));
    } else if constexpr (Nested<M>) {
        if (linear) return double(m.size() == 1 ? m[0][std::size_t(k)] : m[std::size_t(k)][0]);
        return double(m[std::size_t(i)][std::size_t(j)]);
    } else {
        return double(m[std::size_t(linear ? k : i)]);
    }
}

// An Eigen expression evaluated once (a product has no cheap (i, j)); anything else as it is.
template <class M>
decltype(auto) evaluated(const M& m)
{
    if constexpr (Dense<M>) return m.eval();
    else return (m);
}

} // namespace detail

class Worst {
public:
    // Names the part that the next comparisons belong to ("layer 1 head 2", "step 3"), printf's way; kept
    // until named again and shown in the message. Long labels are cut.
    [[gnu::format(printf, 2, 3)]] void label(const char* format, ...)
    {
        va_list args;
        va_start(args, format);
        std::vsnprintf(m_label, sizeof m_label, format, args);
        va_end(args);
    }

    // From here on the same infinity on both sides is a difference of 0: a masked score is -inf both in the
    // engine's matrix and in the one it is compared with. NaN, and an infinity on one side only, still fail.
    void matchInfinities() { m_matchInfinities = true; }

    // |got - want| of two numbers; i and j, where given, say where they are in the part being compared.
    void add(double got, double want, long i = -1, long j = -1) { compare(got, want, 0.0, i, j); }
    // |got - want| / max(floor, |want|): relative to the wanted value's size, absolute below `floor`.
    void addRelative(double got, double want, double floor = 1.0, long i = -1, long j = -1) { compare(got, want, floor, i, j); }
    // A deviation the test computed itself, such as |a row's sum - 1|; NaN and infinity count as infinite.
    void addDeviation(double deviation, long i = -1, long j = -1)
    {
        if (!counted()) return;
        if (!std::isfinite(deviation)) note(Kind::NonFinite, deviation, NAN, i, j).side = Side::Neither;
        else if (std::abs(deviation) > m_found.worst) note(Kind::Deviation, NAN, NAN, i, j).worst = std::abs(deviation);
    }
    // Two sides that cannot be compared at all (a pass failed, a count differs): infinite, and `why` is the message.
    void fail(const char* why)
    {
        if (!counted()) return;
        std::snprintf(note(Kind::Failed, NAN, NAN, -1, -1).why, sizeof m_found.why, "%s", why);
    }

    // Every element of two matrices or vectors of one shape; a different shape counts as infinite.
    template <detail::Comparable Got, detail::Comparable Want>
    void add(const Got& got, const Want& want) { compareAll(detail::evaluated(got), detail::evaluated(want), 0.0); }
    template <detail::Comparable Got, detail::Comparable Want>
    void addRelative(const Got& got, const Want& want, double floor = 1.0) { compareAll(detail::evaluated(got), detail::evaluated(want), floor); }
    // Every element of a matrix or vector against one number.
    template <detail::Comparable Got>
    void add(const Got& got, double want) { compareEach(detail::evaluated(got), want); }

    // The worse of this and `other` (a Worst a helper returned), with other's place where it is the worse,
    // and this one's current label where other had none.
    void merge(const Worst& other)
    {
        m_count += other.m_count;
        if (!finite() || (other.finite() && !(other.m_found.worst > m_found.worst))) return;
        m_found = other.m_found;
        if (!m_found.where[0]) std::memcpy(m_found.where, m_label, sizeof m_found.where);
    }

    // The worst difference so far: +infinity once a non-finite value, a shape mismatch or a failure was seen.
    double value() const { return finite() ? m_found.worst : INFINITY; }
    long count() const { return m_count; }
    bool finite() const { return m_found.kind != Kind::NonFinite && m_found.kind != Kind::Mismatch && m_found.kind != Kind::Failed; }

    // Something was compared, every value was finite, and the worst difference is below `tolerance`.
    bool within(double tolerance) const { return m_count > 0 && value() < tolerance; }
    // The same with `tolerance` allowed: atMost(0.0) holds when every pair is equal.
    bool atMost(double tolerance) const { return m_count > 0 && value() <= tolerance; }
    // Something was compared, every value was finite, and the worst difference is above `tolerance`: for
    // two results that must differ, so that a NaN does not pass for a difference.
    bool exceeds(double tolerance) const { return m_count > 0 && finite() && m_found.worst > tolerance; }

    // Where and what the worst difference is, or the first non-finite value, or the mismatched shapes;
    // after "what: " when the test names what was compared.
    std::string message(const char* what = nullptr) const
    {
        const Found& f = m_found;
        char where[sizeof f.where + 48] = "";
        const char* space = f.where[0] ? " " : "";
        if (f.i >= 0 && f.j >= 0) std::snprintf(where, sizeof where, " at %s%s(%ld, %ld)", f.where, space, f.i, f.j);
        else if (f.i >= 0) std::snprintf(where, sizeof where, " at %s%s(%ld)", f.where, space, f.i);
        else if (f.where[0]) std::snprintf(where, sizeof where, " at %s", f.where);
        char text[sizeof where + sizeof f.why + 128];
        if (m_count == 0) {
            std::snprintf(text, sizeof text, "nothing compared");
        } else if (f.kind == Kind::Failed) {
            std::snprintf(text, sizeof text, "%s%s", f.why, where);
        } else if (f.kind == Kind::Mismatch) {
            std::snprintf(text, sizeof text, "shape (%ld, %ld) against (%ld, %ld)%s", f.shape[0], f.shape[1], f.shape[2], f.shape[3], where);
        } else if (f.kind == Kind::NonFinite) {
            const char* side = f.side == Side::Got ? " in got" : f.side == Side::Want ? " in want" : "";
            const double bad = f.side == Side::Want ? f.want : f.got;
            std::snprintf(text, sizeof text, "%s%s%s", std::isnan(bad) ? "NaN" : bad > 0 ? "inf" : "-inf", side, where);
        } else if (f.kind == Kind::Deviation) {
            std::snprintf(text, sizeof text, "worst deviation %.3g%s", f.worst, where);
        } else if (f.kind == Kind::None) {
            std::snprintf(text, sizeof text, "no difference");
        } else {
            std::snprintf(text, sizeof text, "worst %sdifference %.3g%s: got %.9g, want %.9g",
                          f.kind == Kind::Relative ? "relative " : "", f.worst, where, f.got, f.want);
        }
        return what ? std::string(what) + ": " + text : std::string(text);
    }

private:
    enum class Kind { None, Absolute, Relative, Deviation, NonFinite, Mismatch, Failed };
    enum class Side { Got, Want, Neither };

    // The worst difference, or else the first non-finite value, shape mismatch or failure, and its place.
    struct Found {
        Kind kind = Kind::None;
        char where[64] = "";  // the label when it was found
        double worst = 0.0, got = NAN, want = NAN;
        long i = -1, j = -1;
        Side side = Side::Neither;  // NonFinite: which side
        long shape[4] = {};         // Mismatch: got's rows and columns, then want's
        char why[96] = "";          // Failed
    };

    // Counts one comparison; false once nothing can change the result.
    bool counted()
    {
        ++m_count;
        return finite();
    }

    Found& note(Kind kind, double got, double want, long i, long j)
    {
        m_found.kind = kind;
        m_found.got = got, m_found.want = want;
        m_found.i = i, m_found.j = j;
        std::memcpy(m_found.where, m_label, sizeof m_found.where);
        return m_found;
    }

    void compare(double got, double want, double floor, long i, long j)
    {
        if (!counted()) return;
        if (m_matchInfinities && std::isinf(got) && got == want) return;
        if (!std::isfinite(got)) {
            note(Kind::NonFinite, got, want, i, j).side = Side::Got;
        } else if (!std::isfinite(want)) {
            note(Kind::NonFinite, got, want, i, j).side = Side::Want;
        } else {
            double d = std::abs(got - want);
            if (floor > 0.0) d /= std::max(floor, std::abs(want));
            if (d > m_found.worst) note(floor > 0.0 ? Kind::Relative : Kind::Absolute, got, want, i, j).worst = d;
        }
    }

    void mismatch(long gotRows, long gotCols, long wantRows, long wantCols)
    {
        if (!counted()) return;
        Found& f = note(Kind::Mismatch, NAN, NAN, -1, -1);
        f.shape[0] = gotRows, f.shape[1] = gotCols, f.shape[2] = wantRows, f.shape[3] = wantCols;
    }

    template <class Got, class Want>
    void compareAll(const Got& got, const Want& want, double floor)
    {
        long gr = 0, gc = 0, wr = 0, wc = 0;
        detail::shapeOf(got, gr, gc);
        detail::shapeOf(want, wr, wc);
        if (gc < 0 || wc < 0) return mismatch(gr, gc, wr, wc);
        if ((gr == 1 || gc == 1) && (wr == 1 || wc == 1)) {  // two vectors, whatever their orientation
            if (gr * gc != wr * wc) return mismatch(gr, gc, wr, wc);
            for (long k = 0; k < gr * gc; ++k) compare(detail::at(got, 0, 0, true, k), detail::at(want, 0, 0, true, k), floor, k, -1);
            return;
        }
        if (gr != wr || gc != wc) return mismatch(gr, gc, wr, wc);
        for (long i = 0; i < gr; ++i)
            for (long j = 0; j < gc; ++j) compare(detail::at(got, i, j, false, 0), detail::at(want, i, j, false, 0), floor, i, j);
    }

    template <class Got>
    void compareEach(const Got& got, double want)
    {
        long gr = 0, gc = 0;
        detail::shapeOf(got, gr, gc);
        if (gc < 0) return mismatch(gr, gc, gr, gc);
        if (gr == 1 || gc == 1) {
            for (long k = 0; k < gr * gc; ++k) compare(detail::at(got, 0, 0, true, k), want, 0.0, k, -1);
            return;
        }
        for (long i = 0; i < gr; ++i)
            for (long j = 0; j < gc; ++j) compare(detail::at(got, i, j, false, 0), want, 0.0, i, j);
    }

    char m_label[64] = "";  // the part being compared now
    long m_count = 0;
    bool m_matchInfinities = false;
    Found m_found;
};

// The worst difference of two matrices, vectors or numbers, for a check of one pair.
template <class Got, class Want>
Worst difference(const Got& got, const Want& want)
{
    Worst w;
    w.add(got, want);
    return w;
}

} // namespace numericcheck
