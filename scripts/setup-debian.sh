#!/usr/bin/env bash
# One script behind the README's two set-up commands, so they cannot drift apart:
#   bash scripts/setup-debian.sh run    install what is needed, build, start the window on the default model
#   bash scripts/setup-debian.sh test   install what is needed, build, run every test, then build again with
#                                       ASan + UBSan and run every test under them
# Run as root on Debian 12. Everything comes from Debian's packages; nothing else is downloaded.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-}
case "$mode" in run|test) ;; *) echo "usage: $0 run|test" >&2; exit 2 ;; esac

packages=(
  g++ cmake make pkg-config        # toolchain
  lld                              # LLVM's linker: links the hundred executables in a third of GNU ld's time
  qt6-base-dev qt6-svg-dev libgl-dev # Qt Widgets, Test, PrintSupport, Concurrent, Network (downloads); SVG export
  libqcustomplot-dev               # heatmaps and plots (its Qt 6 build)
  libeigen3-dev                    # the transformer core
  nlohmann-json3-dev               # CLI output, config.json and safetensors headers
  libpcre2-dev                     # GPT-2's pre-tokenisation pattern with Unicode classes
  libutf8proc-dev                  # Unicode normalisation (NFC) and categories for tokenizer.json pipelines
  libicu-dev                       # BERT's WordPiece: Unicode categories, lower-casing and NFD for accent stripping
  libsentencepiece-dev             # Marian's source.spm / target.spm, read by the real SentencePiece library
  libcli11-dev                     # attnscope-cli's subcommands and per-command --help (header-only)
  ninja-build                      # the build: schedules every target's files across the cores at once
  dpkg-dev file appstream          # deb_package: cpack's .deb takes its dependencies from dpkg-shlibdeps,
                                   # which CPackDeb runs only where `file` is installed; the AppStream file checked
  binutils                         # nm for kernel_isolation (g++ brings it too; named because a test runs it)
)
# That is every program the build and the tests run: the compilers and linkers above, cmake, cpack and
# ctest (cmake), dpkg-deb (dpkg, on every Debian), dpkg-shlibdeps and its objdump (dpkg-dev, binutils), nm (binutils),
# `file`, appstreamcli, and the project's own attnscope and attnscope-cli. A fresh Debian 12 root proves
# the list complete (docs/testing.md#build-and-ci-times).

# Each phase's wall time is printed when the script ends, passed or failed, so a run's log says where its
# time went (CI's budget: docs/testing.md#build-and-ci-times).
phases=()
phase_start=$SECONDS
phase() { phases+=("$1 $((SECONDS - phase_start)) s"); phase_start=$SECONDS; }
report() {
  local done="nothing finished"
  ((${#phases[@]})) && printf -v done '%s, ' "${phases[@]}" && done=${done%, }
  echo "setup-debian.sh $mode: $done; ${SECONDS} s in all"
}
trap report EXIT

export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y "${packages[@]}"
phase apt

# Ninja, for a new tree; a tree an earlier version of this script configured with Make is configured afresh
# (the build is all that is lost), since CMake cannot switch a tree's generator in place.
configure() {
  local tree=$1; shift
  if [ -f "$tree/CMakeCache.txt" ] && ! grep -qx 'CMAKE_GENERATOR:INTERNAL=Ninja' "$tree/CMakeCache.txt"; then
    rm -rf "$tree/CMakeCache.txt" "$tree/CMakeFiles"
  fi
  cmake -S . -B "$tree" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
}

# Built here, for this machine (-march=native): the forward pass's products use every vector instruction it has.
configure build -DATTNSCOPE_NATIVE=ON

if [ "$mode" = run ]; then
  # Only what the window needs (the core, the UI library and the window), not the tests and the CLI, so
  # a newcomer sees the window sooner.
  cmake --build build -j"$(nproc)" --target attnscope
  phase build
  trap - EXIT
  report
  exec ./build/bin/attnscope
fi
cmake --build build -j"$(nproc)"
phase "native build"
# UI tests draw on Qt's offscreen platform, so no display is needed. Tests run side by side, one per core:
# none asserts a wall-clock time, the CPU budgets are relative to a measure taken in the same process, and
# every wait for another thread is a generous bound for a hang (tests/ui/waits.h).
QT_QPA_PLATFORM=offscreen ctest --test-dir build --output-on-failure --timeout 900 -j"$(nproc)"
phase "native tests"

# The suite again under AddressSanitizer + UndefinedBehaviorSanitizer (docs/testing.md): any
# memory error, undefined behaviour or leak fails the test it happens in. Leaks are suppressed only inside
# system libraries, each with its reason, in scripts/lsan-suppressions.txt. A separate, portable build
# tree so the optimised one above is untouched; ATTNSCOPE_SANITIZE compiles it at -O1 (CMakeLists.txt).
configure build-sanitize -DATTNSCOPE_SANITIZE=ON
cmake --build build-sanitize -j"$(nproc)"
phase "sanitizer build"
export ASAN_OPTIONS=detect_leaks=1
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan-suppressions.txt:print_suppressions=0"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Every test runs here, the window's and the CLI's included (Qt's offscreen platform, as above).
QT_QPA_PLATFORM=offscreen ctest --test-dir build-sanitize --output-on-failure --timeout 1800 -j"$(nproc)"
phase "sanitizer tests"
