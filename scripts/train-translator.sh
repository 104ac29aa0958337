#!/usr/bin/env bash
# Trains the built-in translator from scratch and writes it to resources/builtin-translator, bit for bit
# what is committed there when run on the same kind of machine with the same build (x86-64 with AVX-512, the
# README's native Release build): the parallel corpus comes from core/train/translator/translation.cpp with a fixed
# seed, the weights start from a fixed seed, batches depend only on the seed and the step, and the gradient
# is summed over a fixed number of shards in a fixed order, so neither timing nor the number of threads
# changes a bit. The last line printed holds the held-out scores (docs/builtin-model.md).
#
#   bash scripts/train-translator.sh           train, then replace resources/builtin-translator
#   bash scripts/train-translator.sh --check   train into a temporary folder and compare with the committed files
#
# Needs the build tools of the README's set-up; the training itself takes about a minute on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-write}
case "$mode" in write|--check) ;; *) echo "usage: $0 [--check]" >&2; exit 2 ;; esac

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DATTNSCOPE_NATIVE=ON > /dev/null
cmake --build build -j"$(nproc)" --target attnscope-cli

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The folder's name becomes the model's name.
out="$work/builtin-translator"

start=$(date +%s)
./build/bin/attnscope-cli train-translator --out "$out" --pairs 100000 --data-seed 1 --held-out 500 \
  --encoder-layers 2 --decoder-layers 2 --heads 4 --d-model 64 --d-ff 256 \
  --steps 8000 --batch 32 --learning-rate 0.003 --warmup 100 --seed 1 --log-every 1000
end=$(date +%s)
echo "trained and scored in $((end - start)) s"

files=(config.json model.safetensors vocab.txt lexicon.tsv)
if [ "$mode" = --check ]; then
  for f in "${files[@]}"; do
    if cmp -s "$out/$f" "resources/builtin-translator/$f"; then echo "same: $f"; else echo "DIFFERENT: $f"; status=1; fi
  done
  exit "${status:-0}"
fi
mkdir -p resources/builtin-translator
for f in "${files[@]}"; do cp "$out/$f" "resources/builtin-translator/$f"; done
sha256sum resources/builtin-translator/*
