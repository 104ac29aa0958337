#pragma once
// What a head computes for every input, read from its weights alone (Elhage et al. 2021, "A Mathematical
// Framework for Transformer Circuits"): its QK circuit (which tokens attend to which), its OV circuit (what
// an attended token writes), how far its OV circuit copies tokens, and how much its output feeds a later
// head's queries, keys or values (composition).
//
// Conventions (docs/research.md says the same for readers): row vectors; head h of a layer has the slices
// W_Q, W_K, W_V (D, Dh) of the projections (a grouped-query head its key/value head's W_K, W_V) and W_O
// (Dh, D). The gain γ of the norm that produces the attention's input is folded in, W ← diag(γ) W, for
// W_Q, W_K and W_V: pre-norm models the block's own first norm; post-norm models (BERT, BART, Marian) the
// norm that produced the block's input (the embeddings' norm for layer 0, the previous layer's last norm
// after it), and their composition is approximate. Nothing is folded into W_O. Biases, the norms' centring
// and the 1/√Dh scale are left out (T5 keeps its scale inside W_Q). Rotary models' QK circuit is the one at
// relative offset 0 (no rotation).
//
//   QK circuit  W_QK = W_Q W_Kᵀ (D, D);  OV circuit  W_OV = W_V W_O (D, D); neither is ever formed: every
//   number below comes from the (D, Dh) factors and (Dh, Dh) products of them.
//   Singular values: the Dh largest of each circuit, descending.
//   Copying score: with W_E the token embedding (V, D) and W_U the unembedding (D, V) with the final
//   norm's gain folded in, the nonzero eigenvalues λ of W_E W_OV W_U are those of the (Dh, Dh) matrix
//   W_O W_U W_E W_V; the score is Σ Re λ / Σ |λ| (1: the head copies the token it attends to; -1: it
//   suppresses it). Only where the logits are a linear map of a norm's output: decoders (GPT-2, Llama, the
//   built-in models, an encoder–decoder's decoder and cross-attention). BERT's masked-LM head has a dense
//   layer and GELU before its norm, and an encoder–decoder's encoder has no unembedding: no score there.
//   Composition of head 1 into a head 2 of a later layer of the same stack, ‖A B‖_F / (‖A‖_F ‖B‖_F):
//   Q with A = W_OV¹, B = W_QK²; K with B = (W_QK²)ᵀ; V with B = W_OV².
//
// Encoder–decoders have three stacks of heads: the encoder's self-attention, the decoder's masked
// self-attention and its cross-attention, whose W_K and W_V read the encoder's output (the encoder's last
// norm folded in) and whose W_Q reads the decoder's stream. Composition is computed within the encoder and
// within the decoder's self-attention.
//
// Dimension letters: D d_model, Dh d_head, V vocabulary.
#include <optional>
#include <string>
#include <vector>

#include "core/model/forward.h"
#include "core/model/model.h"
#include "core/result.h"

namespace attnscope {

enum class CircuitStack { Self, Encoder, Decoder, Cross };  // Self: the one stack of a decoder- or encoder-only model
const char* toString(CircuitStack stack);  // "self", "encoder", "decoder", "cross"

// One head's circuits in factored form, the norm's gain folded in as above.
struct HeadFactors {
    Matrix wq, wk, wv;  // (D, Dh)
    Matrix wo;          // (Dh, D)
};

// The factors of head `head` of layer `layer` of `stack` (Self for a model without a decoder). Fails with a
// sentence when the model has no such head.
Result<HeadFactors> headFactors(const Model& model, CircuitStack stack, int layer, int head);

struct CircuitHead {
    CircuitStack stack = CircuitStack::Self;
    int layer = 0, head = 0, kvHead = 0;
    std::vector<double> qkSingularValues, ovSingularValues;  // (Dh) each, descending
    std::optional<double> ovCopyingScore;                    // none where there is no linear unembedding
};

struct CircuitComposition {
    CircuitStack stack = CircuitStack::Self;
    HeadSelection from, to;  // from.layer < to.layer
    double q = 0.0, k = 0.0, v = 0.0;
};

struct Circuits {
    std::vector<CircuitHead> heads;
    std::vector<CircuitComposition> composition;
    bool approximateComposition = false;  // post-norm: the folded gain is one norm's, not the path's
    bool unrotatedQueryKey = false;       // rotary: the QK circuit at relative offset 0
    bool scaleInQuery = false;            // T5: the 1/√Dh scale lives inside W_Q
    std::string copyingNote;              // why some heads have no copying score; empty when all have one
};

// Which heads: every one, or those of one layer and/or head index. Composition rows are those whose `to`
// head is kept; `composition` false leaves them out.
struct CircuitFilter {
    std::optional<int> layer, head;
    bool composition = true;
    bool copying = true;  // false: no copying scores (they need W_U W_E, the one product over the vocabulary)
};

// The circuits of every head the filter keeps, in the order of the stacks (encoder, decoder, cross), then
// layer, then head. Fails with a sentence on a layer or head the model does not have.
Result<Circuits> readCircuits(const Model& model, const CircuitFilter& filter = {});

// The (Dh, Dh) matrix whose eigenvalues are the full OV circuit's nonzero ones, W_O (W_U W_E) W_V, given the
// stack's W_U W_E (D, D) (CircuitWeights::unembedEmbed); and the copying score, Σ Re λ / Σ |λ|, from it.
Eigen::MatrixXd fullOvCore(const HeadFactors& factors, const Eigen::MatrixXd& unembedEmbed);
double copyingScore(const Eigen::MatrixXd& fullOvCore);

// A positional picture of head `head` of layer `layer` (its only stack, or an encoder–decoder's encoder) for
// models with an absolute position table P (GPT-2, the built-in models): P W_QK Pᵀ over the first `positions`
// positions, (N, N), row i the query at position i and column j the key at j: what the head's scores would
// be if the stream held the positions' embeddings alone. A previous-token head shows as a sub-diagonal.
// Under a causal model the keys after each query are -infinity (never seen). Fails with a sentence on a
// model without such a table (rotary, relative buckets), a head it lacks, or positions outside 2 .. the table.
Result<Matrix> positionalQkCircuit(const Model& model, int layer, int head, int positions);

// The singular values of X Yᵀ for X, Y (D, k), descending, k of them: from the (k, k) product of the two
// QR factors' R, never the (D, D) product.
std::vector<double> factoredSingularValues(const Matrix& x, const Matrix& y);

// The top singular directions of the full OV circuit W_E W_OV W_U (V, V) of one head, read in the
// vocabulary: for each, the tokens whose embedding feeds it most and the tokens whose logits it raises most
// (the singular vectors' largest entries, signs chosen so that the largest entry of the input side is
// positive). Fails where the stack has no linear unembedding.
struct OvDirection {
    double singularValue = 0.0;
    std::vector<std::pair<int, double>> inputs, outputs;  // (token id, entry of the unit singular vector)
};
Result<std::vector<OvDirection>> fullOvReadout(const Model& model, CircuitStack stack, int layer, int head,
                                               int directions, int tokens);

} // namespace attnscope
