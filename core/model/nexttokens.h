#pragma once
// Next-token prediction: the most probable tokens after the last position, from the logits a forward pass
// captured (CaptureRequest::nextTokenLogits; the tied embedding is the unembedding).
#include <string>
#include <vector>

#include "core/model/forward.h"
#include "core/text/tokenizer.h"

namespace attnscope {

struct NextToken {
    int id = 0;
    std::string token;  // display string
    double p = 0.0;     // softmax probability over the whole vocabulary
};

// The k most probable tokens, most probable first (ties by lower id); empty when the trace has no logits.
std::vector<NextToken> topK(const ForwardTrace& trace, const Tokenizer& tokenizer, int k);

// The same over any logits (V): softmax over the whole vocabulary, the k most probable first.
std::vector<NextToken> topKOfLogits(const Eigen::RowVectorXf& logits, const Tokenizer& tokenizer, int k);

} // namespace attnscope
