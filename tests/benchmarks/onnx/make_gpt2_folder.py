#!/usr/bin/python3
"""Write a GPT-2-small-shaped Hugging Face model folder with fixed random weights.

Part of the ONNX Runtime side-by-side benchmark (see compare.sh beside this file). The folder has the
exact shapes of GPT-2 small (12 layers, 12 heads, d_model 768, d_ff 3072, vocabulary 50,257, context
1,024) so that AttnScope and ONNX Runtime time the same amount of work, but its weights are drawn from a
seeded generator, so nothing has to be downloaded. Both sides read the same file, which makes it an
oracle for AttnScope's attention weights too.

    /usr/bin/python3 tests/benchmarks/onnx/make_gpt2_folder.py [--out DIR] [--seed S] [--force]

Writes config.json, model.safetensors (F32, about 500 MB, Hugging Face's GPT-2 tensor names and Conv1D
(in, out) layouts) and the tokenizer files from tests/data/gpt2-tokenizer/. An existing complete folder is
left alone unless --force is given. Needs only numpy (Debian: apt-get install -y python3-numpy).
"""

import argparse
import json
import os
import shutil
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
TOKENIZER_DIR = os.path.join(REPO, "tests", "data", "gpt2-tokenizer")
TOKENIZER_FILES = ("vocab.json", "merges.txt", "NOTICE.md")

# GPT-2 small. Letters used in the shape comments: V vocabulary, P positions, D model width, F feed-forward.
CONFIG = {
    "model_type": "gpt2",
    "architectures": ["GPT2LMHeadModel"],
    "n_layer": 12,
    "n_head": 12,
    "n_embd": 768,
    "n_inner": None,  # None means 4 * n_embd, as in Hugging Face's config
    "n_positions": 1024,
    "n_ctx": 1024,
    "vocab_size": 50257,
    "activation_function": "gelu_new",
    "layer_norm_epsilon": 1e-5,
    "tie_word_embeddings": True,
}


def tensor_plan(cfg):
    """(name, shape, kind) in the order the file stores them; kind says how the values are drawn."""
    d, v, p, n = cfg["n_embd"], cfg["vocab_size"], cfg["n_positions"], cfg["n_layer"]
    f = cfg["n_inner"] or 4 * d
    plan = [("wte.weight", (v, d), "matrix"),  # (V, D), also the unembedding (tied)
            ("wpe.weight", (p, d), "matrix")]  # (P, D)
    for i in range(n):
        h = f"h.{i}."
        plan += [
            (h + "ln_1.weight", (d,), "gain"),
            (h + "ln_1.bias", (d,), "bias"),
            (h + "attn.c_attn.weight", (d, 3 * d), "matrix"),  # (D, 3D): q, k, v side by side
            (h + "attn.c_attn.bias", (3 * d,), "bias"),
            (h + "attn.c_proj.weight", (d, d), "matrix"),
            (h + "attn.c_proj.bias", (d,), "bias"),
            (h + "ln_2.weight", (d,), "gain"),
            (h + "ln_2.bias", (d,), "bias"),
            (h + "mlp.c_fc.weight", (d, f), "matrix"),  # (D, F)
            (h + "mlp.c_fc.bias", (f,), "bias"),
            (h + "mlp.c_proj.weight", (f, d), "matrix"),  # (F, D)
            (h + "mlp.c_proj.bias", (d,), "bias"),
        ]
    plan += [("ln_f.weight", (d,), "gain"), ("ln_f.bias", (d,), "bias")]
    return plan


def draw(rng, shape, kind):
    # Small weights as GPT-2's own initialisation uses (std 0.02); gains scattered around 1 and biases
    # around 0 rather than exactly 1 and 0, so a mistake in either path shows up in the attention weights.
    x = rng.standard_normal(shape, dtype=np.float32)
    if kind == "matrix":
        return x * np.float32(0.02)
    if kind == "gain":
        return np.float32(1.0) + x * np.float32(0.1)
    return x * np.float32(0.02)


def write_safetensors(path, cfg, seed):
    plan = tensor_plan(cfg)
    header = {"__metadata__": {"format": "pt", "made_by": "attnscope make_gpt2_folder.py", "seed": str(seed)}}
    offset = 0
    for name, shape, _ in plan:
        size = 4 * int(np.prod(shape))
        header[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    # Pad the header with spaces so the data starts on an 8-byte boundary, as the reference writer does.
    text += b" " * (-len(text) % 8)

    rng = np.random.default_rng(seed)
    partial = path + ".partial"
    with open(partial, "wb") as out:
        out.write(struct.pack("<Q", len(text)))
        out.write(text)
        for name, shape, kind in plan:
            out.write(np.ascontiguousarray(draw(rng, shape, kind), dtype="<f4").tobytes())
    # Renamed only once complete, so an interrupted run never leaves a file that looks finished.
    os.replace(partial, path)


def folder_complete(out):
    names = ["config.json", "model.safetensors"] + list(TOKENIZER_FILES)
    return all(os.path.isfile(os.path.join(out, n)) for n in names)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("ATTNSCOPE_GPT2_FOLDER", "/tmp/attnscope-gpt2-onnx-folder"))
    ap.add_argument("--seed", type=int, default=20241)
    ap.add_argument("--force", action="store_true", help="rewrite the folder even if it is already there")
    args = ap.parse_args()

    if folder_complete(args.out) and not args.force:
        print(f"{args.out}: already there (--force rewrites it)")
        return 0
    os.makedirs(args.out, exist_ok=True)
    for name in TOKENIZER_FILES:
        shutil.copyfile(os.path.join(TOKENIZER_DIR, name), os.path.join(args.out, name))
    write_safetensors(os.path.join(args.out, "model.safetensors"), CONFIG, args.seed)
    # config.json last: its presence plus the rest marks a finished folder.
    with open(os.path.join(args.out, "config.json"), "w", encoding="utf-8") as f:
        json.dump(CONFIG, f, indent=2)
        f.write("\n")
    print(f"{args.out}: wrote a GPT-2-small-shaped folder (seed {args.seed})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
