#pragma once
// Whether a model fits before it is loaded: what it will need (its weights as they will be held, and one
// forward pass's buffers) against the memory the system can give (MemAvailable, and the cgroup's limit when
// one is set). A model that does not fit is refused with a sentence naming both numbers, instead of a load
// that ends in the kernel's out-of-memory killer.
#include <cstdint>
#include <optional>
#include <string>

#include "core/result.h"

namespace attnscope {

// The pass the check budgets for: every head's weights and the activations of this many tokens (or the
// context, when shorter). Longer inputs are checked by the forward pass itself when they are run.
constexpr int kMemoryCheckTokens = 1024;

struct MemoryNeed {
    double weightBytes = 0;  // as held: converted to float32, or the file's bytes for models that map them
    double passBytes = 0;    // one forward pass of min(context, kMemoryCheckTokens) tokens
    double total() const { return weightBytes + passBytes; }
};

struct MemoryAvailable {
    double bytes = 0;
    std::string source;  // where the figure comes from, for the sentence
};

// The smallest of: MemAvailable in /proc/meminfo, and the cgroup's limit less its usage (cgroup v2, or v1).
// ATTNSCOPE_MEMORY_AVAILABLE (bytes) replaces both, so a test can play a small machine. Empty when nothing
// can be read (another system): the check then lets the model through.
std::optional<MemoryAvailable> memoryAvailable();

// Fails when `need` is more than the system can give. `what` names the model ("'gpt2-medium'").
Status checkMemoryFits(const MemoryNeed& need, const std::string& what);

// "1.5 GB", "640 MB": for sentences.
std::string formatBytes(double bytes);

} // namespace attnscope
