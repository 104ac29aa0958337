#pragma once
// How long a UI test waits for work on another thread (a forward pass, a sweep, a training step) before
// it calls the work lost. It is a bound for detecting a hang, not a speed requirement: a wait that is met
// returns at once, and the sanitizer build on a machine busy with another build can take tens of seconds
// where a quiet native build takes milliseconds. Speed is measured by the benchmarks, never asserted here.
namespace attnscope::testing {

constexpr int kWorkTimeoutMs = 600'000;

} // namespace attnscope::testing
