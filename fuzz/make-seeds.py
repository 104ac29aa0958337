#!/usr/bin/env python3
"""Writes the seed corpora in fuzz/corpus/: small valid files of every format and the hostile cases the
tests check, so each fuzz target starts from inputs that reach deep into its parser. Run from anywhere;
rerun after changing a case. The files are small (the largest, a whole Llama-family folder with its 300-token
tokenizer, is about 15 kB) and kept in git. The Marian seeds need SentencePiece models, trained here by Debian's
python3-sentencepiece (run this with /usr/bin/python3); without it they are left as they are."""
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
    write("config", "activation-unknown", dict_json(TINY, activation_function="mish"))
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

def gpt2_tensors(config, seed, prefix=""):
    """Every tensor of a GPT-2-layout model (GPT-2 itself, or AttnScope's own word model), Conv1D weights
    stored [in, out]; `prefix` is "transformer." for a checkpoint saved from GPT2LMHeadModel."""
    rnd = random.Random(seed)
    L, D, F, V, C = config["n_layer"], config["n_embd"], config["n_inner"], config["vocab_size"], config["n_positions"]

    def t(name, *shape):
        n = 1
        for s in shape:
            n *= s
        return (prefix + name, list(shape), [rnd.uniform(-0.5, 0.5) for _ in range(n)])

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
    tensors = gpt2_tensors(TINY, 1)
    write("gpt2_folder", "tiny", json.dumps(TINY).encode() + SEP + tensor_file(tensors) + SEP + v + SEP + m)
    write("gpt2_folder", "tiny-f16", json.dumps(TINY).encode() + SEP + tensor_file(tensors, "F16") + SEP + v + SEP + m)
    write("gpt2_folder", "wrong-shape", json.dumps(dict(TINY, n_positions=8)).encode() + SEP + tensor_file(tensors) + SEP + v + SEP + m)
    write("gpt2_folder", "missing-tensor", json.dumps(TINY).encode() + SEP + tensor_file(tensors[:-1]) + SEP + v + SEP + m)
    write("gpt2_folder", "no-weights", json.dumps(TINY).encode() + SEP + b"" + SEP + v + SEP + m)
    write("gpt2_folder", "other-family", b'{"model_type":"llama"}' + SEP + tensor_file(tensors) + SEP + v + SEP + m)


# ---- Llama-family tokenizer.json pipelines and folders ----

META = "\u2581"  # SentencePiece's space marker
# The published split patterns of Llama 3 and Qwen2 (Qwen2 takes digits one at a time).
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                  r"|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                 r"|\s*[\r\n]+|\s+(?!\S)|\s+")


def added_token(i, content, special=True, lstrip=False, rstrip=False, single_word=False, normalized=False):
    return {"id": i, "content": content, "single_word": single_word, "lstrip": lstrip, "rstrip": rstrip,
            "normalized": normalized, "special": special}


def bos_template(bos, i):
    return {"type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": bos, "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {bos: {"id": bos, "ids": [i], "tokens": [bos]}}}


def bpe_model(vocab, merges, unk=None, byte_fallback=False, ignore_merges=False):
    return {"type": "BPE", "dropout": None, "unk_token": unk, "continuing_subword_prefix": None,
            "end_of_word_suffix": None, "fuse_unk": unk is not None, "byte_fallback": byte_fallback,
            "ignore_merges": ignore_merges, "vocab": vocab, "merges": [[a, b] for a, b in merges]}


def byte_level_pipeline(kind):
    """Llama 3 (split pattern, BOS), Qwen2 (NFC, digit by digit, no BOS) or SmolLM (Digits, then ByteLevel's
    own GPT-2 pattern) around the small byte-level vocabulary of the GPT-2 seeds."""
    vocab, merges = small_tokenizer()
    n = len(vocab)
    added = [added_token(n, "<|begin_of_text|>"), added_token(n + 1, "<|end_of_text|>"),
             added_token(n + 2, "<mask>", lstrip=True, rstrip=True),
             added_token(n + 3, "<sep>", special=False, single_word=True, normalized=True)]
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}
    doc = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": None,
           "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
           "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}}
    split = lambda pattern: {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False}
    if kind == "llama3":
        doc["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [split(LLAMA3_PATTERN), byte_level]}
        doc["post_processor"] = {"type": "Sequence", "processors": [doc["post_processor"], bos_template("<|begin_of_text|>", n)]}
    elif kind == "qwen2":
        doc["normalizer"] = {"type": "NFC"}
        doc["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [split(QWEN2_PATTERN), byte_level]}
    else:
        doc["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": True},
                                                                       dict(byte_level, use_regex=True)]}
    doc["model"] = bpe_model(vocab, merges, ignore_merges=kind == "llama3")
    return doc


def sentencepiece_pipeline(kind):
    """Llama 2 (Prepend + Replace normalizer), Mistral (Metaspace) or Llama 2 without byte fallback, over
    <unk> <s> </s>, the 256 byte tokens, lower-case letters and a few merges."""
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab["<0x%02X>" % b] = len(vocab)
    for c in META + "abcdefghijklmnopqrstuvwxyz.,'":
        vocab[c] = len(vocab)
    merges = [(META, "t"), ("h", "e"), (META + "t", "he"), ("l", "l"), (META, "w"), ("o", "r"), (META + "w", "or"),
              ("l", "d"), (META + "wor", "ld"), ("i", "n"), (META, "a")]
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    doc = {"version": "1.0", "truncation": None, "padding": None,
           "added_tokens": [added_token(0, "<unk>"), added_token(1, "<s>"), added_token(2, "</s>")]}
    if kind == "mistral":
        doc["normalizer"] = None
        doc["pre_tokenizer"] = {"type": "Metaspace", "replacement": META, "prepend_scheme": "first", "split": False}
    else:
        doc["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": META},
                                                                  {"type": "Replace", "pattern": {"String": " "}, "content": META}]}
        doc["pre_tokenizer"] = None
    doc["post_processor"] = bos_template("<s>", 1)
    doc["decoder"] = None
    doc["model"] = bpe_model(vocab, merges, unk="<unk>", byte_fallback=kind != "nofallback")
    return doc


def pipeline(kind):
    return byte_level_pipeline(kind) if kind in ("llama3", "qwen2", "smollm") else sentencepiece_pipeline(kind)


def pipeline_vocab_size(doc):
    return max(list(doc["model"]["vocab"].values()) + [t["id"] for t in doc["added_tokens"]]) + 1


LLAMA_TEXTS = ["Hello world, the tell-tale heart", " leading space and\nnew\r\nlines\n\n", "digits 1234567 and 3.14",
               "Ünïcödé e\u0301 façade — 日本語 🙂👍🏽", "<|begin_of_text|>typed<mask> special <sep> tokens</s><s>", ""]


def seeds_llama_tokenizer():
    def put(name, doc, text, config=b""):
        data = doc if isinstance(doc, bytes) else json.dumps(doc, ensure_ascii=False).encode()
        write("llama_tokenizer", name, data + SEP + config + SEP + (text if isinstance(text, bytes) else text.encode()))

    for kind in ("llama3", "qwen2", "smollm", "llama2", "mistral", "nofallback"):
        for i, text in enumerate(LLAMA_TEXTS[:3] if kind in ("smollm", "nofallback") else LLAMA_TEXTS):
            put("%s-%d" % (kind, i), pipeline(kind), text)
    put("llama2-config-no-bos", pipeline("llama2"), "the world", b'{"add_bos_token": false, "add_eos_token": true, "bos_token": "<s>", "eos_token": "</s>"}')
    put("llama2-config-bos-object", pipeline("llama2"), "the world", b'{"add_bos_token": true, "bos_token": {"content": "<s>"}}')
    put("llama2-invalid-utf8", pipeline("llama2"), b"ok \xff\xfe \xed\xa0\x80")
    hostile = {
        "unigram": ("llama2", lambda d: d["model"].update(type="Unigram")),
        "unknown-normalizer": ("llama2", lambda d: d.update(normalizer={"type": "Precompiled"})),
        "bad-pattern": ("llama3", lambda d: d["pre_tokenizer"]["pretokenizers"][0].update(pattern={"Regex": "(unclosed"})),
        "added-out-of-range": ("llama3", lambda d: d["added_tokens"][0].update(id=99999999)),
        "added-on-vocab-id": ("llama3", lambda d: d["added_tokens"][0].update(id=65)),
        "unk-not-in-vocab": ("llama2", lambda d: d["model"].update(unk_token="<nope>")),
        "template-undefined": ("llama2", lambda d: d["post_processor"].update(special_tokens={})),
    }
    for name, (kind, change) in hostile.items():
        doc = pipeline(kind)
        change(doc)
        put("hostile-" + name, doc, "the world")
    nested = pipeline("llama2")
    inner = {"type": "Prepend", "prepend": "x"}
    for _ in range(12):
        inner = {"type": "Sequence", "normalizers": [inner]}
    nested["normalizer"] = inner
    put("hostile-nested-12", nested, "x")
    put("hostile-deep-nesting", b'{"model":' + b"[" * 100 + b"]" * 100 + b"}", "x")
    put("hostile-config-deep", pipeline("llama2"), "x", b"[" * 100 + b"]" * 100)


LLAMA_TINY = {"model_type": "llama", "hidden_size": 4, "intermediate_size": 6, "num_hidden_layers": 1,
              "num_attention_heads": 2, "num_key_value_heads": 1, "max_position_embeddings": 16, "rms_norm_eps": 1e-5,
              "rope_theta": 10000.0, "tie_word_embeddings": True, "hidden_act": "silu"}


def llama_tensors(config, seed, biases=False):
    rnd = random.Random(seed)
    V, D, F = config["vocab_size"], config["hidden_size"], config["intermediate_size"]
    KV = config["num_key_value_heads"] * (D // config["num_attention_heads"])

    def t(name, *shape, offset=0.0):
        n = 1
        for s in shape:
            n *= s
        return (name, list(shape), [offset + rnd.uniform(-0.5, 0.5) for _ in range(n)])

    out = [t("model.embed_tokens.weight", V, D)]
    for i in range(config["num_hidden_layers"]):
        p = "model.layers.%d." % i
        out += [t(p + "input_layernorm.weight", D, offset=1.0), t(p + "self_attn.q_proj.weight", D, D),
                t(p + "self_attn.k_proj.weight", KV, D), t(p + "self_attn.v_proj.weight", KV, D),
                t(p + "self_attn.o_proj.weight", D, D), t(p + "post_attention_layernorm.weight", D, offset=1.0),
                t(p + "mlp.gate_proj.weight", F, D), t(p + "mlp.up_proj.weight", F, D), t(p + "mlp.down_proj.weight", D, F)]
        if biases:
            out += [t(p + "self_attn.q_proj.bias", D), t(p + "self_attn.k_proj.bias", KV), t(p + "self_attn.v_proj.bias", KV)]
    out.append(t("model.norm.weight", D, offset=1.0))
    if not config.get("tie_word_embeddings", False):
        out.append(t("lm_head.weight", V, D))
    return out


def seeds_llama_folder():
    def put(name, config, weights=b"", tokenizer=b"", tokenizer_config=b"", index=b"", shard=b""):
        parts = [json.dumps(config).encode() if isinstance(config, dict) else config, weights,
                 tokenizer if isinstance(tokenizer, bytes) else json.dumps(tokenizer, ensure_ascii=False).encode(),
                 tokenizer_config, index, shard]
        write("llama_folder", name, SEP.join(parts))

    sp = pipeline("llama2")
    llama = dict(LLAMA_TINY, vocab_size=pipeline_vocab_size(sp))
    tensors = llama_tensors(llama, 1)
    put("llama-f32", llama, tensor_file(tensors), sp, b'{"add_bos_token": true, "bos_token": "<s>"}')
    put("llama-bf16", llama, tensor_file(tensors, "BF16"), sp)
    untied = dict(llama, tie_word_embeddings=False, num_key_value_heads=2)
    put("llama-untied-mha", untied, tensor_file(llama_tensors(untied, 2), "F16"), sp)
    index = json.dumps({"metadata": {}, "weight_map": {name: "model-00001-of-00001.safetensors" for name, _, _ in tensors}}).encode()
    put("llama-sharded", llama, b"", sp, b"", index, tensor_file(tensors, "BF16"))
    bl = pipeline("qwen2")
    qwen = dict(LLAMA_TINY, model_type="qwen2", vocab_size=pipeline_vocab_size(bl) + 3, rope_theta=1e6, use_sliding_window=False)
    put("qwen2-biases", qwen, tensor_file(llama_tensors(qwen, 3, biases=True)), bl)
    mistral = dict(LLAMA_TINY, model_type="mistral", vocab_size=pipeline_vocab_size(pipeline("mistral")), sliding_window=8)
    put("mistral-window", mistral, tensor_file(llama_tensors(mistral, 4), "BF16"), pipeline("mistral"))
    l3 = pipeline("llama3")
    scaled = dict(LLAMA_TINY, vocab_size=pipeline_vocab_size(l3), rope_scaling={
        "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8})
    put("llama3-rope-scaling", scaled, tensor_file(llama_tensors(scaled, 5)), l3)
    # Hostile folders: each is refused with a sentence.
    put("missing-tensor", llama, tensor_file(tensors[:-1]), sp)
    put("wrong-shape", dict(llama, num_key_value_heads=2), tensor_file(tensors), sp)
    put("no-tokenizer", llama, tensor_file(tensors))
    put("tokenizer-larger", dict(llama, vocab_size=100), tensor_file(tensors), sp)
    put("index-parent", llama, b"", sp, b"", index.replace(b'"model-00001', b'"../model-00001'), tensor_file(tensors))
    put("index-missing-shard", llama, b"", sp, b"", index.replace(b"00001-of", b"00002-of"), tensor_file(tensors))
    put("index-deep", llama, b"", sp, b"", b'{"weight_map":' + b"[" * 100 + b"]" * 100 + b"}", tensor_file(tensors))
    put("eps-huge", dict(llama, rms_norm_eps=1e300), tensor_file(tensors), sp)
    put("gelu", dict(llama, hidden_act="gelu"), tensor_file(tensors), sp)


# GPT-NeoX (Pythia) folders go through the same target: loadModelFolder hands them to their own loader.
NEOX_TINY = {"model_type": "gpt_neox", "hidden_size": 8, "intermediate_size": 12, "num_hidden_layers": 1,
             "num_attention_heads": 2, "max_position_embeddings": 16, "layer_norm_eps": 1e-5, "rotary_pct": 0.5,
             "rotary_emb_base": 10000, "use_parallel_residual": True, "hidden_act": "gelu", "tie_word_embeddings": False}


def neox_tensors(config, seed):
    rnd = random.Random(seed)
    V, D, F = config["vocab_size"], config["hidden_size"], config["intermediate_size"]

    def t(name, *shape, offset=0.0):
        n = 1
        for s in shape:
            n *= s
        return (name, list(shape), [offset + rnd.uniform(-0.5, 0.5) for _ in range(n)])

    out = [t("gpt_neox.embed_in.weight", V, D)]
    for i in range(config["num_hidden_layers"]):
        p = "gpt_neox.layers.%d." % i
        for norm in ("input_layernorm", "post_attention_layernorm"):
            out += [t(p + norm + ".weight", D, offset=1.0), t(p + norm + ".bias", D)]
        out += [t(p + "attention.query_key_value.weight", 3 * D, D), t(p + "attention.query_key_value.bias", 3 * D),
                t(p + "attention.dense.weight", D, D), t(p + "attention.dense.bias", D),
                t(p + "mlp.dense_h_to_4h.weight", F, D), t(p + "mlp.dense_h_to_4h.bias", F),
                t(p + "mlp.dense_4h_to_h.weight", D, F), t(p + "mlp.dense_4h_to_h.bias", D)]
    out += [t("gpt_neox.final_layer_norm.weight", D, offset=1.0), t("gpt_neox.final_layer_norm.bias", D)]
    if not config.get("tie_word_embeddings", False):
        out.append(t("embed_out.weight", V, D))
    return out


def seeds_neox_folder():
    def put(name, config, weights=b"", tokenizer=b"", index=b"", shard=b""):
        parts = [json.dumps(config).encode(), weights, json.dumps(tokenizer, ensure_ascii=False).encode() if tokenizer else b"",
                 b"", index, shard]
        write("llama_folder", name, SEP.join(parts))

    bl = pipeline("smollm")
    neox = dict(NEOX_TINY, vocab_size=pipeline_vocab_size(bl) + 2)
    tensors = neox_tensors(neox, 7)
    put("neox-f32", neox, tensor_file(tensors), bl)
    sequential = dict(neox, use_parallel_residual=False, rotary_pct=1.0)
    put("neox-sequential-bf16", sequential, tensor_file(tensors, "BF16"), bl)
    renamed = {k: v for k, v in neox.items() if k not in ("rotary_pct", "rotary_emb_base")}
    put("neox-new-names-f16", dict(renamed, partial_rotary_factor=0.5, rope_theta=500.0), tensor_file(tensors, "F16"), bl)
    index = json.dumps({"metadata": {}, "weight_map": {name: "model-00001-of-00001.safetensors" for name, _, _ in tensors}}).encode()
    put("neox-sharded", neox, b"", bl, index, tensor_file(tensors, "BF16"))
    # Hostile folders: each is refused with a sentence.
    put("neox-missing-embed-out", neox, tensor_file(tensors[:-1]), bl)
    swapped = [(n, list(reversed(shape)) if n.endswith("query_key_value.weight") else shape, v) for n, shape, v in tensors]
    put("neox-qkv-shape", neox, tensor_file(swapped), bl)
    put("neox-rotary-odd", dict(neox, rotary_pct=0.75), tensor_file(tensors), bl)
    put("neox-rotary-zero", dict(neox, rotary_pct=0), tensor_file(tensors), bl)
    put("neox-rope-yarn", dict(neox, rope_scaling={"rope_type": "yarn", "factor": 4}), tensor_file(tensors), bl)
    put("neox-layers-absurd", dict(neox, num_hidden_layers=1000000), tensor_file(tensors), bl)


# ---- BERT-family folders ----

# Specials first, as BERT's vocabularies have them, then punctuation, whole words, pieces and a few
# characters from other scripts: 33 tokens, uncased (no upper-case letter outside the brackets).
BERT_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", "!", "the", "cat", "sat", "on", "mat", "dog",
              "play", "##ing", "##s", "##ed", "un", "##able", "a", "b", "c", "##a", "##b", "##c", "hello", "world",
              "cafe", "中", "国", "é", "##é"]
BERT_TINY = {"model_type": "bert", "architectures": ["BertForMaskedLM"], "hidden_size": 8, "num_hidden_layers": 2,
             "num_attention_heads": 2, "intermediate_size": 16, "max_position_embeddings": 16,
             "vocab_size": len(BERT_VOCAB), "type_vocab_size": 2, "layer_norm_eps": 1e-12, "hidden_act": "gelu",
             "position_embedding_type": "absolute"}
DISTILBERT_TINY = {"model_type": "distilbert", "architectures": ["DistilBertForMaskedLM"], "dim": 8, "n_layers": 1,
                   "n_heads": 2, "hidden_dim": 16, "max_position_embeddings": 16, "vocab_size": len(BERT_VOCAB),
                   "activation": "gelu", "sinusoidal_pos_embds": False}
# q, k, v, out, first norm, up, down, second norm, in each family's spelling.
BERT_LAYER = ["attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
              "attention.output.LayerNorm", "intermediate.dense", "output.dense", "output.LayerNorm"]
DISTILBERT_LAYER = ["attention.q_lin", "attention.k_lin", "attention.v_lin", "attention.out_lin", "sa_layer_norm",
                    "ffn.lin1", "ffn.lin2", "output_layer_norm"]


def bert_tensors(config, seed, prefixed=True, head=True, gamma_beta=False):
    """A task model's tensors as Hugging Face saves them: the base model under "bert." / "distilbert." (or
    bare, as a base model saves them), nn.Linear weights [out, in], the masked-LM head at the root."""
    rnd = random.Random(seed)
    distil = config["model_type"] == "distilbert"
    D = config["dim" if distil else "hidden_size"]
    F = config["hidden_dim" if distil else "intermediate_size"]
    L = config["n_layers" if distil else "num_hidden_layers"]
    V, C = config["vocab_size"], config["max_position_embeddings"]
    base = ("distilbert." if distil else "bert.") if prefixed else ""
    out = []

    def t(name, *shape, offset=0.0):
        n = 1
        for s in shape:
            n *= s
        out.append((name, list(shape), [offset + rnd.uniform(-0.5, 0.5) for _ in range(n)]))

    def norm(name):
        t(name + (".gamma" if gamma_beta else ".weight"), D, offset=1.0)
        t(name + (".beta" if gamma_beta else ".bias"), D)

    def linear(name, n_in, n_out):
        t(name + ".weight", n_out, n_in)
        t(name + ".bias", n_out)

    t(base + "embeddings.word_embeddings.weight", V, D)
    t(base + "embeddings.position_embeddings.weight", C, D)
    if not distil:
        t(base + "embeddings.token_type_embeddings.weight", config.get("type_vocab_size", 2), D)
    norm(base + "embeddings.LayerNorm")
    for i in range(L):
        p = base + ("transformer.layer.%d." if distil else "encoder.layer.%d.") % i
        names = DISTILBERT_LAYER if distil else BERT_LAYER
        for name in names[:4]:
            linear(p + name, D, D)
        norm(p + names[4])
        linear(p + names[5], D, F)
        linear(p + names[6], F, D)
        norm(p + names[7])
    if head and distil:
        linear("vocab_transform", D, D)
        norm("vocab_layer_norm")
        t("vocab_projector.bias", V)
    elif head:
        linear("cls.predictions.transform.dense", D, D)
        norm("cls.predictions.transform.LayerNorm")
        t("cls.predictions.bias", V)
    return out


def wordpiece_tokenizer_json(vocab, lowercase=None):
    added = [{"id": i, "content": vocab[i], "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for i in range(5)]
    return {"version": "1.0", "added_tokens": added,
            "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                           "strip_accents": None, "lowercase": lowercase},
            "pre_tokenizer": {"type": "BertPreTokenizer"},
            "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                      "max_input_chars_per_word": 100, "vocab": {t: i for i, t in enumerate(vocab)}}}


def with_tensor(tensors, name, values=None, shape=None):
    """A copy of `tensors` with one tensor's values or shape changed; the shape "drop" leaves it out."""
    out = []
    for n, sh, v in tensors:
        if n == name:
            if values is not None:
                v = values(v)
            if shape == "drop":
                continue
            if shape is not None:
                sh = shape
        out.append((n, sh, v))
    return out


def seeds_bert_folder():
    def put(name, config, weights=b"", vocab=b"", tokenizer=b"", tokenizer_config=b"", text=""):
        parts = [json.dumps(config).encode() if isinstance(config, dict) else config, weights,
                 vocab if isinstance(vocab, bytes) else ("\n".join(vocab) + "\n").encode(),
                 tokenizer if isinstance(tokenizer, bytes) else json.dumps(tokenizer, ensure_ascii=False).encode(),
                 tokenizer_config, text if isinstance(text, bytes) else text.encode()]
        write("bert_folder", name, SEP.join(parts))

    bert = bert_tensors(BERT_TINY, 1)
    distil = bert_tensors(DISTILBERT_TINY, 2)
    put("bert-f32", BERT_TINY, tensor_file(bert), BERT_VOCAB, text="The cat sat on the mat.")
    put("bert-long-text", BERT_TINY, tensor_file(bert), BERT_VOCAB,
        text="Hello world, the dog was playing on a mat at the cafe: unable, unplayable, catsed!")
    put("bert-f16-cased", BERT_TINY, tensor_file(bert, "F16"), BERT_VOCAB, tokenizer_config=b'{"do_lower_case": false}',
        text="Hello [MASK] World[SEP]café")
    put("bert-bare-names", BERT_TINY, tensor_file(bert_tensors(BERT_TINY, 3, prefixed=False, head=False, gamma_beta=True)),
        BERT_VOCAB, text="playing unable 中国 é")
    put("bert-tokenizer-json", BERT_TINY, tensor_file(bert), b"", wordpiece_tokenizer_json(BERT_VOCAB, True),
        b'{"do_lower_case": null, "strip_accents": false, "tokenize_chinese_chars": true}', "[CLS]the [MASK] sat[SEP]")
    put("bert-one-position", dict(BERT_TINY, max_position_embeddings=1),
        tensor_file(with_tensor(bert, "bert.embeddings.position_embeddings.weight", lambda v: v[:8], [1, 8])),
        BERT_VOCAB, text="the cat")
    put("bert-invalid-utf8", BERT_TINY, tensor_file(bert), BERT_VOCAB, text=b"ok \xff\xfe \xed\xa0\x80")
    put("distilbert-bf16", DISTILBERT_TINY, tensor_file(distil, "BF16"), BERT_VOCAB, text="a b c abc ##a [UNK]")
    put("vocab-duplicate-token", BERT_TINY, tensor_file(bert), BERT_VOCAB[:-1] + ["the"], text="the cat")
    put("nan-weight", BERT_TINY,
        tensor_file(with_tensor(bert, "bert.encoder.layer.0.attention.self.query.weight", lambda v: [float("nan")] + v[1:])),
        BERT_VOCAB, text="the cat sat")
    put("huge-weights", BERT_TINY,
        tensor_file(with_tensor(bert, "bert.encoder.layer.1.attention.self.key.weight", lambda v: [3e38] * len(v))),
        BERT_VOCAB, text="the cat sat")
    # Hostile folders: each is refused with a sentence.
    put("wrong-shape", BERT_TINY, tensor_file(with_tensor(bert, "bert.encoder.layer.0.intermediate.dense.weight",
                                                          shape=[8, 16])), BERT_VOCAB, text="x")
    put("missing-tensor", BERT_TINY, tensor_file(with_tensor(bert, "bert.encoder.layer.1.output.dense.bias",
                                                             shape="drop")), BERT_VOCAB, text="x")
    put("head-in-part", BERT_TINY, tensor_file(with_tensor(bert, "cls.predictions.bias", shape="drop")), BERT_VOCAB)
    put("no-tokenizer", BERT_TINY, tensor_file(bert), text="x")
    put("no-weights", BERT_TINY, b"", BERT_VOCAB, text="x")
    put("vocab-no-cls", BERT_TINY, tensor_file(bert), [t for t in BERT_VOCAB if t != "[CLS]"], text="x")
    put("vocab-larger-than-config", dict(BERT_TINY, vocab_size=20), tensor_file(bert), BERT_VOCAB, text="x")
    put("vocab-invalid-utf8", BERT_TINY, tensor_file(bert), b"[PAD]\n[UNK]\n\xff\xfe\n[CLS]\n[SEP]\n", text="x")
    dup = wordpiece_tokenizer_json(BERT_VOCAB)
    dup["model"]["vocab"]["[SEP]"] = 2
    put("tokenizer-json-duplicate-id", BERT_TINY, tensor_file(bert), b"", dup, text="x")
    put("tokenizer-json-bpe", BERT_TINY, tensor_file(bert), b"", b'{"model":{"type":"BPE","vocab":{},"merges":[]}}', text="x")
    put("tokenizer-config-not-flag", BERT_TINY, tensor_file(bert), BERT_VOCAB, b"", b'{"do_lower_case": "yes"}', "x")
    put("relative-positions", dict(BERT_TINY, position_embedding_type="relative_key"), tensor_file(bert), BERT_VOCAB)
    put("eps-negative", dict(BERT_TINY, layer_norm_eps=-1), tensor_file(bert), BERT_VOCAB)
    put("eps-huge", dict(BERT_TINY, layer_norm_eps=1e300), tensor_file(bert), BERT_VOCAB)
    put("type-vocab-zero", dict(BERT_TINY, type_vocab_size=0), tensor_file(bert), BERT_VOCAB)
    put("config-nan", json.dumps(BERT_TINY).replace('"layer_norm_eps": 1e-12', '"layer_norm_eps": NaN').encode(),
        tensor_file(bert), BERT_VOCAB)
    put("config-nested", b'{"model_type":"bert","hidden_size":' + b"[" * 100 + b"]" * 100 + b"}", tensor_file(bert), BERT_VOCAB)
    put("tokenizer-json-nested", BERT_TINY, tensor_file(bert), b"", b'{"model":' + b"[" * 100 + b"]" * 100 + b"}")


# ---- BART encoder-decoder folders ----

# GPT-2's byte alphabet with BART's four specials in front and <mask> last, as facebook/bart-base orders them.
def bart_tokenizer():
    vocab, merges = small_tokenizer()
    out = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for token, i in sorted(vocab.items(), key=lambda kv: kv[1]):
        out[token] = len(out)
    out["<mask>"] = len(out)
    return out, merges


BART_VOCAB, BART_MERGES = bart_tokenizer()
BART_TINY = {"model_type": "bart", "architectures": ["BartForConditionalGeneration"], "d_model": 8, "encoder_layers": 1,
             "decoder_layers": 2, "encoder_attention_heads": 2, "decoder_attention_heads": 2, "encoder_ffn_dim": 16,
             "decoder_ffn_dim": 16, "vocab_size": len(BART_VOCAB), "max_position_embeddings": 16,
             "activation_function": "gelu", "scale_embedding": False, "bos_token_id": 0, "pad_token_id": 1,
             "eos_token_id": 2, "decoder_start_token_id": 2, "is_encoder_decoder": True}


def bart_tensors(config, seed, prefix="model.", logits_bias=True):
    """A BartForConditionalGeneration's tensors: nn.Linear weights [out, in], position tables with BART's two
    extra rows, the head tied to shared.weight."""
    rnd = random.Random(seed)
    D, V, C = config["d_model"], config["vocab_size"], config["max_position_embeddings"]
    out = []

    def t(name, *shape, offset=0.0):
        n = 1
        for s in shape:
            n *= s
        out.append((name, list(shape), [offset + rnd.uniform(-0.5, 0.5) for _ in range(n)]))

    def norm(name):
        t(name + ".weight", D, offset=1.0)
        t(name + ".bias", D)

    def linear(name, n_in, n_out):
        t(name + ".weight", n_out, n_in)
        t(name + ".bias", n_out)

    def attention(name):
        for proj in ["q_proj", "k_proj", "v_proj", "out_proj"]:
            linear(name + "." + proj, D, D)

    if logits_bias:
        t("final_logits_bias", 1, V)
    t(prefix + "shared.weight", V, D)
    for stack in ["encoder", "decoder"]:
        p = prefix + stack + "."
        F = config[stack + "_ffn_dim"]
        t(p + "embed_positions.weight", C + 2, D)
        norm(p + "layernorm_embedding")
        for i in range(config[stack + "_layers"]):
            q = p + "layers.%d." % i
            attention(q + "self_attn")
            norm(q + "self_attn_layer_norm")
            if stack == "decoder":
                attention(q + "encoder_attn")
                norm(q + "encoder_attn_layer_norm")
            linear(q + "fc1", D, F)
            linear(q + "fc2", F, D)
            norm(q + "final_layer_norm")
    return out


def seeds_bart_folder():
    def put(name, config, weights=b"", vocab=None, merges=None, tokenizer=b"", text=""):
        v = json.dumps(BART_VOCAB if vocab is None else vocab, ensure_ascii=False).encode() if vocab != b"" else b""
        m = ("#version: 0.2\n" + "".join(a + " " + b + "\n" for a, b in (BART_MERGES if merges is None else merges))).encode()
        parts = [json.dumps(config).encode() if isinstance(config, dict) else config, weights, v, m, tokenizer,
                 text if isinstance(text, bytes) else text.encode()]
        write("bart_folder", name, SEP.join(parts))

    bart = bart_tensors(BART_TINY, 1)
    put("bart-f32", BART_TINY, tensor_file(bart), text="the world\n@@@@\nhello")
    put("bart-bf16-scaled", dict(BART_TINY, scale_embedding=True), tensor_file(bart, "BF16"), text="hello world, the end")
    put("bart-bare-names", BART_TINY, tensor_file(bart_tensors(BART_TINY, 2, prefix="", logits_bias=False)), text="in a tell")
    put("bart-invalid-utf8", BART_TINY, tensor_file(bart), text=b"ok \xff\xfe")
    put("huge-weights", BART_TINY,
        tensor_file(with_tensor(bart, "model.decoder.layers.0.encoder_attn.k_proj.weight", lambda v: [3e38] * len(v))),
        text="the world")
    put("nan-weight", BART_TINY,
        tensor_file(with_tensor(bart, "model.encoder.layers.0.self_attn.q_proj.weight", lambda v: [float("nan")] + v[1:])),
        text="the world")
    # Hostile folders: each is refused with a sentence.
    put("positions-without-offset", BART_TINY,
        tensor_file(with_tensor(bart, "model.encoder.embed_positions.weight", lambda v: v[:16 * 8], [16, 8])), text="x")
    put("missing-cross-attention", BART_TINY,
        tensor_file(with_tensor(bart, "model.decoder.layers.1.encoder_attn.v_proj.bias", shape="drop")), text="x")
    put("heads-differ", dict(BART_TINY, decoder_attention_heads=4), tensor_file(bart), text="x")
    put("pre-ln-variant", dict(BART_TINY, normalize_before=True), tensor_file(bart), text="x")
    put("start-token-outside", dict(BART_TINY, decoder_start_token_id=100000), tensor_file(bart), text="x")
    put("untied-head-missing", dict(BART_TINY, tie_word_embeddings=False), tensor_file(bart), text="x")
    put("decoder-layers-absurd", dict(BART_TINY, decoder_layers=1 << 30), tensor_file(bart), text="x")
    put("no-tokenizer", BART_TINY, tensor_file(bart), vocab=b"", text="x")
    put("no-weights", BART_TINY, b"", text="x")


# ---- Marian encoder-decoder folders ----

MARIAN_SOURCE = ["the cat sat on the mat", "the dog ran to the river", "a bird sings in the tree",
                 "hello world", "the cat and the dog"]
MARIAN_TARGET = ["lo mika sati en lo mata", "lo doga rani al lo riva", "na birda kanta en lo trea",
                 "salu munda", "lo mika e lo doga"]


def spm_model(sentences, vocab_size, ids=None):
    """A small unigram SentencePiece model trained on `sentences`, its file's bytes, or None when the
    Python binding (Debian's python3-sentencepiece, run with /usr/bin/python3) is not installed. The identity
    normaliser keeps the file small (no character map). `ids` overrides the special ids or the normaliser (Marian's by default:
    <unk> 0, </s> 1, no <s> or <pad>)."""
    try:
        import io
        import sentencepiece
    except ImportError:
        return None
    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences), model_writer=model, model_type="unigram", vocab_size=vocab_size,
        hard_vocab_limit=False, character_coverage=1.0, num_threads=1, minloglevel=2,
        **dict(dict(normalization_rule_name="identity", bos_id=-1, eos_id=1, unk_id=0, pad_id=-1), **(ids or {})))
    return model.getvalue()


def spm_pieces(model_bytes):
    import sentencepiece
    sp = sentencepiece.SentencePieceProcessor(model_proto=model_bytes)
    return [sp.id_to_piece(i) for i in range(sp.get_piece_size()) if not (sp.is_control(i) or sp.is_unknown(i))]


def seeds_marian_folder():
    source, target = spm_model(MARIAN_SOURCE, 30), spm_model(MARIAN_TARGET, 30)
    if source is None or target is None:
        print("make-seeds: no sentencepiece module; the marian_folder seeds are left as they are")
        return
    vocab = {"</s>": 0, "<unk>": 1}
    for piece in spm_pieces(source) + spm_pieces(target):
        vocab.setdefault(piece, len(vocab))
    vocab["<pad>"] = len(vocab)
    V = len(vocab)
    tiny = {"model_type": "marian", "architectures": ["MarianMTModel"], "d_model": 8, "encoder_layers": 1,
            "decoder_layers": 2, "encoder_attention_heads": 2, "decoder_attention_heads": 2, "encoder_ffn_dim": 16,
            "decoder_ffn_dim": 16, "vocab_size": V, "decoder_vocab_size": V, "max_position_embeddings": 16,
            "activation_function": "swish", "scale_embedding": True, "pad_token_id": V - 1, "eos_token_id": 0,
            "decoder_start_token_id": V - 1, "share_encoder_decoder_embeddings": True, "is_encoder_decoder": True}
    # BART's tensors less the embedding norms and the two offset rows of the (here stored) position tables.
    tensors = [t for t in bart_tensors(dict(tiny, max_position_embeddings=14), 3) if "layernorm_embedding" not in t[0]]

    def put(name, config, weights, v=None, src=source, tgt=target, text="the cat\n@@@@\nlo mika"):
        parts = [json.dumps(config).encode() if isinstance(config, dict) else config, weights,
                 json.dumps(vocab if v is None else v, ensure_ascii=False).encode() if v != b"" else b"", src, tgt,
                 text if isinstance(text, bytes) else text.encode()]
        write("marian_folder", name, SEP.join(parts))

    put("marian-f32", tiny, tensor_file(tensors))
    put("marian-bf16-no-positions", tiny, tensor_file([t for t in tensors if "embed_positions" not in t[0]], "BF16"),
        text="hello world, a bird\n@@@@\nsalu")
    put("marian-unknown-pieces", tiny, tensor_file(tensors), text="zebra xylophone 日本\n@@@@\nqqq")
    put("marian-invalid-utf8", tiny, tensor_file(tensors), text=b"ok \xff\xfe")
    put("huge-weights", tiny,
        tensor_file(with_tensor(tensors, "model.decoder.layers.1.encoder_attn.q_proj.weight", lambda v: [3e38] * len(v))))
    # Hostile folders: each is refused with a sentence.
    put("spm-not-a-model", tiny, tensor_file(tensors), src=b"not a protobuf at all")
    put("spm-truncated", tiny, tensor_file(tensors), tgt=target[: len(target) // 2])
    put("no-source-spm", tiny, tensor_file(tensors), src=b"")
    put("vocab-gap", tiny, tensor_file(tensors), v={"</s>": 0, "<unk>": 7})
    put("vocab-no-unk", tiny, tensor_file(tensors), v={"</s>": 0, "a": 1})
    put("separate-decoder-vocab", dict(tiny, share_encoder_decoder_embeddings=False), tensor_file(tensors))
    put("positions-wrong-length", tiny, tensor_file(with_tensor(tensors, "model.encoder.embed_positions.weight",
                                                               lambda v: v[: 8 * 8], [8, 8])))


# ---- AttnScope's own word models (the built-in model's format) ----

WORD_VOCAB = ["<bos>", "<unk>", "the", ".", ",", "?", "!", "cat", "dog", "sat", "on", "mat", "bank", "river", "money",
              "he", "she", "it", "was", "is", "a", "of", "to", "and", "é", "日本語"]
WORD_TINY = {"model_type": "attnscope", "name": "tiny", "tokenizer": "word-vocab", "n_layer": 2, "n_head": 2,
             "n_embd": 8, "n_inner": 16, "vocab_size": len(WORD_VOCAB), "n_positions": 16, "layer_norm_epsilon": 1e-05,
             "activation_function": "gelu_new", "bos_token": "<bos>", "unk_token": "<unk>"}


def t5_tensors(config, seed, gated=False, tied=True):
    """A T5ForConditionalGeneration's tensors: nn.Linear weights [out, in] without biases, norms with weights
    only, a relative position bias in block 0 of each stack."""
    rnd = random.Random(seed)
    D, V, F, H, Dk = config["d_model"], config["vocab_size"], config["d_ff"], config["num_heads"], config["d_kv"]
    B = config["relative_attention_num_buckets"]
    out = []

    def t(name, *shape, offset=0.0):
        n = 1
        for s in shape:
            n *= s
        out.append((name, list(shape), [offset + rnd.uniform(-0.5, 0.5) for _ in range(n)]))

    def attention(name, relative):
        for proj in ["q", "k", "v"]:
            t(name + "." + proj + ".weight", H * Dk, D)
        t(name + ".o.weight", D, H * Dk)
        if relative:
            t(name + ".relative_attention_bias.weight", B, H)

    def ff(name):
        for wi in (["wi_0", "wi_1"] if gated else ["wi"]):
            t(name + "." + wi + ".weight", F, D)
        t(name + ".wo.weight", D, F)

    t("shared.weight", V, D)
    for stack, layers in [("encoder", config["num_layers"]), ("decoder", config["num_decoder_layers"])]:
        for i in range(layers):
            p = "%s.block.%d.layer." % (stack, i)
            attention(p + "0.SelfAttention", i == 0)
            t(p + "0.layer_norm.weight", D, offset=1.0)
            if stack == "decoder":
                attention(p + "1.EncDecAttention", False)
                t(p + "1.layer_norm.weight", D, offset=1.0)
            last = p + ("2" if stack == "decoder" else "1")
            ff(last + ".DenseReluDense")
            t(last + ".layer_norm.weight", D, offset=1.0)
        t(stack + ".final_layer_norm.weight", D, offset=1.0)
    if not tied:
        t("lm_head.weight", V, D)
    return out


def protobuf_field(message, wanted):
    """The bytes of the first length-delimited field `wanted` of a protobuf message (a minimal walk)."""
    i = 0

    def varint():
        nonlocal i
        value, shift = 0, 0
        while True:
            b = message[i]
            i += 1
            value |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return value

    while i < len(message):
        tag = varint()
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            varint()
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            n = varint()
            if number == wanted:
                return message[i:i + n]
            i += n
        else:
            raise ValueError("unknown wire type")
    return b""


def t5_tokenizer_json(spm):
    """tokenizer.json as Hugging Face's converter writes it for T5: the pieces and their scores, the 100
    sentinels, the Precompiled normaliser with the model's character map (normalizer_spec, field 3, then
    precompiled_charsmap, field 2), WhitespaceSplit and Metaspace."""
    import base64
    import sentencepiece
    sp = sentencepiece.SentencePieceProcessor(model_proto=spm)
    vocab, added = [], []
    for i in range(sp.get_piece_size()):
        special = sp.is_control(i) or sp.is_unknown(i)
        vocab.append([sp.id_to_piece(i), 0.0 if special else sp.get_score(i)])
        if special:
            added.append({"id": i, "content": sp.id_to_piece(i), "special": True, "normalized": False})
    for k in range(99, -1, -1):
        added.append({"id": len(vocab), "content": "<extra_id_%d>" % k, "special": True, "normalized": False})
        vocab.append(["<extra_id_%d>" % k, 0.0])
    charsmap = protobuf_field(protobuf_field(spm, 3), 2)
    return {"added_tokens": added,
            "normalizer": {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(charsmap).decode()},
            "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                {"type": "WhitespaceSplit"}, {"type": "Metaspace", "replacement": "\u2581", "add_prefix_space": True}]},
            "post_processor": {"type": "TemplateProcessing", "single": [{"Sequence": {"id": "A"}}, {"SpecialToken": {"id": "</s>"}}],
                               "special_tokens": {"</s>": {"id": "</s>", "ids": [1], "tokens": ["</s>"]}}},
            "model": {"type": "Unigram", "unk_id": 2, "vocab": vocab}}


def seeds_t5_folder():
    spm = spm_model(MARIAN_SOURCE + MARIAN_TARGET, 40, ids=dict(pad_id=0, eos_id=1, unk_id=2, bos_id=-1))  # T5's ids
    if spm is None:
        print("make-seeds: no sentencepiece module; the t5_folder seeds are left as they are")
        return
    import sentencepiece
    pieces = sentencepiece.SentencePieceProcessor(model_proto=spm).get_piece_size()
    tiny = {"model_type": "t5", "architectures": ["T5ForConditionalGeneration"], "d_model": 8, "d_kv": 4, "d_ff": 16,
            "num_layers": 1, "num_decoder_layers": 2, "num_heads": 2, "vocab_size": pieces + 100,
            "relative_attention_num_buckets": 8, "relative_attention_max_distance": 12, "feed_forward_proj": "relu",
            "tie_word_embeddings": True, "eos_token_id": 1, "pad_token_id": 0, "decoder_start_token_id": 0,
            "is_encoder_decoder": True}
    relu, gated = t5_tensors(tiny, 5), t5_tensors(tiny, 6, gated=True)

    def put(name, config, weights, model=spm, text="the cat sat on the mat and the dog\n@@@@\nlo mika", tokenizer=b""):
        parts = [json.dumps(config).encode() if isinstance(config, dict) else config, weights, model, tokenizer,
                 text if isinstance(text, bytes) else text.encode()]
        write("t5_folder", name, SEP.join(parts))

    put("t5-relu-f32", tiny, tensor_file(relu))
    put("t5-gated-bf16", dict(tiny, feed_forward_proj="gated-gelu"), tensor_file(gated, "BF16"),
        text="hello world, a bird sings in the tree by the river\n@@@@\nsalu munda")
    put("t5-untied", dict(tiny, tie_word_embeddings=False), tensor_file(t5_tensors(tiny, 7, tied=False)))
    put("t5-sentinels-and-unknown", tiny, tensor_file(relu), text="<extra_id_0> zebra 日本\n@@@@\n<extra_id_1>")
    put("t5-invalid-utf8", tiny, tensor_file(relu), text=b"ok \xff\xfe")
    put("huge-weights", tiny, tensor_file(with_tensor(relu, "decoder.block.1.layer.1.EncDecAttention.q.weight",
                                                      lambda v: [3e38] * len(v))))
    # Hostile folders: each is refused with a sentence.
    put("heads-do-not-fill-d-model", dict(tiny, num_heads=3), tensor_file(relu))
    put("buckets-absurd", dict(tiny, relative_attention_num_buckets=1 << 30), tensor_file(relu))
    put("no-relative-bias", tiny, tensor_file([t for t in relu if "relative_attention_bias" not in t[0]]))
    put("gated-without-wi-1", dict(tiny, feed_forward_proj="gated-gelu"), tensor_file(relu))
    put("spm-not-a-model", tiny, tensor_file(relu), model=b"not a protobuf at all")
    put("spm-truncated", tiny, tensor_file(relu), model=spm[: len(spm) // 2])
    put("no-spm", tiny, tensor_file(relu), model=b"")
    # tokenizer.json alone (no spiece.model): a model trained with nmt_nfkc, whose character map the
    # Precompiled normaliser carries.
    nfkc = spm_model(MARIAN_SOURCE + MARIAN_TARGET, 40, ids=dict(pad_id=0, eos_id=1, unk_id=2, bos_id=-1, normalization_rule_name="nmt_nfkc"))
    unigram = json.dumps(t5_tokenizer_json(nfkc), ensure_ascii=False).encode()
    nfkc_tiny = dict(tiny, vocab_size=sentencepiece.SentencePieceProcessor(model_proto=nfkc).get_piece_size() + 100)
    put("tokenizer-json-only", nfkc_tiny, tensor_file(t5_tensors(nfkc_tiny, 8)), model=b"", tokenizer=unigram,
        text="\uff34\uff48\uff45 \ufb01sh  caf\u00e9 \u2460 \u65e5\u672c\n@@@@\n<extra_id_0> lo")
    # The identity model's file (no map of its own) with a small map whose trie claims more than it has.
    small = t5_tokenizer_json(spm)
    small["normalizer"]["precompiled_charsmap"] = "/////wAAAAA="
    put("tokenizer-json-bad-charsmap", tiny, tensor_file(relu), model=b"", tokenizer=json.dumps(small).encode())
    put("vocab-smaller-than-spm", dict(tiny, vocab_size=10), tensor_file(t5_tensors(dict(tiny, vocab_size=10), 5)))


def seeds_word_folder():
    def put(name, config, weights=b"", vocab=b"", text=""):
        parts = [json.dumps(config).encode() if isinstance(config, dict) else config, weights,
                 vocab if isinstance(vocab, bytes) else ("\n".join(vocab) + "\n").encode(),
                 text if isinstance(text, bytes) else text.encode()]
        write("word_folder", name, SEP.join(parts))

    tensors = gpt2_tensors(WORD_TINY, 1)
    put("tiny-f32", WORD_TINY, tensor_file(tensors), WORD_VOCAB, "The dog sat on the bank of the river.")
    put("tiny-f16", WORD_TINY, tensor_file(tensors, "F16"), WORD_VOCAB, "She sat. He was? unknownword, again!")
    put("tiny-bf16-crlf", WORD_TINY, tensor_file(tensors, "BF16"), ("\r\n".join(WORD_VOCAB) + "\r\n").encode(),
        "ÉNORME cat — 日本語\tand\u3000a")
    one = dict(WORD_TINY, n_layer=1, n_head=1, n_inner=None, activation_function="relu")
    put("one-layer-empty-text", one, tensor_file(gpt2_tensors(dict(one, n_inner=32), 2)), WORD_VOCAB, "")
    short = dict(WORD_TINY, n_positions=4)
    put("short-context", short, tensor_file(gpt2_tensors(short, 3, prefix="transformer.")), WORD_VOCAB,
        "the cat sat on the mat and the dog sat on the cat")
    put("invalid-utf8", WORD_TINY, tensor_file(tensors), WORD_VOCAB, b"ok \xff\xfe \xc0\xaf")
    put("nan-weight", WORD_TINY, tensor_file(with_tensor(tensors, "h.0.attn.c_attn.weight", lambda v: [float("nan")] + v[1:])),
        WORD_VOCAB, "the cat")
    put("huge-weights", WORD_TINY, tensor_file(with_tensor(tensors, "h.1.attn.c_attn.weight", lambda v: [3e38] * len(v))),
        WORD_VOCAB, "the cat sat")
    # Hostile folders: each is refused with a sentence.
    put("vocab-size-mismatch", dict(WORD_TINY, vocab_size=len(WORD_VOCAB) + 1), tensor_file(tensors), WORD_VOCAB, "x")
    put("no-vocab", WORD_TINY, tensor_file(tensors), b"", "x")
    put("no-weights", WORD_TINY, b"", WORD_VOCAB, "x")
    put("vocab-duplicate", WORD_TINY, tensor_file(tensors), WORD_VOCAB[:-1] + ["cat"], "x")
    put("vocab-empty-line", WORD_TINY, tensor_file(tensors), WORD_VOCAB[:3] + [""] + WORD_VOCAB[4:], "x")
    put("vocab-no-bos", WORD_TINY, tensor_file(tensors), WORD_VOCAB[1:] + ["x"], "x")
    put("vocab-white-space", WORD_TINY, tensor_file(tensors), WORD_VOCAB[:-1] + ["two words"], "x")
    put("wrong-shape", dict(WORD_TINY, n_positions=8), tensor_file(tensors), WORD_VOCAB, "x")
    put("missing-tensor", WORD_TINY, tensor_file(tensors[:-1]), WORD_VOCAB, "x")
    put("heads-not-dividing", dict(WORD_TINY, n_head=3), tensor_file(tensors), WORD_VOCAB, "x")
    put("eps-huge", dict(WORD_TINY, layer_norm_epsilon=1e300), tensor_file(tensors), WORD_VOCAB, "x")
    put("config-nan", json.dumps(WORD_TINY).replace('"n_layer": 2', '"n_layer": NaN').encode(), tensor_file(tensors),
        WORD_VOCAB, "x")
    put("config-nested", b'{"model_type":"attnscope","n_layer":' + b"[" * 100 + b"]" * 100 + b"}", tensor_file(tensors),
        WORD_VOCAB, "x")


# ---- attnscope-cli ----

TRANSLATOR_VOCAB = ["<bos>", "<unk>", "<eos>", ".", "the", "cat", "dog", "sees", "red", "big", "and",
                    "kuze", "puze", "bolo", "daze", "nire", "ri", "ka"]
TRANSLATOR_TINY = {"model_type": "attnscope-translator", "name": "tiny-translator", "tokenizer": "word-vocab",
                   "encoder_layers": 2, "decoder_layers": 1, "attention_heads": 2, "d_model": 8, "ffn_dim": 16,
                   "vocab_size": len(TRANSLATOR_VOCAB), "max_source_positions": 8, "max_target_positions": 6,
                   "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new", "bos_token": "<bos>",
                   "eos_token": "<eos>", "unk_token": "<unk>"}


def translator_tensors(config, seed):
    """Every tensor of AttnScope's own encoder-decoder (core/train/translatornetwork.h), weights [in, out]."""
    rnd = random.Random(seed)
    D, F, V = config["d_model"], config["ffn_dim"], config["vocab_size"]

    def t(name, *shape):
        n = 1
        for s in shape:
            n *= s
        return (name, list(shape), [rnd.uniform(-0.5, 0.5) for _ in range(n)])

    def norm(name):
        return [t(name + ".weight", D), t(name + ".bias", D)]

    def mlp(p):
        return [t(p + "mlp.fc.weight", D, F), t(p + "mlp.fc.bias", F), t(p + "mlp.proj.weight", F, D), t(p + "mlp.proj.bias", D)]

    def self_attn(p):
        return [t(p + "self_attn.qkv.weight", D, 3 * D), t(p + "self_attn.qkv.bias", 3 * D),
                t(p + "self_attn.out.weight", D, D), t(p + "self_attn.out.bias", D)]

    out = [t("shared.weight", V, D), t("encoder.positions.weight", config["max_source_positions"], D),
           t("decoder.positions.weight", config["max_target_positions"], D)]
    for i in range(config["encoder_layers"]):
        p = "encoder.layers.%d." % i
        out += norm(p + "ln_1") + self_attn(p) + norm(p + "ln_2") + mlp(p)
    out += norm("encoder.ln_f")
    for i in range(config["decoder_layers"]):
        p = "decoder.layers.%d." % i
        out += norm(p + "ln_1") + self_attn(p) + norm(p + "ln_3") + mlp(p) + norm(p + "ln_2")
        out += [t(p + "cross_attn.q.weight", D, D), t(p + "cross_attn.q.bias", D), t(p + "cross_attn.kv.weight", D, 2 * D),
                t(p + "cross_attn.kv.bias", 2 * D), t(p + "cross_attn.out.weight", D, D), t(p + "cross_attn.out.bias", D)]
    out += norm("decoder.ln_f")
    return out


def seeds_translator_folder():
    def put(name, config, weights=b"", vocab=b"", lexicon=b"", source="", target=""):
        parts = [json.dumps(config).encode() if isinstance(config, dict) else config, weights,
                 vocab if isinstance(vocab, bytes) else ("\n".join(vocab) + "\n").encode(), lexicon,
                 source if isinstance(source, bytes) else source.encode(),
                 target if isinstance(target, bytes) else target.encode()]
        write("translator_folder", name, SEP.join(parts))

    tensors = translator_tensors(TRANSLATOR_TINY, 1)
    lexicon = b"cat\tkuze\ndog\tpuze\nsees\tbolo\nred\tdaze\nbig\tnire\n"
    put("tiny-f32", TRANSLATOR_TINY, tensor_file(tensors), TRANSLATOR_VOCAB, lexicon, "the big cat sees the dog .", "kuze nire puze bolo .")
    put("tiny-f16", TRANSLATOR_TINY, tensor_file(tensors, "F16"), TRANSLATOR_VOCAB, b"", "the red dog .", "puze daze .")
    put("tiny-bf16-unknown-words", TRANSLATOR_TINY, tensor_file(tensors, "BF16"), TRANSLATOR_VOCAB, lexicon,
        "ÉNORME cat — 日本語", "zzz kuze")
    put("empty-texts", TRANSLATOR_TINY, tensor_file(tensors), TRANSLATOR_VOCAB, lexicon, "", "")
    put("source-too-long", TRANSLATOR_TINY, tensor_file(tensors), TRANSLATOR_VOCAB, lexicon,
        "the cat sees the dog and the dog sees the cat .", "kuze")
    put("invalid-utf8", TRANSLATOR_TINY, tensor_file(tensors), TRANSLATOR_VOCAB, lexicon, b"ok \xff\xfe", b"\xc0\xaf")
    put("nan-weight", TRANSLATOR_TINY,
        tensor_file(with_tensor(tensors, "decoder.layers.0.cross_attn.q.weight", lambda v: [float("nan")] + v[1:])),
        TRANSLATOR_VOCAB, lexicon, "the cat", "kuze")
    put("huge-weights", TRANSLATOR_TINY,
        tensor_file(with_tensor(tensors, "encoder.layers.1.self_attn.qkv.weight", lambda v: [3e38] * len(v))),
        TRANSLATOR_VOCAB, lexicon, "the cat sees", "kuze bolo")
    # Hostile folders: each is refused with a sentence.
    put("vocab-size-mismatch", dict(TRANSLATOR_TINY, vocab_size=len(TRANSLATOR_VOCAB) + 1), tensor_file(tensors),
        TRANSLATOR_VOCAB, lexicon, "x", "y")
    put("vocab-no-eos", TRANSLATOR_TINY, tensor_file(tensors), [w if w != "<eos>" else "eos" for w in TRANSLATOR_VOCAB],
        lexicon, "x", "y")
    put("no-vocab", TRANSLATOR_TINY, tensor_file(tensors), b"", lexicon, "x", "y")
    put("no-weights", TRANSLATOR_TINY, b"", TRANSLATOR_VOCAB, lexicon, "x", "y")
    put("missing-cross-attention", TRANSLATOR_TINY,
        tensor_file(with_tensor(tensors, "decoder.layers.0.cross_attn.kv.weight", shape="drop")), TRANSLATOR_VOCAB, lexicon, "x", "y")
    put("wrong-shape", dict(TRANSLATOR_TINY, max_target_positions=7), tensor_file(tensors), TRANSLATOR_VOCAB, lexicon, "x", "y")
    put("heads-not-dividing", dict(TRANSLATOR_TINY, attention_heads=3), tensor_file(tensors), TRANSLATOR_VOCAB, lexicon, "x", "y")
    put("gated-activation", dict(TRANSLATOR_TINY, activation_function="swiglu"), tensor_file(tensors), TRANSLATOR_VOCAB,
        lexicon, "x", "y")
    put("huge-decoder", dict(TRANSLATOR_TINY, decoder_layers=100000), tensor_file(tensors), TRANSLATOR_VOCAB, lexicon, "x", "y")
    put("config-not-object", b"[1, 2, 3]", tensor_file(tensors), TRANSLATOR_VOCAB, lexicon, "x", "y")


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


# ---- scenes and lessons ----

def seeds_scene():
    full = {"format": "attnscope-scene", "version": 1, "model": "builtin", "text": "The dog chased the cat",
            "settings": {"mask": "causal", "scaling": "sqrt-dk", "temperature": 1.0, "positional": "default",
                         "blocked_keys": [2], "ablate": "0.1,1.3", "ablate_mode": "zero", "token_limit": 0},
            "focus": {"layer": 0, "head": 1}, "tab": "scaling-lab", "view": "compare",
            "compare_b": {"mask": "none", "scaling": "sqrt-dk", "temperature": 1.0, "text": ""}}
    write("scene", "full", json.dumps(full, indent=2, ensure_ascii=False))
    write("scene", "header-only", '{"format":"attnscope-scene","version":1}')
    write("scene", "unicode-text", json.dumps(dict(full, text="ünïcödé — \u2713 \"quoted\""), ensure_ascii=False))
    write("scene", "newer-version", '{"format":"attnscope-scene","version":7}')
    write("scene", "no-header", '{"text":"x"}')
    write("scene", "unknown-field", '{"format":"attnscope-scene","version":1,"setings":{}}')
    write("scene", "bad-temperature", '{"format":"attnscope-scene","version":1,"settings":{"temperature":-1}}')
    write("scene", "huge-numbers", '{"format":"attnscope-scene","version":1,"settings":{"blocked_keys":[1e400,18446744073709551615,-1],'
                                   '"token_limit":99999999999},"focus":{"layer":2147483648,"head":-5}}')
    write("scene", "wrong-types", '{"format":"attnscope-scene","version":"1","model":[],"settings":[],"focus":"0.1"}')
    write("scene", "cut-short", '{"format":"attnscope-scene","version":1,"text":"the')
    write("scene", "not-object", "[1,2,3]")
    write("scene", "deep-nesting", '{"format":"attnscope-scene","version":1,"text":' + "[" * 200 + "]" * 200 + "}")
    write("scene", "invalid-utf8", b'{"format":"attnscope-scene","version":1,"text":"\xff\xfe"}')


def lesson_json(steps, **top):
    lesson = {"format": "attnscope-lesson", "version": 1, "title": "A lesson", "summary": "One idea.", "order": 3,
              "steps": steps}
    lesson.update(top)
    return json.dumps(lesson, indent=1)


QUESTION = {"prompt": "Which?", "choices": [{"text": "This", "correct": True, "feedback": "Yes, because."},
                                            {"text": "That", "correct": False, "feedback": "No, because."}]}


def seeds_lesson():
    step = {"title": "Look", "text": "A paragraph.\n\nAnother.",
            "state": {"model": "builtin", "text": "the dog bit the man", "settings": {"mask": "none"},
                      "focus": {"layer": 0, "head": 1}, "tab": "attention"},
            "highlight": ["causal", "heatmap"]}
    write("lesson", "two-steps", lesson_json([step, dict(step, question=QUESTION)]))
    write("lesson", "one-step", lesson_json([{"title": "Only", "text": "Text.", "highlight": "sqrt-dk", "question": QUESTION}]))
    write("lesson", "no-question-at-end", lesson_json([step]))
    write("lesson", "two-correct", lesson_json([dict(step, question={"prompt": "?", "choices": [
        {"text": "a", "correct": True, "feedback": "f"}, {"text": "b", "correct": True, "feedback": "f"}]})]))
    write("lesson", "state-with-header", lesson_json([dict(step, state={"format": "attnscope-scene", "version": 1},
                                                           question=QUESTION)]))
    write("lesson", "empty-steps", lesson_json([]))
    write("lesson", "wrong-types", lesson_json([{"title": 1, "text": [], "highlight": {"a": 1}}], order="first"))
    write("lesson", "unknown-field", lesson_json([dict(step, question=QUESTION, hint="x")]))
    write("lesson", "newer-version", lesson_json([dict(step, question=QUESTION)], version=9))
    write("lesson", "deep-nesting", '{"format":"attnscope-lesson","version":1,"steps":' + "[" * 200 + "]" * 200 + "}")
    write("lesson", "not-json", '{"format": "attnscope-lesson", ')


if __name__ == "__main__":
    seeds_safetensors()
    seeds_config()
    seeds_tokenizers()
    seeds_word()
    seeds_folder()
    seeds_llama_tokenizer()
    seeds_llama_folder()
    seeds_neox_folder()
    seeds_bert_folder()
    seeds_bart_folder()
    seeds_marian_folder()
    seeds_t5_folder()
    seeds_word_folder()
    seeds_translator_folder()
    seeds_cli()
    seeds_scene()
    seeds_lesson()
