#!/usr/bin/env bash
# Trains the built-in model from scratch and writes it to resources/builtin-model, bit for bit what is
# committed there when run on the same kind of machine with the same build (x86-64 with AVX-512, the
# README's native Release build): the corpus comes from the grammar in core/train with a fixed seed, the
# weights start from a fixed seed, batches depend only on the seed and the step, and the gradient is summed
# over a fixed number of shards in a fixed order, so neither timing nor the number of threads changes a bit.
#
#   bash scripts/train-builtin.sh           train, then replace resources/builtin-model
#   bash scripts/train-builtin.sh --check   train into a temporary folder and compare with the committed files
#
# Needs the build tools of the README's set-up; takes a few minutes on two cores (see docs/builtin-model.md).
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-write}
case "$mode" in write|--check) ;; *) echo "usage: $0 [--check]" >&2; exit 2 ;; esac

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DATTNSCOPE_NATIVE=ON > /dev/null
cmake --build build -j"$(nproc)" --target attnscope-cli

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cli=./build/bin/attnscope-cli
# The folder's name becomes the model's name.
out="$work/builtin"

start=$(date +%s)
"$cli" corpus --out "$work/corpus.txt" --documents 80000 --seed 1
"$cli" train --corpus "$work/corpus.txt" --out "$out" \
  --layers 3 --heads 4 --d-model 96 --d-ff 384 --context 128 \
  --steps 5000 --batch 32 --sequence-length 64 --learning-rate 0.003 --warmup 100 --seed 2 \
  --log-every 250 --save-every 100000
end=$(date +%s)
echo "trained in $((end - start)) s"
"$cli" probe-heads --model "$out"

files=(config.json model.safetensors vocab.txt)
if [ "$mode" = --check ]; then
  for f in "${files[@]}"; do
    if cmp -s "$out/$f" "resources/builtin-model/$f"; then echo "same: $f"; else echo "DIFFERENT: $f"; status=1; fi
  done
  exit "${status:-0}"
fi
mkdir -p resources/builtin-model
for f in "${files[@]}"; do cp "$out/$f" "resources/builtin-model/$f"; done
sha256sum resources/builtin-model/*
