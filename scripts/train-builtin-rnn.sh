#!/usr/bin/env bash
# Trains the built-in recurrent model (`builtin-rnn`, a one-layer GRU) from scratch and writes it to
# resources/builtin-rnn, bit for bit what is committed there when run on the same kind of machine with the
# same build: the corpus and the vocabulary are the built-in transformer's (the same generator and seed, its
# vocab.txt), the weights start from a fixed seed, batches depend only on the seed and the step, and the
# gradient is summed over a fixed number of shards in a fixed order, as scripts/train-builtin.sh's are.
#
#   bash scripts/train-builtin-rnn.sh           train, then replace resources/builtin-rnn
#   bash scripts/train-builtin-rnn.sh --check   train into a temporary folder and compare with the committed files
#
# BUILD=DIR uses another build folder than build/ (configured as the README's native Release build).
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-write}
case "$mode" in write|--check) ;; *) echo "usage: $0 [--check]" >&2; exit 2 ;; esac
build=${BUILD:-build}

if [ ! -f "$build/build.ninja" ] && [ ! -f "$build/Makefile" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DATTNSCOPE_NATIVE=ON > /dev/null
fi
cmake --build "$build" -j"$(nproc)" --target attnscope-cli

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cli=$build/bin/attnscope-cli
# The folder's name becomes the model's name.
out="$work/builtin-rnn"

start=$(date +%s)
"$cli" corpus --out "$work/corpus.txt" --documents 80000 --seed 1
"$cli" train-gru --corpus "$work/corpus.txt" --vocab resources/builtin-model/vocab.txt --out "$out" \
  --hidden 176 --context 1024 --steps 2000 --batch 32 --sequence-length 64 --learning-rate 0.003 --warmup 100 \
  --seed 1 --log-every 250
end=$(date +%s)
echo "trained in $((end - start)) s"
"$cli" recall --model "$out" --probe pronoun --distances 0,1,2,4,8,16,32 --sentences 100

files=(config.json model.safetensors vocab.txt)
if [ "$mode" = --check ]; then
  for f in "${files[@]}"; do
    if cmp -s "$out/$f" "resources/builtin-rnn/$f"; then echo "same: $f"; else echo "DIFFERENT: $f"; status=1; fi
  done
  exit "${status:-0}"
fi
mkdir -p resources/builtin-rnn
for f in "${files[@]}"; do cp "$out/$f" "resources/builtin-rnn/$f"; done
sha256sum resources/builtin-rnn/*
