#pragma once
// The steps the forward pass is made of, shared by the whole pass (model/forward.cpp) and the pass that
// recomputes only the rows after an unchanged prefix (model/prefixreuse.cpp). Internal to the model folder:
// views and commands call forward() or forwardReusingPrefix().
//
// Dimension letters: T tokens, D d_model, F d_ff, n rows of the stream being computed.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <vector>

#include <Eigen/Core>

#include "core/compute/hugepages.h"
#include "core/model/forward.h"

namespace attnscope {

// A masked score: exp(-inf) is exactly 0, so a masked key takes no weight.
inline constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Resizes only on a change of shape: Eigen's resize to the same size is free, so a warmed-up workspace
// never touches the heap.
inline void ensure(Matrix& m, Eigen::Index rows, Eigen::Index cols)
{
    if (m.rows() == rows && m.cols() == cols) return;
    const Eigen::Index before = m.size();
    m.resize(rows, cols);
    // A new allocation, not yet written: a long text's (T, T) matrices on 2 MB pages.
    if (m.size() != before) preferHugePages(m.data(), std::size_t(m.size()) * sizeof(float));
}

// Per-row statistics for the norms and the softmax live on the stack, kStackRows rows at a time, so no
// thread ever allocates for them (a pool thread may run its first head in any pass, and a text may be
// longer than any before it): f(r0, n, a, b) is called for every chunk of n <= kStackRows rows from r0,
// with a and b (n) of scratch each.
constexpr Eigen::Index kStackRows = 2048;

template <class Scalar = float, class F>
void forRowChunks(Eigen::Index T, F&& f)
{
    using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
    alignas(64) Scalar stack[2 * kStackRows];
    for (Eigen::Index r0 = 0; r0 < T; r0 += kStackRows) {
        const Eigen::Index n = std::min(kStackRows, T - r0);
        Eigen::Map<Vector> a(stack, n), b(stack + kStackRows, n);
        f(r0, n, a, b);
    }
}

// The model's own normalisation: layer norm (GPT-2) or RMSNorm (Llama).
void normalize(const ModelConfig& c, const Matrix& in, const RowVector& gain, const RowVector& bias, Matrix& out);

inline void noFinish(std::size_t, Eigen::Index, Eigen::Index, int) {}

// A sublayer's output block joins the residual stream as soon as it is computed, on the thread that
// computed it, instead of in one pass over (n, D) on the calling thread afterwards.
inline auto addToResidual(Workspace& ws)
{
    return [&ws](std::size_t, Eigen::Index c0, Eigen::Index n, int) { ws.h.middleCols(c0, n) += ws.proj.middleCols(c0, n); };
}

// The workspace's stream-sized matrices for n rows, and one scratch per pool thread.
void sizeWorkspace(const ModelConfig& c, Eigen::Index n, Workspace& ws);

// The attention sublayer's projections for all heads, ws.x into ws.q, ws.k and ws.v; with rotary tables,
// q and k then turn by the angles of positions first..first+n-1.
void projectQueriesKeysValues(const ModelConfig& c, const LayerWeights& lw, const Matrix* ropeCos, const Matrix* ropeSin,
                              Eigen::Index first, Workspace& ws);

// The feed-forward sublayer on ws.x into ws.proj, added to ws.h: expand to F, activate, project back.
void feedForward(const ModelConfig& c, const LayerWeights& lw, Workspace& ws);

// The positional scheme a pass uses: the model's own unless the settings override it.
PositionalKind positionalKind(const Model& model, PositionalOverride override);

// The table added to the embeddings; none for rotary positions, which act on q and k instead.
const Matrix* positionTable(const Model& model, PositionalOverride override);

// Layer l in float32: the model's own matrices, or a stored model's layer converted into the workspace.
const LayerWeights& layerWeights(const Model& model, int l, Workspace& ws);

// Token rows, plus the positional row when the pass adds a table, plus segment 0's row in BERT-family
// encoders: row t of h (n rows) is token first + t.
void embedTokens(const Model& model, const std::vector<int>& ids, Eigen::Index first, const Matrix* pos, Matrix& h);

// Logits over the vocabulary for the last row of ws.h (the last token): final norm (pre-LN models), then
// the unembedding, into trace.nextLogits.
void nextTokenLogits(const Model& model, Workspace& ws, ForwardTrace& trace);

// The checks forward() makes before it allocates anything: checkInput, the intervention's fit, and the
// memory all heads' weights would take.
Status checkPass(const Model& model, const std::vector<int>& ids, const AttentionSettings& settings,
                 const CaptureRequest& capture, const Intervention& intervention);

// Where a whole pass leaves every layer's keys and values, after rotation, for a later pass to reuse: rows
// 0..T-1 of keys[l] and values[l], which have at least T rows and the key/value heads' width.
struct KeptKeysValues {
    std::vector<Matrix>* keys = nullptr;
    std::vector<Matrix>* values = nullptr;
};

// forward() itself, keeping keys and values when `keep` is given. Input already checked (checkPass).
// When `stop` is given and raised, the pass stops at its next head or layer and returns false, leaving
// the trace and the kept keys and values unspecified; true when it ran to the end.
bool forwardPass(const Model& model, const std::vector<int>& ids, const AttentionSettings& settings,
                 const CaptureRequest& capture, const Intervention& intervention, ForwardTrace& trace, Workspace& ws,
                 const KeptKeysValues* keep, const std::atomic<bool>* stop = nullptr);

// Row r of `scores` is query row0 + r over every key: sets to -infinity the keys the settings hide from it
// (after the query under the causal mask, outside the window and not a sink, blocked).
void maskScoreRows(const AttentionSettings& settings, Eigen::Index row0, Eigen::Ref<Matrix> scores);

// ForwardTrace::rowFullyMasked for T tokens: 1 where the settings hide every key from the query.
void markFullyMaskedRows(const AttentionSettings& settings, Eigen::Index T, std::vector<unsigned char>& rows);

// A number no earlier pass of this process had: ForwardTrace::pass.
std::uint64_t nextPassNumber();

} // namespace attnscope
