#!/usr/bin/env bash
# AttnScope's forward pass beside ONNX Runtime's, on the same GPT-2-small-shaped model, in one run.
#
#     tests/benchmarks/onnx/compare.sh [--tokens "8 64 256 1024"] [--threads "1 2"] [--repeat R] [--rounds N]
#                                      [--pages window|huge]
#
# 1. Writes a GPT-2-small-shaped folder with seeded random weights (make_gpt2_folder.py), once.
# 2. Exports it to ONNX with every layer's attention as an output (export_gpt2_onnx.py), again only when the
#    folder or the exporter is newer than the .onnx file.
# 3. Checks the numbers: one short sentence through `attnscope-cli attention` and, with the same token ids,
#    through ONNX Runtime; prints the largest difference over every layer, head and cell, and fails above 1e-4.
# 4. Times both, interleaved (AttnScope then ORT for each size, the whole sweep N rounds over, because this
#    shared machine's speed drifts by tens of percent over a minute), and prints a Markdown table of the median
#    over rounds of each round's median, and the fastest single pass. Both sides do the window's work: every
#    layer's attention and the last position's next-token logits. AttnScope's weights stay on the pages the
#    window leaves them on (4 KB; `--pages huge` times them on 2 MB pages, as attnscope-cli's own commands
#    do), and ONNX Runtime's on the pages it allocates (4 KB under Debian's "madvise" setting), so both sides
#    run as a person's program would. Each row also gives AttnScope's pass over the time its threads take to
#    read the weights' bytes once (1 would be a pass at memory's pace).
# 5. Names the processor (lscpu's model name and vector extensions) and the kernel set AttnScope chose.
#
# Needs: an attnscope-cli build ($ATTNSCOPE_CLI, or build/bin/attnscope-cli under the repository) and
# Debian's /usr/bin/python3 with python3-numpy. For the ORT side also python3-onnx and node with
# onnxruntime-node installed outside the repository:
#     apt-get install -y python3-onnx python3-numpy
#     mkdir -p /tmp/attnscope-ort && cd /tmp/attnscope-ort && npm install --ignore-scripts onnxruntime-node@1.31.1
# The ONNX Runtime version is pinned ($ATTNSCOPE_ORT_VERSION, 1.31.1), so figures from different days compare
# the same program; another installed version stops the script.
# Without the ORT side the script still times AttnScope, says what is missing, and exits 0.
#
# Environment: ATTNSCOPE_CLI, ATTNSCOPE_PYTHON (/usr/bin/python3), ATTNSCOPE_ORT_DIR (/tmp/attnscope-ort),
# ATTNSCOPE_GPT2_FOLDER (/tmp/attnscope-gpt2-onnx-folder), ATTNSCOPE_ONNX_FILE (/tmp/attnscope-gpt2.onnx),
# ATTNSCOPE_BENCH_TOKENS ("64 256"), ATTNSCOPE_BENCH_THREADS ("1 2"), ATTNSCOPE_BENCH_REPEAT (5),
# ATTNSCOPE_ORT_VERSION (1.31.1), ATTNSCOPE_KERNELS (the kernel set, as for every AttnScope program).
# Exit codes: 0 done (also with the ORT side skipped), 1 a step failed or the attention differs, 2 bad usage.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
cli=${ATTNSCOPE_CLI:-$repo/build/bin/attnscope-cli}
py=${ATTNSCOPE_PYTHON:-/usr/bin/python3}
ort_dir=${ATTNSCOPE_ORT_DIR:-/tmp/attnscope-ort}
folder=${ATTNSCOPE_GPT2_FOLDER:-/tmp/attnscope-gpt2-onnx-folder}
onnx_file=${ATTNSCOPE_ONNX_FILE:-/tmp/attnscope-gpt2.onnx}
tokens_list=${ATTNSCOPE_BENCH_TOKENS:-64 256}
threads_list=${ATTNSCOPE_BENCH_THREADS:-1 2}
repeat=${ATTNSCOPE_BENCH_REPEAT:-5}
rounds=${ATTNSCOPE_BENCH_ROUNDS:-3}
pages=window
ort_version=${ATTNSCOPE_ORT_VERSION:-1.31.1}
check_text="The quick brown fox jumps over the lazy dog, and the dog does not seem to mind at all."
tolerance=1e-4

usage() { sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
        --tokens) [ $# -ge 2 ] || usage; tokens_list=$2; shift 2 ;;
        --threads) [ $# -ge 2 ] || usage; threads_list=$2; shift 2 ;;
        --repeat) [ $# -ge 2 ] || usage; repeat=$2; shift 2 ;;
        --rounds) [ $# -ge 2 ] || usage; rounds=$2; shift 2 ;;
        --pages) [ $# -ge 2 ] || usage; pages=$2; shift 2 ;;
        -h|--help) usage ;;
        *) echo "error: unknown argument '$1'" >&2; usage ;;
    esac
done

die() { echo "error: $*" >&2; exit 1; }
case $pages in window|huge) ;; *) echo "error: --pages takes window or huge, not '$pages'" >&2; usage ;; esac
say() { echo "compare.sh: $*" >&2; }

[ -x "$cli" ] || die "no attnscope-cli at $cli; build it with: cmake -S $repo -B $repo/build -DCMAKE_BUILD_TYPE=Release -DATTNSCOPE_NATIVE=ON && cmake --build $repo/build --target attnscope-cli (or set ATTNSCOPE_CLI)."
"$py" -c 'import numpy' 2>/dev/null \
    || die "$py cannot import numpy, which writes the model folder; install it with: apt-get install -y python3-numpy"

work=$(mktemp -d /tmp/attnscope-onnx-compare.XXXXXX)
trap 'rm -rf "$work"' EXIT

# --- 1. The model folder both sides read ---------------------------------------------------------------------
"$py" "$here/make_gpt2_folder.py" --out "$folder" >&2

# --- Is the ONNX Runtime side possible? Collect everything missing into one sentence. -------------------------
missing=()
"$py" -c 'import onnx' 2>/dev/null \
    || missing+=("python3-onnx for $py (apt-get install -y python3-onnx python3-numpy)")
if ! command -v node >/dev/null 2>&1; then
    missing+=("node with onnxruntime-node (apt-get install -y nodejs npm && mkdir -p $ort_dir && cd $ort_dir && npm install --ignore-scripts onnxruntime-node@$ort_version)")
elif ! node -e "require('node:module').createRequire(process.argv[1] + '/package.json')('onnxruntime-node')" "$ort_dir" >/dev/null 2>&1; then
    missing+=("onnxruntime-node in $ort_dir (mkdir -p $ort_dir && cd $ort_dir && npm install --ignore-scripts onnxruntime-node@$ort_version)")
else
    installed=$(node -e "console.log(require('node:module').createRequire(process.argv[1] + '/package.json')('onnxruntime-node/package.json').version)" "$ort_dir")
    [ "$installed" = "$ort_version" ] \
        || die "$ort_dir holds onnxruntime-node $installed, and the comparison is pinned to $ort_version: cd $ort_dir && npm install --ignore-scripts onnxruntime-node@$ort_version (or set ATTNSCOPE_ORT_VERSION=$installed to time that one, and say so)."
fi
ort_ok=1
skip_sentence=""
if [ ${#missing[@]} -gt 0 ]; then
    ort_ok=0
    joined=$(printf '%s; and ' "${missing[@]}")
    skip_sentence="The ONNX Runtime side was skipped because this machine lacks ${joined%; and }."
fi

bench_ort() { ATTNSCOPE_ORT_DIR=$ort_dir node "$here/bench_ort.mjs" --model "$onnx_file" "$@"; }

if [ $ort_ok = 1 ]; then
    # --- 2. Export, only when the weights or the exporter changed since the last export ------------------------
    if [ "$onnx_file" -nt "$folder/model.safetensors" ] && [ "$onnx_file" -nt "$folder/config.json" ] \
        && [ "$onnx_file" -nt "$here/export_gpt2_onnx.py" ]; then
        say "$onnx_file is up to date"
    else
        "$py" "$here/export_gpt2_onnx.py" --folder "$folder" --out "$onnx_file" >&2
    fi

    # --- 3. The numbers: the same token ids through both, every layer and head compared ------------------------
    "$cli" attention --model "$folder" --text "$check_text" > "$work/attnscope.json" \
        || die "attnscope-cli attention failed on $folder."
    ids=$("$py" -c 'import json, sys; print(",".join(map(str, json.load(open(sys.argv[1]))["token_ids"])))' \
        "$work/attnscope.json")
    bench_ort --ids "$ids" --repeat 1 --dump-attention "$work/ort.json" --dump-layers all > /dev/null \
        || die "bench_ort.mjs failed on $onnx_file."
    "$py" - "$work/attnscope.json" "$work/ort.json" "$tolerance" <<'EOF' || exit 1
import json, sys
ours, theirs, tolerance = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), float(sys.argv[3])
a, o = ours["attention"], theirs["attention"]  # [layer][head][query][key]
if ours["token_ids"] != theirs["token_ids"] or theirs["layers"] != list(range(len(a))):
    sys.exit("error: the two sides did not run the same ids or layers")
worst, where = 0.0, None
for layer, (la, lo) in enumerate(zip(a, o)):
    if len(la) != len(lo):
        sys.exit(f"error: layer {layer} has {len(la)} heads in AttnScope and {len(lo)} in ONNX Runtime")
    for head, (ha, ho) in enumerate(zip(la, lo)):
        for q, (ra, ro) in enumerate(zip(ha, ho)):
            if len(ra) != len(ro) or len(ha) != len(ho):
                sys.exit(f"error: layer {layer} head {head} differs in shape between the two sides")
            for k, (x, y) in enumerate(zip(ra, ro)):
                if abs(x - y) > worst:
                    worst, where = abs(x - y), (layer, head, q, k)
T, L, H = len(ours["token_ids"]), len(a), len(a[0])
print(f"Attention check: {T} tokens, {L} layers x {H} heads; largest |AttnScope - ONNX Runtime| = {worst:.3g}"
      + (f" (layer {where[0]}, head {where[1]}, query {where[2]}, key {where[3]})" if where else "")
      + f", tolerance {tolerance:g}.")
if not worst <= tolerance:
    print("error: the attention weights differ by more than the tolerance.", file=sys.stderr)
    sys.exit(1)
EOF
fi

# --- 4. Timing, interleaved so both sides see the same machine load ----------------------------------------------
rows="$work/rows.jsonl"
: > "$rows"
for round in $(seq "$rounds"); do
for n in $tokens_list; do
    for k in $threads_list; do
        say "round $round of $rounds: timing $n tokens, $k thread(s)"
        ours=$("$cli" bench --model "$folder" --tokens "$n" --threads "$k" --repeat "$repeat" --pages "$pages" 2>"$work/bench.err") \
            || { cat "$work/bench.err" >&2; die "attnscope-cli bench failed at $n tokens, $k thread(s)."; }
        theirs=null
        if [ $ort_ok = 1 ]; then
            theirs=$(bench_ort --tokens "$n" --threads "$k" --repeat "$repeat") \
                || die "bench_ort.mjs failed at $n tokens, $k thread(s)."
        fi
        echo "{\"tokens\": $n, \"threads\": $k, \"attnscope\": $ours, \"ort\": $theirs}" >> "$rows"
    done
done
done

machine=$(LC_ALL=C lscpu | sed -n 's/^Model name: *//p' | head -n 1)
extensions=$(grep -m 1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|fma|avx512f|avx512bw|avx512dq|avx512vl|avx512_bf16|amx_tile)$' | paste -sd ' ' -)
"$py" - "$rows" "$repeat" "$rounds" "$machine" "$extensions" <<'EOF'
import json, statistics, sys
# One row per (tokens, threads): the median over rounds of each round's median, the fastest pass of all.
cells = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    cells.setdefault((r["tokens"], r["threads"]), []).append(r)
def merge(group):
    a = dict(group[0]["attnscope"])
    a["forward_ms_median"] = statistics.median(g["attnscope"]["forward_ms_median"] for g in group)
    a["forward_ms_min"] = min(g["attnscope"]["forward_ms_min"] for g in group)
    a["stream_read_ms"] = statistics.median(g["attnscope"]["stream_read_ms"] for g in group)
    a["forward_over_stream"] = statistics.median(g["attnscope"]["forward_over_stream"] for g in group)
    o = None
    if group[0]["ort"]:
        o = dict(group[0]["ort"])
        o["median_ms"] = statistics.median(g["ort"]["median_ms"] for g in group)
        o["min_ms"] = min(g["ort"]["min_ms"] for g in group)
    return {"tokens": group[0]["tokens"], "threads": group[0]["threads"], "attnscope": a, "ort": o}
rows = [merge(g) for g in cells.values()]
fmt = lambda ms: f"{ms:.1f}" if ms >= 10 else f"{ms:.2f}"
version = next((r["ort"]["ort_version"] for r in rows if r["ort"]), None)
print()
runs = "1 run" if sys.argv[2] == "1" else f"{sys.argv[2]} runs"
rounds = "1 round" if sys.argv[3] == "1" else f"{sys.argv[3]} rounds"
print(f"GPT-2 small shape, all attention kept and the last position's logits, {runs} after one warm-up per"
      f" side and size, {rounds}; median over rounds of each round's median, and the fastest pass (ms)"
      + (f"; ONNX Runtime {version}" if version else "") + ":")
compute = rows[0]["attnscope"].get("compute", {})
print(f"Processor: {sys.argv[4]} ({sys.argv[5] or 'no AVX2'}); AttnScope's kernels: "
      f"{compute.get('kernel_choice', 'not reported by this build')}; AttnScope's pages: {rows[0]['attnscope'].get('pages', 'huge')}.")
print()
print("| tokens | threads | AttnScope median | AttnScope min | ORT median | ORT min | AttnScope ÷ ORT | weights read | AttnScope ÷ read |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
fewer = False
for r in rows:
    a, o = r["attnscope"], r["ort"]
    threads = str(r["threads"])
    if a["threads"] != r["threads"]:
        threads += f" (AttnScope {a['threads']})"
        fewer = True
    cells = [str(r["tokens"]), threads, fmt(a["forward_ms_median"]), fmt(a["forward_ms_min"])]
    if o:
        cells += [fmt(o["median_ms"]), fmt(o["min_ms"]), f"{a['forward_ms_median'] / o['median_ms']:.2f}"]
    else:
        cells += ["–", "–", "–"]
    cells += [fmt(a["stream_read_ms"]), f"{a['forward_over_stream']:.2f}"]
    print("| " + " | ".join(cells) + " |")
print()
if version:
    print("The ratio is AttnScope's median over ORT's: above 1 means ONNX Runtime was faster.")
print("\"Weights read\" is the median time AttnScope's threads take to read as many bytes as the model's 32-bit"
      " weights once, from memory no cache holds; \"AttnScope ÷ read\" is the pass over that read, per round, median.")
if fewer:
    print("Where AttnScope's thread count is shown apart, this build ran its forward pass on that many threads"
          " (Eigen uses more only in an OpenMP build).")
EOF

if [ $ort_ok = 0 ]; then
    echo
    echo "$skip_sentence"
fi
exit 0
