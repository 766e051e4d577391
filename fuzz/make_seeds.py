#!/usr/bin/env python3
"""fuzz/make_seeds.py — writes the seed corpora under fuzz/corpus/<target>/.

Python 3 standard library only. Every seed is small (the whole tree stays well
under 200 KB): the bundled examples/*.json for the JSON targets, a compiled
plan of the `synthetic` example for plan_verify (needs a built `ferrite`; pass
--ferrite PATH, default build/ferrite, skipped when absent), hand-built tiny
VALID model files (GGUF v3 with llama metadata and F32 tensors, a GGUF with
every metadata type and tensor type, safetensors files, a Hugging Face model
directory, llama2.c checkpoints with dim 8 and tokenizers), the first bytes
of the shared stories260K files, and a few MiniMalloc CSV lines.

Usage: fuzz/make_seeds.py [--ferrite build/ferrite] [--shared ../shared]
Rewrites the seed files it owns; leaves other files in fuzz/corpus alone.
"""

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")

# The tiny Llama every model seed describes.
DIM, HIDDEN, LAYERS, HEADS, KV_HEADS, VOCAB, SEQ = 8, 16, 1, 2, 1, 8, 4
HEAD_DIM = DIM // HEADS
KV_DIM = HEAD_DIM * KV_HEADS


def write(target, name, data):
    directory = os.path.join(CORPUS, target)
    os.makedirs(directory, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(directory, name), "wb") as f:
        f.write(data)


def floats(count, seed=1):
    """`count` deterministic small f32 values, little-endian."""
    return b"".join(struct.pack("<f", ((i * 7 + seed) % 13 - 6) / 16.0) for i in range(count))


def u32(v):
    return struct.pack("<I", v)


def u64(v):
    return struct.pack("<Q", v)


# ---------------------------------------------------------------- GGUF v3
GGUF_TYPES = {"u8": 0, "i8": 1, "u16": 2, "i16": 3, "u32": 4, "i32": 5, "f32": 6, "bool": 7,
              "str": 8, "arr": 9, "u64": 10, "i64": 11, "f64": 12}
GGUF_PACK = {"u8": "<B", "i8": "<b", "u16": "<H", "i16": "<h", "u32": "<I", "i32": "<i",
             "f32": "<f", "bool": "<B", "u64": "<Q", "i64": "<q", "f64": "<d"}


def gguf_string(text):
    raw = text.encode()
    return u64(len(raw)) + raw


def gguf_value(kind, value):
    """The encoding of one value; arrays are ("arr", (element_kind, [values]))."""
    if kind == "str":
        return gguf_string(value)
    if kind == "arr":
        element_kind, items = value
        body = u32(GGUF_TYPES[element_kind]) + u64(len(items))
        return body + b"".join(gguf_value(element_kind, item) for item in items)
    return struct.pack(GGUF_PACK[kind], value)


def gguf_file(metadata, tensors, alignment=32):
    """metadata: [(key, kind, value)]; tensors: [(name, dims innermost first, type, bytes)]."""
    out = b"GGUF" + u32(3) + u64(len(tensors)) + u64(len(metadata))
    for key, kind, value in metadata:
        out += gguf_string(key) + u32(GGUF_TYPES[kind]) + gguf_value(kind, value)
    offset = 0
    placed = []
    for name, dims, ggml_type, data in tensors:
        out += gguf_string(name) + u32(len(dims)) + b"".join(u64(d) for d in dims)
        out += u32(ggml_type) + u64(offset)
        placed.append((offset, data))
        offset += (len(data) + alignment - 1) // alignment * alignment
    out += b"\0" * ((-len(out)) % alignment)
    data_start = len(out)
    for rel, data in placed:
        out += b"\0" * (data_start + rel - len(out)) + data
    return out


def llama_gguf_tensors():
    """(gguf name, dims innermost first, f32 bytes) of the tiny Llama."""
    shapes = [("token_embd.weight", [DIM, VOCAB]), ("output_norm.weight", [DIM])]
    for layer in range(LAYERS):
        b = f"blk.{layer}."
        shapes += [(b + "attn_norm.weight", [DIM]), (b + "attn_q.weight", [DIM, DIM]),
                   (b + "attn_k.weight", [DIM, KV_DIM]), (b + "attn_v.weight", [DIM, KV_DIM]),
                   (b + "attn_output.weight", [DIM, DIM]), (b + "ffn_norm.weight", [DIM]),
                   (b + "ffn_gate.weight", [DIM, HIDDEN]), (b + "ffn_up.weight", [DIM, HIDDEN]),
                   (b + "ffn_down.weight", [HIDDEN, DIM])]
    out = []
    for i, (name, dims) in enumerate(shapes):
        count = 1
        for d in dims:
            count *= d
        out.append((name, dims, floats(count, i)))
    return out


def vocab_tokens():
    return ["<unk>", "<s>", "</s>", "\u2581a", "\u2581the", "on", "ce", "<0x41>"]


def gguf_llama():
    tokens = vocab_tokens()
    metadata = [
        ("general.architecture", "str", "llama"),
        ("general.alignment", "u32", 32),
        ("llama.embedding_length", "u32", DIM),
        ("llama.feed_forward_length", "u32", HIDDEN),
        ("llama.block_count", "u32", LAYERS),
        ("llama.attention.head_count", "u32", HEADS),
        ("llama.attention.head_count_kv", "u32", KV_HEADS),
        ("llama.context_length", "u32", SEQ),
        ("llama.attention.layer_norm_rms_epsilon", "f32", 1e-5),
        ("llama.rope.freq_base", "f32", 10000.0),
        ("tokenizer.ggml.model", "str", "llama"),
        ("tokenizer.ggml.tokens", "arr", ("str", tokens)),
        ("tokenizer.ggml.scores", "arr", ("f32", [float(-i) for i in range(len(tokens))])),
        ("tokenizer.ggml.bos_token_id", "u32", 1),
        ("tokenizer.ggml.eos_token_id", "u32", 2),
        ("tokenizer.ggml.unknown_token_id", "u32", 0),
    ]
    tensors = [(name, dims, 0, data) for name, dims, data in llama_gguf_tensors()]
    return gguf_file(metadata, tensors)


def gguf_every_type():
    """Every metadata value type (nested arrays too) and every known tensor type."""
    metadata = [
        ("a.u8", "u8", 7), ("a.i8", "i8", -7), ("a.u16", "u16", 700), ("a.i16", "i16", -700),
        ("a.u32", "u32", 70000), ("a.i32", "i32", -70000), ("a.f32", "f32", 0.5),
        ("a.bool", "bool", 1), ("a.str", "str", "text"), ("a.u64", "u64", 1 << 40),
        ("a.i64", "i64", -(1 << 40)), ("a.f64", "f64", 0.25),
        ("a.nested", "arr", ("arr", [("u8", [1, 2]), ("str", ["x"])])),
        ("a.bools", "arr", ("bool", [0, 1])),
        ("general.alignment", "u32", 64),
    ]
    tensors = [
        ("f16", [4], 1, b"\x00\x3c" * 4),
        ("bf16", [2, 2], 30, b"\x80\x3f" * 4),
        ("q4_0", [32], 2, b"\x00\x3c" + b"\x88" * 16),
        ("q8_0", [32], 8, b"\x00\x3c" + b"\x01" * 32),
        ("q4_1", [32], 3, b"\x00\x3c" * 2 + b"\x5a" * 16),
        ("q5_0", [32], 6, b"\x00\x3c" + b"\xa5" * 4 + b"\x5a" * 16),
        ("q5_1", [32], 7, b"\x00\x3c" * 2 + b"\xa5" * 4 + b"\x5a" * 16),
        ("q4_k", [256], 12, b"\x00\x3c" * 2 + b"\xc5" * 12 + b"\x5a" * 128),
        ("q5_k", [256], 13, b"\x00\x3c" * 2 + b"\xc5" * 12 + b"\xa5" * 32 + b"\x5a" * 128),
        ("q6_k", [256], 14, b"\x5a" * 128 + b"\xa5" * 64 + b"\x81" * 16 + b"\x00\x3c"),
        ("unknown_type", [256], 16, b"\x00" * 66),
    ]
    return gguf_file(metadata, tensors, alignment=64)


# ---------------------------------------------------------------- safetensors
def safetensors_file(tensors, metadata=None):
    """tensors: [(name, dtype, shape, bytes)] laid out in order."""
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    offset = 0
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((-len(text)) % 8)
    return u64(len(text)) + text + b"".join(t[3] for t in tensors)


HF_NAMES = {"token_embd.weight": "model.embed_tokens.weight", "output_norm.weight": "model.norm.weight",
            "attn_norm.weight": "input_layernorm.weight", "attn_q.weight": "self_attn.q_proj.weight",
            "attn_k.weight": "self_attn.k_proj.weight", "attn_v.weight": "self_attn.v_proj.weight",
            "attn_output.weight": "self_attn.o_proj.weight",
            "ffn_norm.weight": "post_attention_layernorm.weight",
            "ffn_gate.weight": "mlp.gate_proj.weight", "ffn_up.weight": "mlp.up_proj.weight",
            "ffn_down.weight": "mlp.down_proj.weight"}


def hf_name(gguf):
    if gguf in HF_NAMES:
        return HF_NAMES[gguf]
    _, layer, rest = gguf.split(".", 2)
    return f"model.layers.{layer}.{HF_NAMES[rest]}"


def to_bf16(data):
    return b"".join(data[i + 2:i + 4] for i in range(0, len(data), 4))


def hf_safetensors():
    tensors = []
    for i, (name, dims, data) in enumerate(llama_gguf_tensors()):
        shape = list(reversed(dims))  # safetensors shapes are outermost first
        if i % 3 == 2:
            tensors.append((hf_name(name), "BF16", shape, to_bf16(data)))
        else:
            tensors.append((hf_name(name), "F32", shape, data))
    return safetensors_file(tensors, {"format": "pt"})


def hf_config():
    return json.dumps({"architectures": ["LlamaForCausalLM"], "hidden_size": DIM,
                       "intermediate_size": HIDDEN, "num_hidden_layers": LAYERS,
                       "num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS,
                       "vocab_size": VOCAB, "max_position_embeddings": SEQ,
                       "rms_norm_eps": 1e-05, "rope_theta": 10000.0,
                       "tie_word_embeddings": True, "torch_dtype": "float32"}, indent=1)


def dir_input(config, safetensors):
    raw = config.encode()
    return u32(len(raw)) + raw + safetensors


# ---------------------------------------------------------------- llama2.c
def llama2c_checkpoint(shared=True):
    header = struct.pack("<7i", DIM, HIDDEN, LAYERS, HEADS, KV_HEADS, VOCAB if shared else -VOCAB, SEQ)
    counts = [VOCAB * DIM, LAYERS * DIM, LAYERS * DIM * DIM, LAYERS * KV_DIM * DIM,
              LAYERS * KV_DIM * DIM, LAYERS * DIM * DIM, LAYERS * DIM, LAYERS * HIDDEN * DIM,
              LAYERS * DIM * HIDDEN, LAYERS * HIDDEN * DIM, DIM, SEQ * HEAD_DIM // 2,
              SEQ * HEAD_DIM // 2]
    if not shared:
        counts.append(VOCAB * DIM)
    return header + b"".join(floats(c, i) for i, c in enumerate(counts))


def llama2c_tokenizer(tokens, max_length=8):
    out = struct.pack("<i", max_length)
    for i, token in enumerate(tokens):
        raw = token.encode()
        out += struct.pack("<fi", float(-i), len(raw)) + raw
    return out


def tiny_tokens():
    return ["<unk>", "<s>", "</s>", " a", " the", "on", "ce", "<0x41>"]


# ---------------------------------------------------------------- main
def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ferrite", default=os.path.join(ROOT, "build", "ferrite"))
    parser.add_argument("--shared", default=os.path.join(os.path.dirname(ROOT), "shared"))
    args = parser.parse_args()
    examples = os.path.join(ROOT, "examples")

    def example(name):
        with open(os.path.join(examples, name), "rb") as f:
            return f.read()

    def shared(relative, limit=None):
        path = os.path.join(args.shared, relative)
        if not os.path.exists(path):
            print(f"make_seeds: {path} is missing; skipped", file=sys.stderr)
            return None
        with open(path, "rb") as f:
            return f.read() if limit is None else f.read(limit)

    # JSON targets: the bundled examples.
    for name in ("synthetic", "llama-decoder"):
        write("program_file", f"{name}.program.json", example(f"{name}.program.json"))
        write("catalog_file", f"{name}.catalog.json", example(f"{name}.catalog.json"))
        write("policy_file", f"{name}.policy.json", example(f"{name}.policy.json"))
    write("catalog_file", "v1-operations.json",
          json.dumps({"format": "ferrite.catalog", "format_version": 1, "operations": []}))

    # weight_quality: an approval measured on stories260K by the CLI.
    if os.path.exists(args.ferrite) and shared("models/stories260K.gguf", 1) is not None:
        with tempfile.TemporaryDirectory() as tmp:
            approval = os.path.join(tmp, "q4.json")
            subprocess.run([args.ferrite, "approve-weights",
                            os.path.join(args.shared, "models/stories260K.gguf"),
                            "--weights", "q4_0", "-o", approval],
                           check=True, stdout=subprocess.DEVNULL)
            with open(approval, "rb") as f:
                write("weight_quality", "stories260K-q4_0.json", f.read())

    # plan_verify: byte 0 is the mode (0 as is, 1 re-hash), then the plan text.
    if os.path.exists(args.ferrite):
        with tempfile.TemporaryDirectory() as tmp:
            plan = os.path.join(tmp, "synthetic.plan.json")
            subprocess.run([args.ferrite, "compile", "--example", "synthetic", "-o", plan],
                           check=True, stdout=subprocess.DEVNULL)
            with open(plan, "rb") as f:
                text = f.read()
        write("plan_verify", "synthetic.plan", b"\x00" + text)
        write("plan_verify", "synthetic.rehash.plan", b"\x01" + text)
    else:
        print(f"make_seeds: {args.ferrite} is missing; plan_verify seeds skipped", file=sys.stderr)
    write("plan_verify", "empty-payload.plan", b"\x01" + b'{"payload":{"schema":"ferrite.plan/1"},"plan_hash":""}')

    # GGUF.
    write("gguf", "tiny-llama.gguf", gguf_llama())
    write("gguf", "every-type.gguf", gguf_every_type())
    if (head := shared("models/stories260K.gguf", 16384)) is not None:
        write("gguf", "stories260K.head.gguf", head)

    # safetensors and the Hugging Face directory.
    write("safetensors", "tiny-llama.safetensors", hf_safetensors())
    write("safetensors", "dtypes.safetensors", safetensors_file(
        [("a", "F16", [2], b"\x00\x3c" * 2), ("b", "I8", [3], b"\x01\x02\x03"),
         ("c", "BOOL", [1], b"\x01"), ("d", "X9", [2], b"\x00" * 5)]))
    write("safetensors", "empty.safetensors", safetensors_file([]))
    write("safetensors_dir", "tiny-llama.dir", dir_input(hf_config(), hf_safetensors()))

    # llama2.c checkpoints and tokenizers.
    write("llama2c_checkpoint", "tiny-shared.bin", llama2c_checkpoint(shared=True))
    write("llama2c_checkpoint", "tiny-unshared.bin", llama2c_checkpoint(shared=False))
    if (head := shared("models/stories260K.bin", 2048)) is not None:
        write("llama2c_checkpoint", "stories260K.head.bin", head)
    write("llama2c_tokenizer", "tiny.tok", u32(len(tiny_tokens())) + llama2c_tokenizer(tiny_tokens()))
    # The whole tok512.bin is not copied into the repository: fuzz/run adds it
    # (with its u32 prefix) to the scratch corpus when ../shared is present.

    # Tokenizer: byte 0 = flags (bit 0 bos, bit 1 eos), then text.
    write("tokenizer", "story.txt", b"\x01Once upon a time, there was a little girl named Lily.")
    write("tokenizer", "utf8.txt", "\x03caf\u00e9 \u2581 \U0001F600 \u00fcber".encode())
    write("tokenizer", "invalid.txt", b"\x01\xff\xc0\x80\xed\xa0\x80 \xf4\x90\x80\x80 a\x00b")
    write("tokenizer", "ids.txt", b"\x00" + bytes(range(0, 64)))

    # Byte-level BPE tokenizer: byte 0 = flags (bit 0 add_special, bit 1 parse_special), then text.
    write("bpe_tokenizer", "story.txt", b"\x00Once upon a time, there was a little girl named Lily.")
    write("bpe_tokenizer", "mixed.txt", "\x03I'VE been 'told' 3333 \u00e9t\u00e9 \U0001F600\n\n\t "
                                        "<|endoftext|>\u1780\u17b6\u1793".encode())
    write("bpe_tokenizer", "invalid.txt", b"\x00\xff\xc0\x80\xed\xa0\x80 \xf4\x90\x80\x80 a\x00b")
    write("bpe_tokenizer", "spaces.txt", b"\x01   \n  \r\n x  \t\t")
    # Chat templates (jinja): small hand-written templates covering the
    # statements, filters and whitespace control the real ones use.
    write("jinja", "chatml.jinja",
          "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] "
          "+ '<|im_end|>\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
          "{% endif %}")
    write("jinja", "constructs.jinja",
          "{%- set ns = namespace(found=false, n=0) -%}\n"
          "{%- macro show(m, sep=': ') -%}{{ m.role | upper }}{{ sep }}{{ m.content | trim }}{%- endmacro -%}\n"
          "{%- for m in messages if m.role != 'system' -%}\n"
          "  {%- if loop.first and m.role == 'user' %}{% set ns.found = true %}{% endif -%}\n"
          "  {{ show(m) }}{{ '|' if not loop.last }}{% set ns.n = ns.n + loop.index %}\n"
          "  {%- if m.tool_calls is defined %}{{ m.tool_calls | tojson(indent=2) }}{% continue %}{% endif -%}\n"
          "{%- else %}none{% endfor %}\n"
          "{{ ns.n }} {{ ns.found }} {{ messages | map(attribute='role') | unique | list | join(',') }}\n"
          "{{ (messages[0].content.split(' ') | last)[::-1] }} {{ strftime_now('%d %b %Y') }}\n"
          "{% raw %}{{ raw }}{% endraw %}{# comment #}{{ raise_exception('end') if false }}")
    write("jinja", "errors.jinja", "{% if %}{{ 1 + }}{% for x in %}{{ x.y.z }}{% endfor")

    # MiniMalloc CSV.
    write("minimalloc_csv", "example.csv", "id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\n")
    write("minimalloc_csv", "offsets.csv", "id,lower,upper,size,offset\r\n0,995328,1000448,656384,0\r\n"
                                           "1,779264,828416,183296,656384")
    if (csv := shared("bench/minimalloc/A.1048576.csv", 200)) is not None:
        write("minimalloc_csv", "A.head.csv", csv[:csv.rfind(b"\n") + 1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
