#include "core/dataexport/dataexport.h"

#include <charconv>
#include <cmath>
#include <functional>

#include <nlohmann/json.hpp>

#include "core/analysis/stats.h"
#include "core/analysis/wordattention.h"
#include "core/dataexport/jsonexport.h"
#include "core/model/encoderdecoder.h"
#include "core/dataexport/npy.h"

namespace attnscope {

namespace {

using ojson = nlohmann::ordered_json;

// One named array in row-major order; `shape` multiplies out to values.size().
struct Tensor {
    std::string name;
    std::vector<std::size_t> shape;
    std::vector<float> values;
};

// Appends m (R, K) to `out` row by row (Eigen stores it column by column).
void appendRowMajor(std::vector<float>& out, const Eigen::Ref<const Matrix>& m)
{
    for (Eigen::Index i = 0; i < m.rows(); ++i)
        for (Eigen::Index j = 0; j < m.cols(); ++j) out.push_back(m(i, j));
}

std::vector<std::size_t> withHeads(const std::optional<HeadSelection>& head, const ModelConfig& c, std::vector<std::size_t> inner)
{
    if (head) return inner;
    inner.insert(inner.begin(), {std::size_t(c.layers), std::size_t(c.heads)});
    return inner;
}

// Every (layer, head) the request covers, in row-major order of the (L, H) prefix.
std::vector<HeadSelection> coveredHeads(const std::optional<HeadSelection>& head, const ModelConfig& c)
{
    if (head) return {*head};
    std::vector<HeadSelection> all;
    for (int l = 0; l < c.layers; ++l)
        for (int h = 0; h < c.heads; ++h) all.push_back({l, h});
    return all;
}

// The shape the heads of an export cover: the decoder's layers for cross-attention, else the model's own.
ModelConfig decoderShape(const Model& model)
{
    ModelConfig c = model.config;
    if (model.decoder) {
        c.layers = model.decoder->layers;
        c.heads = model.decoder->heads;
        c.dHead = model.decoder->dHead;
        c.kvHeads = 0;
    }
    return c;
}

Result<ForwardTrace> run(const Model& model, const TokenizedText& tokens, const AttentionSettings& settings,
                         std::optional<HeadSelection> detail)
{
    CaptureRequest capture;
    capture.detail = detail;
    return forward(model, tokens.ids, settings, capture);
}

// The head's slices of the attention parameters: columns [h*Dh, (h+1)*Dh) of W_Q, W_K, W_V and their
// biases, rows of W_O (see model/weights.h).
void headWeights(const Model& model, HeadSelection s, std::vector<Tensor>& tensors)
{
    const ModelConfig& c = model.config;
    const LayerWeights& w = model.weights.layers[std::size_t(s.layer)];
    const Eigen::Index dh = c.dHead, at = Eigen::Index(s.head) * dh;
    appendRowMajor(tensors[0].values, w.wq.middleCols(at, dh));  // (D, Dh)
    appendRowMajor(tensors[1].values, w.wk.middleCols(at, dh));
    appendRowMajor(tensors[2].values, w.wv.middleCols(at, dh));
    appendRowMajor(tensors[3].values, w.wo.middleRows(at, dh));  // (Dh, D)
    appendRowMajor(tensors[4].values, w.bq.segment(at, dh));      // (1, Dh) -> (Dh)
    appendRowMajor(tensors[5].values, w.bk.segment(at, dh));
    appendRowMajor(tensors[6].values, w.bv.segment(at, dh));
}

// Word indices as a float32 array (NumPy archives hold float32 only; every index is exact below 2^24).
Tensor indices(const char* name, const std::vector<int>& values)
{
    return {name, {values.size()}, std::vector<float>(values.begin(), values.end())};
}

Result<std::vector<Tensor>> compute(const Model& model, const TokenizedText& tokens, const AttentionSettings& settings,
                                    const DataExportRequest& request)
{
    using R = Result<std::vector<Tensor>>;
    const ModelConfig& c = model.config;
    const std::size_t T = tokens.ids.size(), D = std::size_t(c.dModel), Dh = std::size_t(c.dHead);
    const std::optional<HeadSelection>& head = request.head;
    std::vector<Tensor> out;
    switch (request.what) {
    case DataKind::Attention:
    case DataKind::Stats: {
        Result<ForwardTrace> trace = run(model, tokens, settings, std::nullopt);
        if (!trace) return R::fail(trace.error());
        if (request.what == DataKind::Attention && request.words) {
            const TextWords& w = *request.words;
            const std::size_t W = std::size_t(w.count());
            Tensor t{"word_attention", withHeads(head, c, {W, W}), {}};
            for (HeadSelection s : coveredHeads(head, c))
                appendRowMajor(t.values, wordAttention(trace->weights(s.layer, s.head), w.wordOfToken, w.count(), w.wordOfToken, w.count()));
            out.push_back(std::move(t));
            out.push_back(indices("word_of_token", w.wordOfToken));
        } else if (request.what == DataKind::Attention) {
            Tensor t{"attention", withHeads(head, c, {T, T}), {}};
            for (HeadSelection s : coveredHeads(head, c)) appendRowMajor(t.values, trace->weights(s.layer, s.head));
            out.push_back(std::move(t));
        } else {
            Tensor entropy{"entropy", withHeads(head, c, {T}), {}}, peak{"max_weight", withHeads(head, c, {T}), {}};
            for (HeadSelection s : coveredHeads(head, c)) {
                const RowStats rs = rowStats(trace->weights(s.layer, s.head));
                entropy.values.insert(entropy.values.end(), rs.entropy.begin(), rs.entropy.end());
                peak.values.insert(peak.values.end(), rs.maxWeight.begin(), rs.maxWeight.end());
            }
            out.push_back(std::move(entropy));
            out.push_back(std::move(peak));
        }
        break;
    }
    case DataKind::Scores: {
        // The forward keeps the raw scores of one head, so every head costs its own pass.
        Tensor t{"scores", withHeads(head, c, {T, T}), {}};
        for (HeadSelection s : coveredHeads(head, c)) {
            Result<ForwardTrace> trace = run(model, tokens, settings, s);
            if (!trace) return R::fail(trace.error());
            appendRowMajor(t.values, trace->detail.scores);
        }
        out.push_back(std::move(t));
        break;
    }
    case DataKind::Weights: {
        out = {{"w_q", withHeads(head, c, {D, Dh}), {}}, {"w_k", withHeads(head, c, {D, Dh}), {}},
               {"w_v", withHeads(head, c, {D, Dh}), {}}, {"w_o", withHeads(head, c, {Dh, D}), {}},
               {"b_q", withHeads(head, c, {Dh}), {}},    {"b_k", withHeads(head, c, {Dh}), {}},
               {"b_v", withHeads(head, c, {Dh}), {}}};
        for (HeadSelection s : coveredHeads(head, c)) headWeights(model, s, out);
        break;
    }
    case DataKind::Trace: {
        if (!head) return R::fail("the trace is one head's pipeline: give the layer and the head.");
        Result<ForwardTrace> trace = run(model, tokens, settings, *head);
        if (!trace) return R::fail(trace.error());
        const HeadDetail& d = trace->detail;
        const std::pair<const char*, const Matrix*> parts[] = {
            {"x", &d.x},           {"q", &d.q},           {"k", &d.k},
            {"v", &d.v},           {"scores", &d.scores}, {"scaled", &d.scaled},
            {"masked", &d.masked}, {"weights", &d.weights}, {"head_output", &d.headOutput},
            {"concat", &d.concat}, {"attn_output", &d.attnOutput}};
        for (const auto& [name, m] : parts) {
            Tensor t{name, {std::size_t(m->rows()), std::size_t(m->cols())}, {}};
            appendRowMajor(t.values, *m);
            out.push_back(std::move(t));
        }
        break;
    }
    case DataKind::CrossAttention: {
        EncoderDecoderTrace trace;
        if (Status s = forwardEncoderDecoder(model, request.source.ids, tokens.ids, settings, false, trace); !s.ok())
            return R::fail(s.error());
        const ModelConfig dc = decoderShape(model);
        if (request.words) {
            const TextWords &w = *request.words, &sw = *request.sourceWords;
            Tensor t{"word_cross_attention", withHeads(head, dc, {std::size_t(w.count()), std::size_t(sw.count())}), {}};
            for (HeadSelection s : coveredHeads(head, dc))
                appendRowMajor(t.values, wordAttention(trace.cross(s.layer, s.head), w.wordOfToken, w.count(), sw.wordOfToken, sw.count()));
            out.push_back(std::move(t));
            out.push_back(indices("word_of_token", w.wordOfToken));
            out.push_back(indices("source_word_of_token", sw.wordOfToken));
            break;
        }
        Tensor t{"cross_attention", withHeads(head, dc, {T, request.source.ids.size()}), {}};
        for (HeadSelection s : coveredHeads(head, dc)) appendRowMajor(t.values, trace.cross(s.layer, s.head));
        out.push_back(std::move(t));
        break;
    }
    }
    return R::ok(std::move(out));
}

// ---- JSON ----

ojson number(float v)
{
    return std::isfinite(v) ? ojson(v) : ojson(nullptr);
}

// Nested lists of the tensor's values, one level per dimension.
ojson nested(const Tensor& t, std::size_t dim, std::size_t& at)
{
    ojson list = ojson::array();
    if (dim + 1 == t.shape.size()) {
        for (std::size_t i = 0; i < t.shape[dim]; ++i) list.push_back(number(t.values[at++]));
        return list;
    }
    for (std::size_t i = 0; i < t.shape[dim]; ++i) list.push_back(nested(t, dim + 1, at));
    return list;
}

ojson nested(const Tensor& t)
{
    std::size_t at = 0;
    return t.shape.empty() ? number(t.values.front()) : nested(t, 0, at);
}

std::string jsonBytes(const Model& model, const TokenizedText& tokens, const AttentionSettings& settings,
                      const DataExportRequest& request, const std::vector<Tensor>& tensors)
{
    ojson j;
    j["model"] = json::modelSummary(model.config);
    j["tokens"] = tokens.tokens;
    j["token_ids"] = tokens.ids;
    j["settings"] = json::settings(settings);
    j["what"] = std::string(toString(request.what));
    j["level"] = request.words ? "words" : "tokens";
    if (request.what == DataKind::CrossAttention) {
        j["source_tokens"] = request.source.tokens;
        j["source_token_ids"] = request.source.ids;
    }
    if (request.words) {
        j["words"] = request.words->words;
        j["word_of_token"] = request.words->wordOfToken;
    }
    if (request.sourceWords) {
        j["source_words"] = request.sourceWords->words;
        j["source_word_of_token"] = request.sourceWords->wordOfToken;
    }
    if (request.head) {
        j["layer"] = request.head->layer;
        j["head"] = request.head->head;
    }
    if (request.what == DataKind::Scores) j["multiplier"] = settings.multiplier(model.config.dHead, model.config.scaleFolded);
    if (tensors.size() == 1 || request.words) {  // the word indices are in "word_of_token" above
        j["shape"] = tensors.front().shape;
        j["data"] = nested(tensors.front());
    } else {
        ojson shapes = ojson::object(), data = ojson::object();
        for (const Tensor& t : tensors) {
            shapes[t.name] = t.shape;
            data[t.name] = nested(t);
        }
        j["shape"] = std::move(shapes);
        j["data"] = std::move(data);
    }
    return j.dump() + "\n";
}

// ---- CSV ----

// RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled.
std::string csvField(const std::string& s)
{
    if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char ch : s) {
        if (ch == '"') out += '"';
        out += ch;
    }
    return out + "\"";
}

// The shortest text that reads back as the same float; -inf for masked entries.
void appendValue(std::string& out, float v)
{
    if (std::isnan(v)) {
        out += "nan";
        return;
    }
    if (std::isinf(v)) {
        out += v < 0 ? "-inf" : "inf";
        return;
    }
    char buffer[32];
    const auto r = std::to_chars(buffer, buffer + sizeof buffer, v);
    out.append(buffer, r.ptr);
}

std::string csvBytes(const ModelConfig& c, const TokenizedText& tokens, const DataExportRequest& request,
                     const std::vector<Tensor>& tensors)
{
    std::string out;
    const bool all = !request.head;
    const std::vector<HeadSelection> heads = coveredHeads(request.head, c);
    const std::size_t T = tokens.ids.size();
    if (request.what == DataKind::Attention || request.what == DataKind::Scores || request.what == DataKind::CrossAttention) {
        // 1. A (T, K) matrix per head: key tokens across (the source's for cross-attention), query tokens down;
        //    or words across and down.
        const bool cross = request.what == DataKind::CrossAttention;
        const std::vector<std::string>& queries = request.words ? request.words->words : tokens.tokens;
        const std::vector<std::string>& keys = request.words ? (cross ? request.sourceWords->words : request.words->words)
                                                             : (cross ? request.source.tokens : tokens.tokens);
        out += all ? "layer,head," : "";
        out += request.words ? "query_word" : "query";
        for (const std::string& t : keys) out += "," + csvField(t);
        out += "\n";
        const std::vector<float>& v = tensors.front().values;
        std::size_t at = 0;
        for (HeadSelection s : heads)
            for (std::size_t q = 0; q < queries.size(); ++q) {
                if (all) out += std::to_string(s.layer) + "," + std::to_string(s.head) + ",";
                out += csvField(queries[q]);
                for (std::size_t k = 0; k < keys.size(); ++k) {
                    out += ",";
                    appendValue(out, v[at++]);
                }
                out += "\n";
            }
        return out;
    }
    if (request.what == DataKind::Stats) {
        // 2. One row per query.
        out += all ? "layer,head,query,token,entropy,max_weight\n" : "query,token,entropy,max_weight\n";
        std::size_t at = 0;
        for (HeadSelection s : heads)
            for (std::size_t q = 0; q < T; ++q, ++at) {
                if (all) out += std::to_string(s.layer) + "," + std::to_string(s.head) + ",";
                out += std::to_string(q) + "," + csvField(tokens.tokens[q]) + ",";
                appendValue(out, tensors[0].values[at]);
                out += ",";
                appendValue(out, tensors[1].values[at]);
                out += "\n";
            }
        return out;
    }
    // 3. Matrices of different shapes: one value per row ("tidy"), vectors as row 0.
    out += all ? "layer,head,matrix,row,column,value\n" : "matrix,row,column,value\n";
    for (const Tensor& t : tensors) {
        const std::size_t prefix = all ? 2 : 0;
        const bool vector = t.shape.size() == prefix + 1;
        const std::size_t rows = vector ? 1 : t.shape[prefix], cols = t.shape.back();
        std::size_t at = 0;
        for (std::size_t hi = 0; hi < (all ? heads.size() : 1); ++hi)
            for (std::size_t i = 0; i < rows; ++i)
                for (std::size_t k = 0; k < cols; ++k) {
                    if (all) out += std::to_string(heads[hi].layer) + "," + std::to_string(heads[hi].head) + ",";
                    out += t.name + "," + std::to_string(i) + "," + std::to_string(k) + ",";
                    appendValue(out, t.values[at++]);
                    out += "\n";
                }
    }
    return out;
}

} // namespace

std::string_view toString(DataKind k)
{
    switch (k) {
    case DataKind::Attention: return "attention";
    case DataKind::Scores: return "scores";
    case DataKind::Weights: return "weights";
    case DataKind::Stats: return "stats";
    case DataKind::Trace: return "trace";
    case DataKind::CrossAttention: return "cross-attention";
    }
    return "attention";
}

std::string_view toString(DataFormat f)
{
    switch (f) {
    case DataFormat::Csv: return "csv";
    case DataFormat::Json: return "json";
    case DataFormat::Npy: return "npy";
    }
    return "json";
}

Result<DataKind> parseDataKind(std::string_view s)
{
    for (DataKind k : {DataKind::Attention, DataKind::Scores, DataKind::Weights, DataKind::Stats, DataKind::Trace,
                       DataKind::CrossAttention})
        if (s == toString(k)) return Result<DataKind>::ok(k);
    return Result<DataKind>::fail("what to export must be attention, scores, weights, stats, trace or cross-attention, not '" +
                                  std::string(s) + "'.");
}

Result<DataFormat> parseDataFormat(std::string_view s)
{
    for (DataFormat f : {DataFormat::Csv, DataFormat::Json, DataFormat::Npy})
        if (s == toString(f)) return Result<DataFormat>::ok(f);
    return Result<DataFormat>::fail("the format must be csv, json or npy, not '" + std::string(s) + "'.");
}

bool isArchive(DataKind kind, bool words)
{
    return words || kind == DataKind::Weights || kind == DataKind::Stats || kind == DataKind::Trace;
}

std::string suggestedSuffix(DataKind kind, DataFormat format, bool words)
{
    if (format == DataFormat::Npy) return isArchive(kind, words) ? ".npz" : ".npy";
    return std::string(".").append(toString(format));
}

Result<std::string> exportData(const Model& model, const TokenizedText& tokens, const AttentionSettings& settings,
                               const DataExportRequest& request)
{
    using R = Result<std::string>;
    const bool cross = request.what == DataKind::CrossAttention;
    if (cross && !model.isEncoderDecoder())
        return R::fail("'" + model.config.name + "' has no decoder, so it has no cross-attention to export.");
    if (cross && request.source.ids.empty()) return R::fail("cross-attention needs a source sentence.");
    const ModelConfig c = cross ? decoderShape(model) : model.config;
    if (request.head && (request.head->layer < 0 || request.head->head < 0 || request.head->layer >= c.layers ||
                         request.head->head >= c.heads))
        return R::fail("layer " + std::to_string(request.head->layer) + ", head " + std::to_string(request.head->head) +
                       " is not in this model (" + std::to_string(c.layers) + " layers, " + std::to_string(c.heads) + " heads).");
    if (tokens.ids.empty() && request.what != DataKind::Weights) return R::fail("there is no text to export numbers for.");
    if (request.words) {
        if (request.what != DataKind::Attention && !cross)
            return R::fail("words are for attention and cross-attention; " + std::string(toString(request.what)) + " is per token.");
        if (request.words->wordOfToken.size() != tokens.ids.size() || (cross && (!request.sourceWords ||
                                                                               request.sourceWords->wordOfToken.size() != request.source.ids.size())))
            return R::fail("the words do not belong to these tokens.");
    }
    Result<std::vector<Tensor>> tensors = compute(model, tokens, settings, request);
    if (!tensors) return R::fail(tensors.error());
    switch (request.format) {
    case DataFormat::Json: return R::ok(jsonBytes(model, tokens, settings, request, *tensors));
    case DataFormat::Csv: return R::ok(csvBytes(c, tokens, request, *tensors));  // c: the decoder's layers for cross-attention
    case DataFormat::Npy:
        if (tensors->size() == 1) return R::ok(npyBytes({tensors->front().shape, std::move(tensors->front().values)}));
        std::vector<std::pair<std::string, NpyArray>> arrays;
        for (Tensor& t : *tensors) arrays.push_back({t.name, {t.shape, std::move(t.values)}});
        return npzBytes(arrays);
    }
    return R::fail("unknown format.");
}

} // namespace attnscope
