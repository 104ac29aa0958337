#!/usr/bin/env bash
# One script behind the README's two set-up commands, so they cannot drift apart:
#   bash scripts/setup-debian.sh run    install what is needed, build, start the window on the default model
#   bash scripts/setup-debian.sh test   install what is needed, build, run every test
# Run as root on Debian 12. Everything comes from Debian's packages; nothing else is downloaded.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-}
case "$mode" in run|test) ;; *) echo "usage: $0 run|test" >&2; exit 2 ;; esac

packages=(
  g++ cmake make pkg-config        # toolchain
  qt6-base-dev qt6-svg-dev libgl-dev # Qt Widgets, Test, PrintSupport, Concurrent; SVG export
  libqcustomplot-dev               # heatmaps and plots (its Qt 6 build)
  libeigen3-dev                    # the transformer core
  nlohmann-json3-dev               # CLI output, config.json and safetensors headers
  libpcre2-dev                     # GPT-2's pre-tokenisation pattern with Unicode classes
  libcli11-dev                     # attnscope-cli's subcommands and per-command --help (header-only)
)
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y "${packages[@]}"

# Built here, for this machine: -march=native roughly halves GPT-2 forward times (see README, Speed).
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DATTNSCOPE_NATIVE=ON
cmake --build build -j"$(nproc)"

if [ "$mode" = run ]; then
  exec ./build/bin/attnscope
fi
# UI tests draw on Qt's offscreen platform, so no display is needed.
QT_QPA_PLATFORM=offscreen ctest --test-dir build --output-on-failure --timeout 900
