#pragma once
// The numbers behind the views, as files: `attnscope-cli export` and the window's File → Export data…
// both call exportData, so the two always write the same bytes for the same input.
//
// Dimension letters: L layers, H heads, T tokens, D d_model, Dh d_head.
//
// What (with --layer/--head one head, without them every head):
//   attention  the attention weights, (L, H, T, T) or (T, T); masked pairs are exactly 0
//   scores     the raw scores Q Kᵀ before scaling and masking, (L, H, T, T) or (T, T); the JSON gives the
//              multiplier the softmax then applied (scaled = multiplier * scores)
//   weights    the head's parameters: w_q, w_k, w_v (D, Dh), w_o (Dh, D), b_q, b_k, b_v (Dh), each with a
//              leading (L, H) for every head
//   stats      per query row, the entropy in nats and the largest weight: (L, H, T) or (T)
//   trace      one head's whole pipeline as `attnscope-cli trace` prints it (needs the head)
//   cross-attention  an encoder–decoder's cross-attention weights, (L_dec, H, T, S) or (T, S): `tokens` is
//              the decoder input (encodeTarget's), the request's `source` the encoder's (encodeSource's),
//              and the layer is a decoder layer
// Formats:
//   csv   attention, scores and cross-attention: a header row of key tokens (the source's for cross-attention)
//         and a first column of query tokens (every head:
//         "layer", "head" and "query" columns, then one column per key); stats: one row per query;
//         weights and trace: one row per value, "matrix,row,column,value" (plus "layer,head" for every head)
//   json  {"model", "tokens", "token_ids", "settings", "what", "shape", "data"}; -inf and NaN as null;
//         cross-attention adds "source_tokens" and "source_token_ids"
//   npy   attention and scores: one little-endian float32 .npy array of the shape above; stats, weights
//         and trace hold several arrays, so they are an .npz archive of named .npy arrays (numpy.load)
// Words (attention and cross-attention only): the request's words replace tokens, the weights merged by
// Clark et al.'s rule (analysis/wordattention.h), (L, H, W, W) or (L_dec, H, W, W_source). The CSV's first
// column is then "query_word" and its header the words; the JSON says "level": "words" (else "tokens") and
// adds "words" and "word_of_token" (and "source_words", "source_word_of_token"); NumPy becomes an .npz of
// "word_attention" (or "word_cross_attention") and "word_of_token" (and "source_word_of_token").
#include <optional>
#include <string>
#include <string_view>

#include "core/model/attentionsettings.h"
#include "core/model/forward.h"
#include "core/model/model.h"
#include "core/result.h"
#include "core/text/tokenizer.h"
#include "core/text/words.h"

namespace attnscope {

enum class DataKind { Attention, Scores, Weights, Stats, Trace, CrossAttention };
enum class DataFormat { Csv, Json, Npy };

std::string_view toString(DataKind);
std::string_view toString(DataFormat);
Result<DataKind> parseDataKind(std::string_view);
Result<DataFormat> parseDataFormat(std::string_view);
// True when the kind holds several arrays (or is at word level) and so goes into an .npz archive as npy.
bool isArchive(DataKind kind, bool words = false);
// The file name ending the format suggests: ".csv", ".json", ".npy", or ".npz" for an archive.
std::string suggestedSuffix(DataKind kind, DataFormat format, bool words = false);

struct DataExportRequest {
    DataKind what = DataKind::Attention;
    DataFormat format = DataFormat::Json;
    std::optional<HeadSelection> head;  // one head; every head when absent (trace needs one)
    TokenizedText source;               // cross-attention only: the encoder's input
    // At word level: the words of the tokens (text/words.h) and, for cross-attention, of the source.
    std::optional<TextWords> words, sourceWords;
};

// Runs the forward passes the request needs (scores of every head take one per head) and returns the
// file's bytes. Fails with a sentence for bad input (text the model refuses, a head it lacks).
Result<std::string> exportData(const Model& model, const TokenizedText& tokens, const AttentionSettings& settings,
                               const DataExportRequest& request);

} // namespace attnscope
