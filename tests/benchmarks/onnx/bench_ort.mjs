// Times the GPT-2 ONNX graph from export_gpt2_onnx.py in ONNX Runtime, the counterpart of `attnscope-cli bench`.
//
// Part of the side-by-side benchmark (compare.sh beside this file runs it). ONNX Runtime comes from npm and is
// installed outside the repository:
//
//     mkdir -p /tmp/attnscope-ort && cd /tmp/attnscope-ort && npm install --ignore-scripts onnxruntime-node
//     node tests/benchmarks/onnx/bench_ort.mjs --model FILE.onnx --tokens N --threads K --repeat R \
//         [--ids 464,2068,...] [--dump-attention OUT.json [--dump-layers first-last|all]]
//
// ATTNSCOPE_ORT_DIR names another install folder. The input ids are i % vocab for i in 0..N-1, as `bench`
// uses, unless --ids gives them. One untimed run warms the session, then R runs are timed around session.run,
// which hands back every output (all attention tensors and the last position's logits). Prints one JSON line:
// {"tokens", "threads", "median_ms", "min_ms", "ort_version"}. --dump-attention writes the attention of the
// first and last layer (or of all with --dump-layers all), every head, as {token_ids, layers, attention} with
// attention nested [layer][head][query][key], the same nesting as `attnscope-cli attention`.
import { createRequire } from 'node:module';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

function fail(sentence, code = 2) {
  process.stderr.write(`error: ${sentence}\n`);
  process.exit(code);
}

function parseArgs(argv) {
  const opts = { tokens: null, threads: 1, repeat: 5, vocab: 50257, dumpLayers: 'first-last' };
  const names = {
    '--model': 'model', '--tokens': 'tokens', '--threads': 'threads', '--repeat': 'repeat', '--vocab': 'vocab',
    '--ids': 'ids', '--dump-attention': 'dump', '--dump-layers': 'dumpLayers',
  };
  for (let i = 0; i < argv.length; i += 2) {
    const key = names[argv[i]];
    if (!key || i + 1 >= argv.length) fail(`unknown option or missing value: ${argv[i]}`);
    opts[key] = argv[i + 1];
  }
  for (const key of ['tokens', 'threads', 'repeat', 'vocab']) {
    if (opts[key] === null) continue;
    const n = Number(opts[key]);
    if (!Number.isInteger(n) || n < 1) fail(`--${key} needs a whole number of at least 1, not '${opts[key]}'.`);
    opts[key] = n;
  }
  if (!opts.model) fail('--model FILE.onnx is required.');
  if (opts.ids === undefined && opts.tokens === null) fail('give --tokens N or --ids A,B,C.');
  if (!['first-last', 'all'].includes(opts.dumpLayers)) fail('--dump-layers is first-last or all.');
  return opts;
}

function loadOrt() {
  const dir = path.resolve(process.env.ATTNSCOPE_ORT_DIR || '/tmp/attnscope-ort');
  // Resolve as if from a file in that folder, so its node_modules is searched and nothing in the repository is.
  const require = createRequire(path.join(dir, 'package.json'));
  try {
    const ort = require('onnxruntime-node');
    let version = ort.env?.versions?.node;
    try { version = require('onnxruntime-node/package.json').version; } catch { /* keep env's figure */ }
    return { ort, version };
  } catch (e) {
    fail(`onnxruntime-node is not installed in ${dir} (mkdir -p ${dir} && cd ${dir} && ` +
         `npm install --ignore-scripts onnxruntime-node): ${e.message.split('\n')[0]}`, 3);
  }
}

function median(sorted) {
  const m = sorted.length >> 1;
  return sorted.length % 2 ? sorted[m] : 0.5 * (sorted[m - 1] + sorted[m]);
}

// (1, H, T, T) flat row-major data -> [head][query][key] arrays of plain numbers.
function nestHeads(tensor) {
  const [, heads, t] = tensor.dims;
  const out = [];
  for (let h = 0; h < heads; ++h) {
    const rows = [];
    for (let q = 0; q < t; ++q) {
      const start = (h * t + q) * t;
      rows.push(Array.from(tensor.data.subarray(start, start + t)));
    }
    out.push(rows);
  }
  return out;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (!existsSync(opts.model)) fail(`${opts.model} does not exist (export_gpt2_onnx.py writes it).`, 1);
  const { ort, version } = loadOrt();

  const ids = opts.ids !== undefined
    ? opts.ids.split(',').map((s) => BigInt(s.trim()))
    : Array.from({ length: opts.tokens }, (_, i) => BigInt(i % opts.vocab));
  const feeds = { input_ids: new ort.Tensor('int64', BigInt64Array.from(ids), [1, ids.length]) };

  const session = await ort.InferenceSession.create(opts.model, {
    intraOpNumThreads: opts.threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
  });

  // The warm-up run also gives the outputs the dump reads (the weights do not change between runs).
  const warm = await session.run(feeds);
  const ms = [];
  for (let r = 0; r < opts.repeat; ++r) {
    const start = performance.now();
    await session.run(feeds);
    ms.push(performance.now() - start);
  }
  ms.sort((a, b) => a - b);

  if (opts.dump) {
    const layerCount = session.outputNames.filter((n) => /^attn_\d+$/.test(n)).length;
    const layers = opts.dumpLayers === 'all'
      ? Array.from({ length: layerCount }, (_, i) => i)
      : [...new Set([0, layerCount - 1])];
    const dump = {
      token_ids: ids.map(Number),
      layers,
      attention: layers.map((l) => nestHeads(warm[`attn_${l}`])),
    };
    writeFileSync(opts.dump, JSON.stringify(dump));
  }

  console.log(JSON.stringify({
    tokens: ids.length, threads: opts.threads, median_ms: median(ms), min_ms: ms[0], ort_version: version,
  }));
}

main().catch((e) => fail(e.message.split('\n')[0], 1));
