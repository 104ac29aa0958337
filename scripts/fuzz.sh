#!/usr/bin/env bash
# Runs every libFuzzer target in fuzz/ for a bounded time and keeps what it finds.
#
#   bash scripts/fuzz.sh [SECONDS-PER-TARGET] [TARGET...]     (default: 300 seconds, every target)
#
# Needs clang and its runtime libraries from Debian (not needed by the normal build or tests):
#   apt-get install -y clang-14 libclang-rt-14-dev
# which this script installs when clang++ is missing and it runs as root. It builds build-fuzz/ with
# CXX=clang++ -DATTNSCOPE_FUZZ=ON (ASan + UBSan + libFuzzer), then runs each target under `nice` with:
#   - the seed corpus fuzz/corpus/NAME (read only) and a working corpus build-fuzz/corpus/NAME that keeps
#     growing from run to run;
#   - the target's dictionary (fuzz/dict/*.dict, as fuzz/CMakeLists.txt declares it);
#   - a 2 GB memory limit and a 10 s limit per input, so an input that allocates without bound or hangs is
#     a finding too.
# Findings (crash-*, leak-*, timeout-*, oom-*) go to fuzz/findings/NAME/ (not in git). For each: fix the
# code, move the file to fuzz/regressions/NAME/ (the normal test suite replays it through the target) and
# add a test that names the problem. The script exits 1 when anything was found.
#
# A summary line per target gives executions per second, the working corpus (files and bytes) and
# libFuzzer's coverage counters at the end (cov: edges reached, ft: features).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-300}
shift || true

if ! command -v clang++ >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y clang-14 libclang-rt-14-dev
  else
    echo "clang++ is missing: apt-get install clang-14 libclang-rt-14-dev (as root)" >&2
    exit 2
  fi
fi
clangxx=$(command -v clang++ || command -v clang++-14)

CXX=$clangxx cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Release -DATTNSCOPE_FUZZ=ON >/dev/null

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cut -d' ' -f1 build-fuzz/fuzz-targets.txt)
  nice cmake --build build-fuzz -j"$(nproc)" --target fuzz_all
else
  nice cmake --build build-fuzz -j"$(nproc)" --target "${targets[@]/#/fuzz_}"
fi

found=0
summary=()
for name in "${targets[@]}"; do
  dict=$(awk -v n="$name" '$1 == n { print $2 }' build-fuzz/fuzz-targets.txt)
  [ -n "$dict" ] || { echo "unknown fuzz target '$name'" >&2; exit 2; }
  work=build-fuzz/corpus/$name
  findings=fuzz/findings/$name
  log=build-fuzz/fuzz-$name.log
  mkdir -p "$work" "$findings"
  args=(-max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1
        -artifact_prefix="$findings/")
  [ "$dict" != "-" ] && args+=(-dict="$dict")
  echo "== fuzz_$name for ${seconds}s (log: $log)"
  status=0
  nice ./build-fuzz/bin/fuzz_"$name" "${args[@]}" "$work" "fuzz/corpus/$name" >"$log" 2>&1 || status=$?
  execs=$(awk '/stat::number_of_executed_units/ { print $2 }' "$log")
  rate=$(awk '/stat::average_exec_per_sec/ { print $2 }' "$log")
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  files=$(find "$work" -type f | wc -l)
  bytes=$(du -sb "$work" | cut -f1)
  line="$name: ${execs:-?} runs, ${rate:-?} execs/s, corpus $files files / $bytes bytes, cov ${cov:-?}, ft ${ft:-?}"
  if [ "$status" -ne 0 ] || [ -n "$(ls -A "$findings")" ]; then
    found=1
    line="$line, FINDINGS in $findings (exit $status)"
  fi
  echo "$line"
  summary+=("$line")
done

echo
echo "== summary (${seconds}s per target)"
printf '%s\n' "${summary[@]}"
exit $found
