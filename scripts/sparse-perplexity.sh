#!/usr/bin/env bash
# Sparse patterns against the full causal mask and window + sinks, at a comparable cost: the built-in
# model's perplexity on text it never saw under each mask, beside the mean number of keys a query kept.
# The text is the one scripts/window-sinks-perplexity.sh reads (scripts/lib/heldout-pieces.sh): 64-token
# pieces of the built-in corpus's grammar from a seed training did not use. It prints a
# Markdown table: the mean keys per query, the mean next-token loss over every piece (nats), its exponential.
#
#   bash scripts/sparse-perplexity.sh [PIECES]     default: 50 pieces
#
# Needs the README's native build (build/bin/attnscope-cli, or the one ATTNSCOPE_CLI names).
set -euo pipefail
cd "$(dirname "$0")/.."

pieces=${1:-50}
cli=${ATTNSCOPE_CLI:-build/bin/attnscope-cli}
[ -x "$cli" ] || { echo "error: build the project first ($cli is missing)." >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source scripts/lib/heldout-pieces.sh
heldout_pieces "$cli" "$pieces" "$work"

masks=(causal window:8 sinks:1,window:8 "global:0;window:8" "global:0,16,32,48;window:6" dilated:8,2 dilated:4,4
       block:16 random:7,1 random:7,2 "global:0;window:4")

echo "| mask | keys per query | mean loss (nats) | perplexity |"
echo "|---|---:|---:|---:|"
for mask in "${masks[@]}"; do
    for f in "${files[@]}"; do
        "$cli" perplexity --model builtin --text-file "$f.txt" --mask "$mask"
        echo
    done | sed -n 's/.*"nll":\([^,}]*\).*"keys_per_query":\([^,}]*\).*/\1 \2/p' |
        awk -v mask="$mask" '{ s += $1; k += $2; n += 1 } END { printf "| `%s` | %.2f | %.3f | %.2f |\n", mask, k / n, s / n, exp(s / n) }'
done
echo
echo "$pieces pieces of 64 tokens (<bos> and 63 words or marks) from \`attnscope-cli corpus --seed 7\`."
