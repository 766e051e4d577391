#!/usr/bin/env python3
"""Generates examples/llama-decoder.{program,catalog,policy}.json and the
target part (device, providers, declarative estimators) of
examples/synthetic.catalog.json.

A small Llama-style decoder: 2 layers, dim 64, 8 heads, 4 KV heads (head_dim 8,
kv_dim 32), FFN 172, vocab 512, context 256, f32, symbolic token count T.
The output projection has its own weight (`output.weight`, not tied to the
token embedding). Run from the repository root:

    python3 scripts/gen_examples.py

The files are deterministic; CI checks them in as written.
"""
import hashlib
import json
import os
import sys

DIM = 64
N_LAYERS = 2
N_HEADS = 8
N_KV_HEADS = 4
HEAD_DIM = DIM // N_HEADS          # 8
KV_DIM = N_KV_HEADS * HEAD_DIM     # 32
HIDDEN = 172
VOCAB = 512
CONTEXT = 256
ALIGNMENT = 64

FAMILY = "family.llama-decoder"


# ---- compact, stable pretty printer ----------------------------------------

def render(value, indent=0, width=100, prefix=0):
    """JSON with short containers on one line; `prefix` is the width already
    used on the current line (for a key)."""
    flat = json.dumps(value, separators=(", ", ": "))
    if len(flat) + indent + prefix <= width or not isinstance(value, (dict, list)) or not value:
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        items = []
        for k, v in value.items():
            key = json.dumps(k) + ": "
            items.append(pad + key + render(v, indent + 2, width, len(key)))
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [pad + render(v, indent + 2, width) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def write(path, value):
    with open(path, "w", encoding="utf-8") as f:
        f.write(render(value) + "\n")


# ---- weights -----------------------------------------------------------------

def weight_list():
    """(tensor id, gguf name, dims) in GGUF order."""
    out = [("weight.token_embd", "token_embd.weight", [VOCAB, DIM])]
    for i in range(N_LAYERS):
        b = f"blk.{i}"
        out += [
            (f"weight.{b}.attn_norm", f"{b}.attn_norm.weight", [DIM]),
            (f"weight.{b}.attn_q", f"{b}.attn_q.weight", [DIM, DIM]),
            (f"weight.{b}.attn_k", f"{b}.attn_k.weight", [KV_DIM, DIM]),
            (f"weight.{b}.attn_v", f"{b}.attn_v.weight", [KV_DIM, DIM]),
            (f"weight.{b}.attn_output", f"{b}.attn_output.weight", [DIM, DIM]),
            (f"weight.{b}.ffn_norm", f"{b}.ffn_norm.weight", [DIM]),
            (f"weight.{b}.ffn_gate", f"{b}.ffn_gate.weight", [HIDDEN, DIM]),
            (f"weight.{b}.ffn_up", f"{b}.ffn_up.weight", [HIDDEN, DIM]),
            (f"weight.{b}.ffn_down", f"{b}.ffn_down.weight", [DIM, HIDDEN]),
        ]
    out += [
        ("weight.output_norm", "output_norm.weight", [DIM]),
        ("weight.output", "output.weight", [VOCAB, DIM]),
    ]
    return out


def component_id(weight_id):
    return "component." + weight_id[len("weight."):]


def value_id(weight_id):
    return "value." + weight_id


def tensor(dims, dtype="f32"):
    return {"dimensions": dims, "element_type": dtype, "layout": "contiguous"}


def weight_schema():
    weights = sorted(weight_list())
    components = sorted(
        ({"id": component_id(w), "role": "values", "external_names": [name], "dimensions": dims,
          "encoding": {"kind": "dense", "element_type": "f32"}, "required": True}
         for w, name, dims in weights), key=lambda c: c["id"])
    tensors = [{"id": w, "dimensions": dims, "logical_element_type": "f32",
                "physical_layout": {"kind": "dense", "component_id": component_id(w)},
                "required": True} for w, _, dims in weights]
    return {"format_id": "weight-format.dense", "layout_id": "weight-layout.llama",
            "version": {"major": 1, "minor": 0}, "components": components, "tensors": tensors}


# ---- program -----------------------------------------------------------------

def node(node_id, op, inputs, outputs, attributes=None, work=None):
    return {"id": node_id, "operation": op, "version": "1.0",
            "work": work if work is not None else {"tokens": {"value": outputs[0], "axis": 0}},
            "inputs": inputs, "outputs": outputs, "attributes": attributes or {}}


def rational(text):
    return {"rational": text}


def unsigned(n):
    return {"unsigned": n}


def program():
    eps = {"epsilon": rational("1/100000")}
    rope = {"head_dim": unsigned(HEAD_DIM), "theta": rational("10000"),
            "convention": {"text": "interleaved"}}
    blocks = [{"id": "block.embed", "nodes": [
        node("node.token_embd", "operation.token_embedding",
             ["value.tokens", value_id("weight.token_embd")], ["value.embed"])]}]
    x = "value.embed"
    for i in range(N_LAYERS):
        b = f"blk.{i}"
        w = lambda name: value_id(f"weight.{b}.{name}")  # noqa: E731
        v = lambda name: f"value.{b}.{name}"  # noqa: E731
        n = lambda name: f"node.{b}.{name}"  # noqa: E731
        nodes = [
            node(n("attn_norm"), "operation.rms_norm", [x, w("attn_norm")], [v("attn_norm")], eps),
            node(n("attn_q"), "operation.linear", [v("attn_norm"), w("attn_q")], [v("q")]),
            node(n("attn_k"), "operation.linear", [v("attn_norm"), w("attn_k")], [v("k")]),
            node(n("attn_v"), "operation.linear", [v("attn_norm"), w("attn_v")], [v("v")]),
            node(n("rope_q"), "operation.rope", [v("q"), "value.positions"], [v("q_rope")], rope),
            node(n("rope_k"), "operation.rope", [v("k"), "value.positions"], [v("k_rope")], rope),
            node(n("attention"), "operation.attention",
                 [v("q_rope"), v("k_rope"), v("v"), "value.positions", v("k_cache"), v("v_cache")],
                 [v("attention")],
                 {"n_heads": unsigned(N_HEADS), "n_kv_heads": unsigned(N_KV_HEADS),
                  "head_dim": unsigned(HEAD_DIM)}),
            node(n("attn_output"), "operation.linear", [v("attention"), w("attn_output")],
                 [v("attn_output")]),
            node(n("attn_residual"), "operation.add", [x, v("attn_output")], [v("attn_residual")]),
            node(n("ffn_norm"), "operation.rms_norm", [v("attn_residual"), w("ffn_norm")],
                 [v("ffn_norm")], eps),
            node(n("ffn_gate"), "operation.linear", [v("ffn_norm"), w("ffn_gate")], [v("ffn_gate")]),
            node(n("ffn_up"), "operation.linear", [v("ffn_norm"), w("ffn_up")], [v("ffn_up")]),
            node(n("swiglu"), "operation.swiglu", [v("ffn_gate"), v("ffn_up")], [v("swiglu")]),
            node(n("ffn_down"), "operation.linear", [v("swiglu"), w("ffn_down")], [v("ffn_down")]),
            node(n("ffn_residual"), "operation.add", [v("attn_residual"), v("ffn_down")],
                 [v("ffn_residual")]),
        ]
        blocks.append({"id": f"block.layer.{i}", "nodes": nodes})
        x = v("ffn_residual")
    blocks.append({"id": "block.head", "nodes": [
        node("node.take_last_token", "operation.take_last_token", [x], ["value.last_token"],
             work={"tokens": {"value": x, "axis": 0}}),
        node("node.output_norm", "operation.rms_norm",
             ["value.last_token", value_id("weight.output_norm")], ["value.output_norm"], eps,
             work="fixed"),
        node("node.output", "operation.linear",
             ["value.output_norm", value_id("weight.output")], ["value.logits"], work="fixed"),
    ]})
    states = []
    for i in range(N_LAYERS):
        for kind in ("k_cache", "v_cache"):
            # One token's row; the demand scales it to the whole context, so the
            # plan sizes the state for CONTEXT rows and records the demand.
            states.append({"id": f"state.blk.{i}.{kind}", "value": f"value.blk.{i}.{kind}",
                           "tensor": tensor([KV_DIM]), "lifetime": "sequence",
                           "capacity_demand": {"token_scaled": {
                               "bytes_per_token": KV_DIM * 4, "maximum_tokens": CONTEXT}},
                           "initialization": "zero"})
    weights = [{"weight": w, "value": value_id(w), "tensor": tensor(dims)}
               for w, _, dims in sorted(weight_list())]
    return {"family": FAMILY, "inputs": ["value.tokens", "value.positions"], "blocks": blocks,
            "states": sorted(states, key=lambda s: s["id"]), "weights": weights,
            "outputs": ["value.logits"]}


def program_file():
    config = {"dim": DIM, "hidden_dim": HIDDEN, "max_seq_len": CONTEXT, "n_heads": N_HEADS,
              "n_kv_heads": N_KV_HEADS, "n_layers": N_LAYERS, "norm_eps": "1/100000",
              "rope_theta": "10000", "vocab_size": VOCAB}
    return {"format": "ferrite.program", "format_version": 1, "family": FAMILY, "config": config,
            "weight_schema": weight_schema(), "program": program()}


# ---- catalog -----------------------------------------------------------------

def contract(dims, dtype="f32", access="read", alias="no_alias"):
    return {"dimensions": dims, "element_types": [dtype], "layouts": ["contiguous"],
            "access": access, "alias": alias}


def attr(kind, constraint="none", required=True):
    return {"kind": kind, "required": required, "constraint": constraint}


def operation(op_id, inputs, outputs, attributes=None):
    return {"id": op_id, "version": "1.0", "inputs": inputs, "outputs": outputs,
            "attributes": attributes or {},
            "resources": {"minimum_value_alignment_bytes": ALIGNMENT, "scratch": "optional",
                          "binding": "optional", "persistent": "forbidden"},
            "provider": {"minimum_version": "1.0", "required_capabilities": []}}


def catalog_file():
    ops = [
        operation("operation.add", [contract(["T", "D"]), contract(["T", "D"])],
                  [contract(["T", "D"], access="write", alias={"may_alias": 0})]),
        operation("operation.attention",
                  [contract(["T", "QD"]), contract(["T", "KD"]), contract(["T", "KD"]),
                   contract(["T"], "u32"), contract(["KD"], access="read_write"),
                   contract(["KD"], access="read_write")],
                  [contract(["T", "QD"], access="write")],
                  {"head_dim": attr("unsigned", {"unsigned_range": [1, 4096]}),
                   "n_heads": attr("unsigned", {"unsigned_range": [1, 4096]}),
                   "n_kv_heads": attr("unsigned", {"unsigned_range": [1, 4096]})}),
        operation("operation.linear", [contract(["T", "K"]), contract(["N", "K"])],
                  [contract(["T", "N"], access="write")]),
        operation("operation.rms_norm", [contract(["T", "D"]), contract(["D"])],
                  [contract(["T", "D"], access="write")],
                  {"epsilon": attr("rational", {"rational_range": ["1/1000000000000", "1"]})}),
        operation("operation.rope", [contract(["T", "E"]), contract(["T"], "u32")],
                  [contract(["T", "E"], access="write")],
                  {"convention": attr("text", {"text_choices": ["half_split", "interleaved"]}),
                   "head_dim": attr("unsigned", {"unsigned_range": [2, 4096]}),
                   "theta": attr("rational", {"rational_range": ["1", "1000000000"]})}),
        operation("operation.swiglu", [contract(["T", "F"]), contract(["T", "F"])],
                  [contract(["T", "F"], access="write")]),
        operation("operation.take_last_token", [contract(["T", "D"])],
                  [contract([1, "D"], access="write")]),
        operation("operation.token_embedding", [contract(["T"], "u32"), contract(["V", "D"])],
                  [contract(["T", "D"], access="write")]),
    ]
    providers = []
    for op in ops:
        providers.append(reference_provider(op))
    providers.append(tiled_linear_provider(next(o for o in ops if o["id"] == "operation.linear")))
    providers.append(paged_attention_provider(
        next(o for o in ops if o["id"] == "operation.attention")))
    providers.sort(key=lambda p: (p["operation"], p["id"]))
    return {"format": "ferrite.catalog", "format_version": 2, "device": cpu_device(),
            "operations": ops, "providers": providers}


# ---- target: device and providers -------------------------------------------

def sha256(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


LINEAR = ["linear/contiguous"]
PAGED_KV = ["fixed_block:4096/paged:4096"]


def cpu_device():
    return {"id": "device.cpu.0", "class": "host", "ordinal": 0,
            "total_memory_bytes": 8 << 30,
            "runtime_implementation_fingerprint": sha256("ferrite example runtime: host cpu"),
            "capabilities": ["capability.f32", "capability.simd"],
            "dynamic_storage_profiles": LINEAR}


def slots(op, profiles_for=lambda role, ordinal, contract: LINEAR):
    out = []
    for role, key in (("input", "inputs"), ("output", "outputs")):
        for ordinal, c in enumerate(op[key]):
            out.append({"role": role, "ordinal": ordinal,
                        "accepted_profiles": profiles_for(role, ordinal, c)})
    return out


def short(op_id):
    return op_id[len("operation."):]


def estimator(name, estimate):
    return {"id": "estimator." + name, "version": "1.0", "estimate": estimate}


def provider(provider_id, op, capabilities, storage, estimate):
    return {"id": provider_id, "operation": op["id"], "version": "1.0",
            "implementation_fingerprint": sha256("ferrite example kernel: " + provider_id),
            "capabilities": capabilities, "accepted_weight_formats": ["weight-format.dense"],
            "storage": storage,
            "estimator": estimator(provider_id[len("provider."):], estimate)}


def scratch_per_token(bytes_per_token):
    return {"formula": {"tokens": {"bytes_per_token": bytes_per_token}},
            "alignment_bytes": ALIGNMENT, "scope": "invocation", "storage": LINEAR}


def reference_provider(op):
    """Plain kernels: value alignment 64; attention needs a score row per
    query token and head over the whole context."""
    estimate = {"value_alignment_bytes": ALIGNMENT}
    if op["id"] == "operation.attention":
        estimate["scratch"] = scratch_per_token(N_HEADS * CONTEXT * 4)
    return provider("provider.cpu.reference." + short(op["id"]), op, ["capability.f32"],
                    slots(op), estimate)


def tiled_linear_provider(op):
    """A cache-blocked linear: 128-byte aligned values and a fixed packing panel."""
    estimate = {"value_alignment_bytes": 128,
                "scratch": {"formula": {"fixed": {"bytes": 16384}}, "alignment_bytes": 128,
                            "scope": "invocation", "storage": LINEAR}}
    return provider("provider.cpu.tiled.linear", op, ["capability.f32", "capability.simd"],
                    slots(op), estimate)


def paged_attention_provider(op):
    """Attention over a paged KV cache: the KV state slots (inputs 4 and 5) need
    a paged profile this example's device does not offer, so explain shows it
    rejected with storage evidence."""
    def profiles(role, ordinal, contract):
        return PAGED_KV if role == "input" and ordinal in (4, 5) else LINEAR
    return provider("provider.cpu.paged.attention", op, ["capability.f32"], slots(op, profiles),
                    {"value_alignment_bytes": ALIGNMENT,
                     "scratch": scratch_per_token(N_HEADS * CONTEXT * 4)})


def synthetic_target(catalog):
    """The spec §12 fixture's device and provider, added to the operations of
    examples/synthetic.catalog.json."""
    op = catalog["operations"][0]
    def profiles(role, ordinal, contract):
        return LINEAR
    storage = [s for s in slots(op, profiles) if not (s["role"] == "input" and s["ordinal"] == 1)]
    device = {"id": "device.reference.0", "class": "reference", "ordinal": 0,
              "total_memory_bytes": 1 << 20,
              "runtime_implementation_fingerprint": sha256("ferrite example runtime: reference"),
              "capabilities": ["capability.compute"], "dynamic_storage_profiles": LINEAR}
    prov = {"id": "provider.operation.reference", "operation": op["id"], "version": "1.0",
            "implementation_fingerprint": sha256("ferrite example kernel: provider.operation.reference"),
            "capabilities": ["capability.compute"],
            "accepted_weight_formats": ["weight-format.dense"],
            "accepted_quantization_formats": [], "storage": storage,
            "estimator": {"id": "estimator.reference", "version": "1.0", "estimate": {
                "value_alignment_bytes": 16,
                "scratch": {"formula": {"fixed": {"bytes": 64}}, "alignment_bytes": 16,
                            "scope": "invocation", "storage": LINEAR},
                "persistent": {"formula": {"fixed": {"bytes": 32}}, "alignment_bytes": 16,
                               "scope": "plan", "storage": LINEAR}}}}
    return {"format": "ferrite.catalog", "format_version": 2, "device": device,
            "operations": catalog["operations"], "providers": [prov]}


def policy_file():
    return {"format": "ferrite.policy", "format_version": 1,
            "policy_id": "policy.llama-decoder", "policy_version": "1.0",
            "memory": {"capacity_bytes": 1 << 30, "reserve_bytes": 64 << 20,
                       "maximum_active_sequences": 1,
                       "storage_profile_order": ["linear/contiguous"]},
            "admission": {"maximum_scheduled_tokens": CONTEXT}}


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = os.path.join(root, "examples")
    if len(sys.argv) > 1:
        out = sys.argv[1]
    write(os.path.join(out, "llama-decoder.program.json"), program_file())
    write(os.path.join(out, "llama-decoder.catalog.json"), catalog_file())
    write(os.path.join(out, "llama-decoder.policy.json"), policy_file())
    synthetic = os.path.join(out, "synthetic.catalog.json")
    with open(synthetic, encoding="utf-8") as f:
        write(synthetic, synthetic_target(json.load(f)))


if __name__ == "__main__":
    main()
