#include "core/research/corpusstats.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utf8proc.h>

#include "core/model/forward.h"
#include "core/text/utf8.h"

namespace attnscope {

namespace {

bool startsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// The non-empty lines of the corpus, without a trailing carriage return.
std::vector<std::string_view> documentLines(std::string_view corpus, int maxDocuments)
{
    std::vector<std::string_view> lines;
    std::size_t start = 0;
    while (start <= corpus.size() && int(lines.size()) < maxDocuments) {
        std::size_t end = corpus.find('\n', start);
        if (end == std::string_view::npos) end = corpus.size();
        std::string_view line = corpus.substr(start, end - start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.find_first_not_of(" \t") != std::string_view::npos) lines.push_back(line);
        start = end + 1;
    }
    return lines;
}

} // namespace

bool isPunctuationToken(std::string_view display)
{
    for (std::string_view mark : {std::string_view("\xC2\xB7"), std::string_view("\xC4\xA0"), std::string_view("\xE2\x96\x81"), std::string_view("##")})
        if (startsWith(display, mark)) {
            display.remove_prefix(mark.size());
            break;
        }
    if (display.empty()) return false;
    std::size_t i = 0;
    while (i < display.size()) {
        switch (utf8proc_category(static_cast<utf8proc_int32_t>(utf8::next(display, i)))) {
        case UTF8PROC_CATEGORY_PC: case UTF8PROC_CATEGORY_PD: case UTF8PROC_CATEGORY_PS: case UTF8PROC_CATEGORY_PE:
        case UTF8PROC_CATEGORY_PI: case UTF8PROC_CATEGORY_PF: case UTF8PROC_CATEGORY_PO: break;
        default: return false;
        }
    }
    return true;
}

bool isSpecialToken(std::string_view display)
{
    static constexpr std::array<std::string_view, 9> kSpecial = {"[CLS]", "[SEP]", "<s>", "</s>", "<bos>", "<eos>", "<|endoftext|>",
                                                                 "<|begin_of_text|>", "<|end_of_text|>"};
    return std::find(kSpecial.begin(), kSpecial.end(), display) != kSpecial.end();
}

double CorpusStats::layerMean(int layer, double HeadCorpusStats::*statistic) const
{
    if (heads == 0) return 0.0;
    double sum = 0.0;
    for (int h = 0; h < heads; ++h) sum += at(layer, h).*statistic;
    return sum / heads;
}

Result<CorpusStats> corpusStats(const Model& model, std::string_view corpus, const AttentionSettings& settings, int maxDocuments,
                                const std::function<bool(int done, int total)>& keepGoing)
{
    using R = Result<CorpusStats>;
    if (maxDocuments < 1) return R::fail("the number of documents must be at least 1.");
    const std::vector<std::string_view> lines = documentLines(corpus, maxDocuments);
    if (lines.empty()) return R::fail("the corpus has no documents: every line is empty.");
    const ModelConfig& c = model.config;
    const int L = c.layers, H = c.heads, total = int(lines.size());
    const std::size_t limit = std::size_t(settings.effectiveTokenLimit(c.contextLength));

    CorpusStats stats;
    stats.layers = L;
    stats.heads = H;
    stats.perHead.resize(std::size_t(L * H));
    // Sums over rows, in double; each head's rows and previous-token rows counted separately.
    std::vector<double> entropy(std::size_t(L * H)), first(std::size_t(L * H)), punct(std::size_t(L * H)), special(std::size_t(L * H)),
        previous(std::size_t(L * H));
    long long rows = 0, previousRows = 0;
    ForwardTrace trace;
    Workspace workspace;
    std::vector<unsigned char> isPunct, isSpecial;
    for (int d = 0; d < total; ++d) {
        if (keepGoing && !keepGoing(d, total)) return R::fail("stopped before the statistics were finished.");
        Result<TokenizedText> tokens = model.tokenizer->encode(lines[std::size_t(d)]);
        if (!tokens) return R::fail("line " + std::to_string(d + 1) + " of the corpus cannot be read: " + tokens.error());
        if (tokens->ids.empty()) continue;
        if (tokens->ids.size() > limit) {
            tokens->ids.resize(limit);
            tokens->tokens.resize(limit);
            tokens->spans.resize(limit);
            ++stats.truncated;
        }
        if (Status s = forward(model, tokens->ids, settings, CaptureRequest{}, trace, workspace); !s.ok())
            return R::fail("document " + std::to_string(d + 1) + ": " + s.error());
        const int T = trace.tokens;
        isPunct.assign(std::size_t(T), 0);
        isSpecial.assign(std::size_t(T), 0);
        for (int j = 0; j < T; ++j) {
            isPunct[std::size_t(j)] = isPunctuationToken(tokens->tokens[std::size_t(j)]);
            isSpecial[std::size_t(j)] = isSpecialToken(tokens->tokens[std::size_t(j)]);
        }
        ++stats.documents;
        stats.tokens += T;
        // A row that sees no key at all (every key blocked) has no distribution to describe.
        long long docRows = 0, docPrevious = 0;
        for (int i = 0; i < T; ++i)
            if (!trace.rowFullyMasked[std::size_t(i)]) {
                ++docRows;
                if (i >= 1) ++docPrevious;
            }
        rows += docRows;
        previousRows += docPrevious;
        for (int l = 0; l < L; ++l)
            for (int h = 0; h < H; ++h) {
                const Matrix& w = trace.weights(l, h);  // (T, T)
                const std::size_t cell = std::size_t(l * H + h);
                for (int i = 0; i < T; ++i) {
                    if (trace.rowFullyMasked[std::size_t(i)]) continue;
                    double e = 0.0, p = 0.0, s = 0.0;
                    for (int j = 0; j < T; ++j) {
                        const double a = w(i, j);
                        if (a > 0.0) e -= a * std::log(a);
                        if (isPunct[std::size_t(j)]) p += a;
                        if (isSpecial[std::size_t(j)]) s += a;
                    }
                    entropy[cell] += e;
                    punct[cell] += p;
                    special[cell] += s;
                    first[cell] += w(i, 0);
                    if (i >= 1) previous[cell] += w(i, i - 1);
                }
            }
    }
    if (stats.documents == 0) return R::fail("no line of the corpus gives a single token.");
    for (int l = 0; l < L; ++l)
        for (int h = 0; h < H; ++h) {
            const std::size_t cell = std::size_t(l * H + h);
            HeadCorpusStats& out = stats.perHead[cell];
            out.layer = l;
            out.head = h;
            const double n = rows > 0 ? double(rows) : 1.0;
            out.entropy = entropy[cell] / n;
            out.firstToken = first[cell] / n;
            out.punctuation = punct[cell] / n;
            out.special = special[cell] / n;
            out.previousToken = previousRows > 0 ? previous[cell] / double(previousRows) : 0.0;
        }
    return R::ok(std::move(stats));
}

} // namespace attnscope
