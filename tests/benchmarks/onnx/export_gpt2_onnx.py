#!/usr/bin/python3
"""Turn a GPT-2 model folder into an ONNX graph that outputs every layer's attention weights.

Part of the ONNX Runtime side-by-side benchmark (see compare.sh beside this file). The graph is built
node by node with onnx.helper from the folder's model.safetensors (read with numpy; no PyTorch), so
ONNX Runtime computes what AttnScope's `bench` computes: the full pre-LN GPT-2 forward pass with every
softmax kept.

    /usr/bin/python3 tests/benchmarks/onnx/export_gpt2_onnx.py --folder DIR --out FILE.onnx

Input:   input_ids      int64 (1, T), T from 1 to the context length
Outputs: attn_0..attn_{L-1}  float (1, H, T, T), the row-wise softmax of each layer (masked entries 0)
         logits_last    float (1, V), the tied unembedding of the last position only (cheap)
Opset 17 (LayerNormalization is a standard op there). Needs python3-onnx and python3-numpy (Debian).
"""

import argparse
import json
import math
import os
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


def read_safetensors(path):
    """Every tensor of an F32 safetensors file as a numpy array (memory-mapped, not copied)."""
    with open(path, "rb") as f:
        (header_len,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(header_len))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + header_len)
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        if entry["dtype"] != "F32":
            raise SystemExit(f"{path}: {name} is {entry['dtype']}; this exporter reads F32 only.")
        begin, end = entry["data_offsets"]
        tensors[name] = data[begin:end].view("<f4").reshape(entry["shape"])
    return tensors


class GraphBuilder:
    """Collects nodes and initializers; every helper returns the name of the tensor it made."""

    def __init__(self):
        self.nodes, self.inits, self.count = [], [], 0

    def fresh(self, stem):
        self.count += 1
        return f"{stem}_{self.count}"

    def const(self, stem, array):
        name = self.fresh(stem)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def weight(self, name, array):
        # Weights keep their Hugging Face names so the graph is easy to read in a viewer.
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(array, dtype=np.float32), name))
        return name

    def op(self, op_type, inputs, out=None, **attrs):
        out = out or self.fresh(op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], **attrs))
        return out


def build(tensors, cfg):
    L, H, D = cfg["n_layer"], cfg["n_head"], cfg["n_embd"]
    V, P = cfg["vocab_size"], cfg.get("n_positions") or cfg["n_ctx"]
    Dh = D // H
    eps = float(cfg.get("layer_norm_epsilon") or 1e-5)
    if cfg.get("activation_function", "gelu_new") not in ("gelu_new", "gelu_pytorch_tanh"):
        raise SystemExit("this exporter writes the tanh GELU only (activation_function gelu_new).")
    # Letters in the shape comments: T tokens, D model width, H heads, Dh head width, F feed-forward, V, P.
    g = GraphBuilder()

    # 1. Token plus learned position embeddings. T is read from the input so one graph serves every length.
    wte = g.weight("wte.weight", tensors["wte.weight"])  # (V, D)
    wpe = g.weight("wpe.weight", tensors["wpe.weight"])  # (P, D)
    t_vec = g.op("Shape", ["input_ids"], start=1, end=2)  # (1,) holding T
    zero = g.const("zero", np.array([0], dtype=np.int64))
    x = g.op("Gather", [wte, "input_ids"], axis=0)  # (1, T, D)
    pos = g.op("Slice", [wpe, zero, t_vec, zero])  # (T, D): rows 0..T-1
    x = g.op("Add", [x, pos])

    # 2. The causal mask: a lower triangle of the full context, cut to T x T; a slice keeps it exact for any T.
    tri = g.const("causal_full", np.tril(np.ones((P, P), dtype=bool)))  # (P, P)
    tt = g.op("Concat", [t_vec, t_vec], axis=0)  # (2,) = [T, T]
    axes01 = g.const("axes01", np.array([0, 1], dtype=np.int64))
    causal = g.op("Slice", [tri, g.const("zeros2", np.zeros(2, dtype=np.int64)), tt, axes01])  # (T, T)
    neg_inf = g.const("neg_inf", np.array(-np.inf, dtype=np.float32))
    scale = g.const("inv_sqrt_dh", np.array(1.0 / math.sqrt(Dh), dtype=np.float32))
    split_qkv = g.const("split_qkv", np.array([D, D, D], dtype=np.int64))
    heads_shape = g.const("heads_shape", np.array([1, -1, H, Dh], dtype=np.int64))
    model_shape = g.const("model_shape", np.array([1, -1, D], dtype=np.int64))

    def layer_norm(inp, prefix):
        return g.op("LayerNormalization", [inp, g.weight(prefix + ".weight", tensors[prefix + ".weight"]),
                                           g.weight(prefix + ".bias", tensors[prefix + ".bias"])],
                    axis=-1, epsilon=eps)

    def linear(inp, prefix):
        # GPT-2's Conv1D stores (in, out), which is exactly MatMul's right operand: no transpose.
        y = g.op("MatMul", [inp, g.weight(prefix + ".weight", tensors[prefix + ".weight"])])
        return g.op("Add", [y, g.weight(prefix + ".bias", tensors[prefix + ".bias"])])

    c_half = g.const("half", np.array(0.5, dtype=np.float32))
    c_one = g.const("one", np.array(1.0, dtype=np.float32))
    c_three = g.const("three", np.array(3.0, dtype=np.float32))
    c_cubic = g.const("gelu_cubic", np.array(0.044715, dtype=np.float32))
    c_root = g.const("sqrt_2_over_pi", np.array(math.sqrt(2.0 / math.pi), dtype=np.float32))

    def gelu_tanh(u):
        # 0.5 u (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3))), written the way the published GPT-2 code does so
        # that ONNX Runtime's own GELU fusion can recognise it.
        cube = g.op("Mul", [g.op("Pow", [u, c_three]), c_cubic])
        inner = g.op("Mul", [g.op("Add", [u, cube]), c_root])
        return g.op("Mul", [g.op("Mul", [u, c_half]), g.op("Add", [g.op("Tanh", [inner]), c_one])])

    # 3. The blocks, pre-LN: x += attn(ln_1(x)); x += mlp(ln_2(x)).
    outputs = []
    for i in range(L):
        h = f"h.{i}"
        qkv = linear(layer_norm(x, h + ".ln_1"), h + ".attn.c_attn")  # (1, T, 3D)
        q, k, v = (g.fresh(n) for n in ("q", "k", "v"))
        g.nodes.append(helper.make_node("Split", [qkv, split_qkv], [q, k, v], axis=-1))
        q = g.op("Transpose", [g.op("Reshape", [q, heads_shape])], perm=[0, 2, 1, 3])  # (1, H, T, Dh)
        kt = g.op("Transpose", [g.op("Reshape", [k, heads_shape])], perm=[0, 2, 3, 1])  # (1, H, Dh, T)
        v = g.op("Transpose", [g.op("Reshape", [v, heads_shape])], perm=[0, 2, 1, 3])  # (1, H, T, Dh)
        scores = g.op("Mul", [g.op("MatMul", [q, kt]), scale])  # (1, H, T, T)
        masked = g.op("Where", [causal, scores, neg_inf])  # future keys get -inf, so exactly 0 after softmax
        attn = g.op("Softmax", [masked], out=f"attn_{i}", axis=-1)  # (1, H, T, T)
        outputs.append(helper.make_tensor_value_info(attn, TensorProto.FLOAT, [1, H, "T", "T"]))
        ctx = g.op("Transpose", [g.op("MatMul", [attn, v])], perm=[0, 2, 1, 3])  # (1, T, H, Dh)
        ctx = g.op("Reshape", [ctx, model_shape])  # (1, T, D): heads side by side
        x = g.op("Add", [x, linear(ctx, h + ".attn.c_proj")])
        ff = gelu_tanh(linear(layer_norm(x, h + ".ln_2"), h + ".mlp.c_fc"))  # (1, T, F)
        x = g.op("Add", [x, linear(ff, h + ".mlp.c_proj")])

    # 4. Only the last position goes through the tied unembedding: Gemm with transB reads wte as (D, V).
    last = g.op("Gather", [layer_norm(x, "ln_f"), g.const("last", np.array(-1, dtype=np.int64))], axis=1)  # (1, D)
    g.op("Gemm", [last, wte], out="logits_last", transB=1)  # (1, V)
    outputs.append(helper.make_tensor_value_info("logits_last", TensorProto.FLOAT, [1, V]))

    graph = helper.make_graph(
        g.nodes, "attnscope_gpt2_attention",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "T"])],
        outputs, initializer=g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="attnscope export_gpt2_onnx.py")
    model.ir_version = 8  # what onnx 1.12 writes for opset 17; newer runtimes read it
    return model


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folder", required=True, help="GPT-2 folder with config.json and model.safetensors")
    ap.add_argument("--out", required=True, help="the .onnx file to write")
    args = ap.parse_args()

    with open(os.path.join(args.folder, "config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    model = build(read_safetensors(os.path.join(args.folder, "model.safetensors")), cfg)
    onnx.checker.check_model(model)  # the in-memory check; the file stays under protobuf's 2 GB limit
    partial = args.out + ".partial"
    onnx.save(model, partial)
    os.replace(partial, args.out)
    print(f"{args.out}: {cfg['n_layer']} layers, opset {OPSET}, {os.path.getsize(args.out) / 1e6:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
