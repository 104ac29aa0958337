#!/usr/bin/env bash
# StreamingLLM's comparison on a model this machine runs: the built-in model's perplexity on text it never
# saw, under the full causal mask, sliding windows alone, and the same windows with attention sinks kept.
# The text is the built-in corpus's grammar from another seed (training used seed 1), cut into pieces of
# 63 words and punctuation marks, which with <bos> is the 64 tokens the model was trained on. It prints a
# Markdown table: the mean next-token loss over every piece (nats) and its exponential.
#
#   bash scripts/window-sinks-perplexity.sh [PIECES] [WINDOWS]     defaults: 50 pieces, windows "8 16"
#
# Needs the README's native build (build/bin/attnscope-cli); takes about a minute on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."

pieces=${1:-50}
windows=${2:-8 16}
cli=${ATTNSCOPE_CLI:-build/bin/attnscope-cli}
[ -x "$cli" ] || { echo "error: build the project first ($cli is missing)." >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source scripts/lib/heldout-pieces.sh
heldout_pieces "$cli" "$pieces" "$work"

masks=(causal)
for w in $windows; do masks+=("window:$w" "sinks:1,window:$w" "sinks:4,window:$w"); done

echo "| mask | mean loss (nats) | perplexity |"
echo "|---|---:|---:|"
for mask in "${masks[@]}"; do
    for f in "${files[@]}"; do
        "$cli" perplexity --model builtin --text-file "$f.txt" --mask "$mask"
        echo
    done | sed -n 's/.*"nll":\([^,}]*\).*/\1/p' |
        awk -v mask="$mask" '{ s += $1; n += 1 } END { printf "| `%s` | %.3f | %.2f |\n", mask, s / n, exp(s / n) }'
done
echo
echo "$pieces pieces of 64 tokens (<bos> and 63 words or marks) from \`attnscope-cli corpus --seed 7\`."
