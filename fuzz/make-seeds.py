#!/usr/bin/env python3
"""Writes the seed corpora in fuzz/corpus/: small valid files of every format and the hostile cases the
tests check, so each fuzz target starts from inputs that reach deep into its parser. Run from anywhere;
rerun after changing a case. The files are small (the largest is a few kB) and kept in git."""
import json
import os
import struct
import random

HERE = os.path.dirname(os.path.abspath(__file__))
SEP = b"\n@@@@\n"  # fuzz/fuzzing.h kPartSeparator


def write(target, name, data):
    folder = os.path.join(HERE, "corpus", target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode("utf-8"))


# ---- safetensors ----

def safetensors(header, data=b"", declared=None):
    h = header if isinstance(header, bytes) else header.encode()
    n = len(h) if declared is None else declared
    return struct.pack("<Q", n) + h + data


def tensor_file(tensors, dtype="F32", pad=True):
    header, data = {}, b""
    for name, shape, values in tensors:
        if dtype == "F32":
            raw = struct.pack("<%df" % len(values), *values)
        elif dtype == "F16":
            raw = struct.pack("<%de" % len(values), *values)
        else:  # BF16: the top half of each float32
            raw = b"".join(struct.pack("<f", v)[2:] for v in values)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":"))
    if pad:
        text += " " * ((8 - len(text) % 8) % 8)
    return safetensors(text, data)


def seeds_safetensors():
    t = [("a", [2, 3], [1.5, -2.25, 3.0, 0.1, -0.7, 100.0]), ("b.bias", [4], [0.0, 1e-3, -1e-3, 42.0]), ("empty", [0, 5], [])]
    write("safetensors", "valid-f32", tensor_file(t))
    write("safetensors", "valid-f16", tensor_file(t, "F16"))
    write("safetensors", "valid-bf16", tensor_file(t, "BF16"))
    write("safetensors", "metadata", safetensors('{"__metadata__":{"format":"pt"},"x":{"dtype":"BF16","shape":[1],"data_offsets":[0,2]}}', b"\0\0"))
    write("safetensors", "unaligned", safetensors('{"x":{"dtype":"F32","shape":[3],"data_offsets":[1,13]}}', b"\0" * 13))
    ok = '{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'
    hostile = {
        "empty": b"",
        "short-length": b"\x10\x00\x00",
        "length-past-end": safetensors(ok, b"\0" * 8, 4096),
        "length-over-100MB": safetensors(ok, b"\0" * 8, 200_000_000),
        "length-near-2-64": safetensors(ok, b"\0" * 8, 2**64 - 2),
        "not-json": safetensors('{"x": [', b""),
        "json-list": safetensors("[1,2,3]"),
        "entry-not-object": safetensors('{"x": 3}'),
        "dtype-missing": safetensors('{"x":{"shape":[2],"data_offsets":[0,8]}}', b"\0" * 8),
        "shape-negative": safetensors('{"x":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}', b"\0" * 8),
        "offsets-three": safetensors('{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,4,8]}}', b"\0" * 8),
        "offsets-reversed": safetensors('{"x":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}}', b"\0" * 8),
        "numel-overflow": safetensors('{"x":{"dtype":"F32","shape":[4294967296,4294967296,16],"data_offsets":[0,0]}}'),
        "huge-shape": safetensors('{"x":{"dtype":"F32","shape":[1000000000000,1000000000000],"data_offsets":[0,8]}}', b"\0" * 8),
        "giant-number": safetensors('{"x":{"dtype":"F32","shape":[1e400],"data_offsets":[0,99999999999999999999999999]}}', b"\0" * 8),
        "overlap": safetensors('{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"y":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}', b"\0" * 12),
        "dtype-i64": safetensors('{"x":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}}', b"\0" * 8),
        "deep-nesting": safetensors("[" * 100 + "]" * 100),
    }
    for name, data in hostile.items():
        write("safetensors", name, data)


# ---- config.json ----

GPT2_SMALL = {"activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1,
              "bos_token_id": 50256, "embd_pdrop": 0.1, "eos_token_id": 50256, "initializer_range": 0.02,
              "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_ctx": 1024, "n_embd": 768, "n_head": 12,
              "n_inner": None, "n_layer": 12, "n_positions": 1024, "resid_pdrop": 0.1, "vocab_size": 50257}
TINY = {"model_type": "gpt2", "n_layer": 1, "n_head": 1, "n_embd": 4, "vocab_size": 256, "n_positions": 4,
        "n_inner": 8, "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new"}


def seeds_config():
    write("config", "gpt2-small", json.dumps(GPT2_SMALL, indent=2))
    write("config", "tiny", json.dumps(TINY))
    write("config", "old-n-ctx", '{"n_layer":2,"n_head":2,"n_embd":8,"vocab_size":300,"n_ctx":16}')
    write("config", "bert-type", '{"model_type":"bert","hidden_size":768}')
    write("config", "type-not-string", '{"model_type":[1,2],"n_layer":1}')
    write("config", "not-object", "[1,2,3]")
    write("config", "not-json", '{"n_layer": ')
    write("config", "giant-numbers", '{"n_layer":1e400,"n_head":99999999999999999999999,"n_embd":-1,"vocab_size":2147483648,"n_positions":1}')
    write("config", "eps-huge", dict_json(TINY, layer_norm_epsilon=1e300))
    write("config", "eps-string", dict_json(TINY, layer_norm_epsilon="small"))
    write("config", "activation-unknown", dict_json(TINY, activation_function="swish"))
    write("config", "heads-not-dividing", dict_json(TINY, n_head=3))
    write("config", "product-too-big", dict_json(TINY, n_layer=256, n_embd=16384, n_head=128, vocab_size=1 << 20))
    write("config", "deep-nesting", '{"n_layer":' + "[" * 200 + "]" * 200 + "}")


def dict_json(base, **changes):
    d = dict(base)
    d.update(changes)
    return json.dumps(d)


# ---- GPT-2 tokenizer files ----

def bytes_to_unicode():
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    table, extra = {}, 0
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


B2U = bytes_to_unicode()


def spell(text):
    return "".join(B2U[b] for b in text.encode("utf-8"))


def small_tokenizer():
    vocab = {B2U[b]: b for b in range(256)}
    merges = []
    for pair in [(" ", "t"), ("h", "e"), (" t", "he"), ("l", "l"), ("ll", "o"), ("e", "ll"), (" ", "w"), ("o", "r"),
                 (" w", "or"), ("l", "d"), (" wor", "ld"), ("i", "n"), (" ", "a")]:
        a, b = spell(pair[0]), spell(pair[1])
        merges.append((a, b))
        if a + b not in vocab:
            vocab[a + b] = len(vocab)
    return vocab, merges


def chain_tokenizer(n):
    """Merges that build 'aaaa...' one letter at a time: a chain n merges long."""
    vocab = {B2U[b]: b for b in range(256)}
    merges, current = [], "a"
    for _ in range(n):
        merges.append((current, "a"))
        current += "a"
        vocab[current] = len(vocab)
    return vocab, merges


TEXTS = ["Hello world, the tell-tale heart", "It's   spaced\tout\n\nand 12345 numbers",
         "Ünïcödé façade — 日本語のテキスト 🙂👍🏽", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "مرحبا بالعالم",
         "e\u0301\u0301\u0301 combining", ""]


def vocab_merges_input(vocab, merges, text):
    v = json.dumps(vocab, ensure_ascii=False).encode()
    m = ("#version: 0.2\n" + "".join(a + " " + b + "\n" for a, b in merges)).encode()
    return v + SEP + m + SEP + (text if isinstance(text, bytes) else text.encode())


def tokenizer_json_input(vocab, merges, text, pairs=False):
    doc = {"version": "1.0", "model": {"type": "BPE", "vocab": vocab,
                                        "merges": [[a, b] for a, b in merges] if pairs else [a + " " + b for a, b in merges]}}
    return json.dumps(doc, ensure_ascii=False).encode() + SEP + (text if isinstance(text, bytes) else text.encode())


def seeds_tokenizers():
    vocab, merges = small_tokenizer()
    for i, text in enumerate(TEXTS):
        write("gpt2_vocab_merges", "small-%d" % i, vocab_merges_input(vocab, merges, text))
        write("tokenizer_json", "small-%d" % i, tokenizer_json_input(vocab, merges, text, pairs=i % 2 == 1))
    cv, cm = chain_tokenizer(64)
    write("gpt2_vocab_merges", "chain", vocab_merges_input(cv, cm, "a" * 200))
    write("tokenizer_json", "chain", tokenizer_json_input(cv, cm, "a" * 200))
    write("gpt2_vocab_merges", "invalid-utf8", vocab_merges_input(vocab, merges, b"ok \xff\xfe \xed\xa0\x80 \xc0\xaf"))
    write("tokenizer_json", "invalid-utf8", tokenizer_json_input(vocab, merges, b"\xf4\x90\x80\x80 nul\x00byte"))
    missing = dict(vocab)
    del missing[B2U[0]]
    write("gpt2_vocab_merges", "missing-byte", vocab_merges_input(missing, merges, "x"))
    write("gpt2_vocab_merges", "merge-unknown", vocab_merges_input(vocab, merges + [("zz", "q")], "x"))
    write("gpt2_vocab_merges", "merge-one-symbol", json.dumps(vocab).encode() + SEP + b"#version: 0.2\nabc\n" + SEP + b"x")
    dup = dict(vocab)
    dup["extra"] = 5
    write("gpt2_vocab_merges", "duplicate-id", vocab_merges_input(dup, merges, "x"))
    write("gpt2_vocab_merges", "negative-id", vocab_merges_input(dict(vocab, extra=-1), merges, "x"))
    write("gpt2_vocab_merges", "huge-id", vocab_merges_input(dict(vocab, extra=2**40), merges, "x"))
    write("gpt2_vocab_merges", "vocab-not-object", b"[1,2]" + SEP + b"" + SEP + b"x")
    write("gpt2_vocab_merges", "deep-nesting", b"[" * 100 + b"]" * 100 + SEP + b"" + SEP + b"x")
    write("tokenizer_json", "not-bpe", b'{"model":{"type":"WordPiece","vocab":{}}}' + SEP + b"x")
    write("tokenizer_json", "no-model", b'{"version":"1.0"}' + SEP + b"x")
    write("tokenizer_json", "merge-bad-entry", b'{"model":{"type":"BPE","vocab":{"a":0},"merges":[3]}}' + SEP + b"x")


def seeds_word():
    for i, text in enumerate(TEXTS + ["Ça, c'est ÉNORME!", "ΑΒΓ Привет ЁЖ", "tab\tnl\nnbsp\u00a0ideographic\u3000space"]):
        write("word_tokenizer", "text-%d" % i, bytes([0x00, 0x20]) + text.encode())
    write("word_tokenizer", "invalid-utf8", b"\xff\x1f" + b"ok \xff \xed\xa0\x80 \xc0\xaf \xf4\x90\x80\x80")
    write("word_tokenizer", "vocab-one", b"\x00\x00" + b"every word is id zero")


# ---- a whole GPT-2 folder ----

def tiny_folder_tensors(seed):
    rnd = random.Random(seed)
    L, D, F, V, C = TINY["n_layer"], TINY["n_embd"], TINY["n_inner"], TINY["vocab_size"], TINY["n_positions"]

    def t(name, *shape):
        n = 1
        for s in shape:
            n *= s
        return (name, list(shape), [rnd.uniform(-0.5, 0.5) for _ in range(n)])

    out = [t("wte.weight", V, D), t("wpe.weight", C, D)]
    for i in range(L):
        h = "h.%d." % i
        out += [t(h + "ln_1.weight", D), t(h + "ln_1.bias", D), t(h + "attn.c_attn.weight", D, 3 * D),
                t(h + "attn.c_attn.bias", 3 * D), t(h + "attn.c_proj.weight", D, D), t(h + "attn.c_proj.bias", D),
                t(h + "ln_2.weight", D), t(h + "ln_2.bias", D), t(h + "mlp.c_fc.weight", D, F),
                t(h + "mlp.c_fc.bias", F), t(h + "mlp.c_proj.weight", F, D), t(h + "mlp.c_proj.bias", D)]
    out += [t("ln_f.weight", D), t("ln_f.bias", D)]
    return out


def seeds_folder():
    vocab = {B2U[b]: b for b in range(256)}
    v = json.dumps(vocab, ensure_ascii=False).encode()
    m = b"#version: 0.2\n"
    tensors = tiny_folder_tensors(1)
    write("gpt2_folder", "tiny", json.dumps(TINY).encode() + SEP + tensor_file(tensors) + SEP + v + SEP + m)
    write("gpt2_folder", "tiny-f16", json.dumps(TINY).encode() + SEP + tensor_file(tensors, "F16") + SEP + v + SEP + m)
    write("gpt2_folder", "wrong-shape", json.dumps(dict(TINY, n_positions=8)).encode() + SEP + tensor_file(tensors) + SEP + v + SEP + m)
    write("gpt2_folder", "missing-tensor", json.dumps(TINY).encode() + SEP + tensor_file(tensors[:-1]) + SEP + v + SEP + m)
    write("gpt2_folder", "no-weights", json.dumps(TINY).encode() + SEP + b"" + SEP + v + SEP + m)
    write("gpt2_folder", "other-family", b'{"model_type":"llama"}' + SEP + tensor_file(tensors) + SEP + v + SEP + m)


# ---- attnscope-cli ----

def seeds_cli():
    lines = [
        ["attention", "--text", "The quick brown fox", "--mask", "none", "--block-keys", "1,2", "--scaling", "none",
         "--temperature", "0.5", "--positional", "sinusoidal", "--stats", "--top-k", "5"],
        ["attention", "--text", "x", "--temperature", "1e400"],
        ["attention", "--text", "x", "--temperature", "-0"],
        ["attention", "--text", "x", "--block-keys", "99999999999999999999,-1,,3"],
        ["tokenize", "--text-file", "-", "--model", "random:layers=1,heads=2,d_model=8,seed=18446744073709551615"],
        ["tokenize", "--text", "x", "--model", "random:layers=999999999999,heads=,d_model=8=9"],
        ["trace", "--text", "a b", "--layer", "1", "--head", "3", "--mask", "causal"],
        ["sweep", "--text", "a b", "--layer", "-1", "--head", "2147483648"],
        ["render", "--text", "a", "--view", "cell", "--out", "x.png", "--query", "0", "--key", "0", "--width", "500",
         "--height", "400"],
        ["bench", "--tokens", "64", "--repeat", "3", "--threads", "1"],
        ["info", "--model", "builtin"],
        ["info", "--help"],
        ["help"],
        ["--help"],
        ["nope"],
        ["attention", "--text"],
        ["attention", "--text", "a", "--text", "b"],
        ["attention", "--text", "a", "--text-file", "f"],
        ["attention", "stray", "--unknown"],
        ["render", "--text", "a", "--view", "heatmap", "--out", "x.png", "--width", "0x10", "--height", "1e3"],
    ]
    for i, words in enumerate(lines):
        write("cli", "args-%02d" % i, "\0".join(words))


if __name__ == "__main__":
    seeds_safetensors()
    seeds_config()
    seeds_tokenizers()
    seeds_word()
    seeds_folder()
    seeds_cli()
