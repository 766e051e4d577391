// bench/onnxruntime_session.mjs — ONNX Runtime's session creation on the
// Llama decoder shapes of bench/compile_bench (synthetic_programs.h: dim 64,
// 8 heads, 4 KV heads, head 8, FFN 172, vocab 512), for the side-by-side in
// bench/onnxruntime_compare.py. Not part of CI.
//
//   node bench/onnxruntime_session.mjs LAYERS REPS [THREADS]
//
// Builds, in memory, an opset-17 ONNX model of a LAYERS-layer Llama decoder
// from standard operators only (RMSNorm as Mul/ReduceMean/Add/Sqrt/Div/Mul,
// rotate-half RoPE from the positions input, grouped-query attention over a
// past/present KV cache with an additive mask input, SwiGLU, a tied-free
// classifier on the last token), weights uniform in ±1/sqrt(fan_in) from a
// fixed xorshift stream, then times `InferenceSession.create` (graph
// optimization level "all", the default) REPS times and runs the session
// once on a 4-token prompt to prove the model is valid. Prints one JSON line:
// {"layers", "nodes", "initializers", "model_bytes", "create_ms": [...],
//  "run_ok"}.
//
// The ONNX protobuf is written by hand (field numbers from onnx/onnx.proto:
// ModelProto ir_version 1, producer_name 2, graph 7, opset_import 8;
// GraphProto node 1, name 2, initializer 5, input 11, output 12; NodeProto
// input 1, output 2, name 3, op_type 4, attribute 5; AttributeProto name 1,
// i 3, ints 8, type 20; TensorProto dims 1, data_type 2, name 8, raw_data 9;
// ValueInfoProto name 1, type 2; TypeProto tensor_type 1; Tensor elem_type 1,
// shape 2; TensorShapeProto dim 1; Dimension dim_value 1, dim_param 2).
import {createRequire} from "node:module";
import process from "node:process";

const require = createRequire(process.env.FERRITE_ORT_DIR + "/package.json");
const ort = require("onnxruntime-node");

const DIM = 64, HEADS = 8, KV_HEADS = 4, HEAD = 8, FFN = 172, VOCAB = 512;
const FLOAT = 1, INT64 = 7;

// ---- a minimal protobuf writer -------------------------------------------
class Writer {
  constructor() { this.parts = []; this.length = 0; }
  bytes(b) { this.parts.push(b); this.length += b.length; return this; }
  varint(v) {
    let x = BigInt.asUintN(64, BigInt(v));
    const out = [];
    do {
      let byte = Number(x & 0x7fn);
      x >>= 7n;
      if (x !== 0n) byte |= 0x80;
      out.push(byte);
    } while (x !== 0n);
    return this.bytes(Uint8Array.from(out));
  }
  tag(field, wire) { return this.varint((field << 3) | wire); }
  int(field, v) { return this.tag(field, 0).varint(v); }
  blob(field, b) { return this.tag(field, 2).varint(b.length).bytes(b); }
  string(field, s) { return this.blob(field, new TextEncoder().encode(s)); }
  message(field, w) { return this.blob(field, w.finish()); }
  finish() {
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const p of this.parts) { out.set(p, at); at += p.length; }
    return out;
  }
}

// ---- the graph -------------------------------------------------------------
const nodes = [], initializers = [];
let counter = 0;
function node(op, inputs, attributes = {}) {
  const out = `${op.toLowerCase()}_${counter++}`;
  const w = new Writer();
  for (const i of inputs) w.string(1, i);
  w.string(2, out).string(3, out).string(4, op);
  for (const [name, value] of Object.entries(attributes)) {
    const a = new Writer().string(1, name);
    if (Array.isArray(value)) {
      for (const v of value) a.int(8, v);
      a.int(20, 7);  // INTS
    } else {
      a.int(3, value).int(20, 2);  // INT
    }
    w.message(5, a);
  }
  nodes.push(w);
  return out;
}

let state = 0x9e3779b97f4a7c15n;
function uniform(count, fanIn) {
  const scale = 1 / Math.sqrt(fanIn), v = new Float32Array(count);
  for (let i = 0; i < count; ++i) {
    state ^= (state << 13n) & 0xffffffffffffffffn;
    state ^= state >> 7n;
    state ^= (state << 17n) & 0xffffffffffffffffn;
    v[i] = (Number(state >> 40n) / 16777216 * 2 - 1) * scale;
  }
  return v;
}
function tensor(name, dims, type, data) {
  const w = new Writer();
  for (const d of dims) w.int(1, d);
  w.int(2, type).string(8, name).blob(9, new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  initializers.push(w);
  return name;
}
const weight = (name, rows, cols) => tensor(name, [rows, cols], FLOAT, uniform(rows * cols, rows));
const ones = (name, n) => tensor(name, [n], FLOAT, new Float32Array(n).fill(1));
const ints = (name, values) => tensor(name, [values.length], INT64, BigInt64Array.from(values.map(BigInt)));
const scalar = (name, v) => tensor(name, [], FLOAT, Float32Array.of(v));

function rmsNorm(x, w) {
  const ms = node("ReduceMean", [node("Mul", [x, x])], {axes: [-1], keepdims: 1});
  return node("Mul", [node("Div", [x, node("Sqrt", [node("Add", [ms, "eps"])])]), w]);
}
// Rotate-half RoPE of x [T, heads, HEAD] with cos/sin [T, 1, HEAD].
function rope(x) {
  const lo = node("Slice", [x, "zero", "half", "minus1"]);
  const hi = node("Slice", [x, "half", "full", "minus1"]);
  const rotated = node("Concat", [node("Neg", [hi]), lo], {axis: -1});
  return node("Add", [node("Mul", [x, "cos"]), node("Mul", [rotated, "sin"])]);
}
// [S, KV_HEADS, HEAD] -> [S, HEADS, HEAD], each KV head serving HEADS/KV_HEADS queries.
function expandKv(x) {
  const wide = node("Expand", [node("Unsqueeze", [x, "axis2"]), "kv_expand"]);
  return node("Reshape", [wide, "shape_s_heads_head"]);
}

function buildModel(layers) {
  nodes.length = 0; initializers.length = 0; counter = 0; state = 0x9e3779b97f4a7c15n;
  scalar("eps", 1e-5);
  scalar("scale", 1 / Math.sqrt(HEAD));
  ints("zero", [0]); ints("half", [HEAD / 2]); ints("full", [HEAD]); ints("minus1", [-1]);
  ints("axis2", [2]); ints("axis1", [1]); ints("last", [-1]); ints("end", [2 ** 62]);
  ints("kv_expand", [1, 1, HEADS / KV_HEADS, 1]);
  ints("shape_s_heads_head", [-1, HEADS, HEAD]);
  ints("shape_t_heads_head", [-1, HEADS, HEAD]);
  ints("shape_t_kv_head", [-1, KV_HEADS, HEAD]);
  ints("shape_t_dim", [-1, DIM]);
  const inv = new Float32Array(HEAD);
  for (let i = 0; i < HEAD; ++i) inv[i] = Math.pow(10000, -2 * (i % (HEAD / 2)) / HEAD);
  tensor("inv_freq", [1, 1, HEAD], FLOAT, inv);
  weight("token_embd", VOCAB, DIM);
  // cos/sin [T, 1, HEAD] from the positions.
  const angle = node("Mul", [node("Unsqueeze", [node("Unsqueeze", [node("Cast", ["positions"], {to: FLOAT}), "axis1"]), "axis2"]), "inv_freq"]);
  const cosName = node("Cos", [angle]), sinName = node("Sin", [angle]);
  // Rename to the fixed names rope() reads.
  nodes.push(new Writer().string(1, cosName).string(2, "cos").string(3, "cos_id").string(4, "Identity"));
  nodes.push(new Writer().string(1, sinName).string(2, "sin").string(3, "sin_id").string(4, "Identity"));
  let x = node("Gather", ["token_embd", "tokens"], {axis: 0});
  const inputs = [["tokens", INT64, ["T"]], ["positions", INT64, ["T"]],
                  ["mask", FLOAT, ["T", "S"]]], outputs = [];
  for (let l = 0; l < layers; ++l) {
    const p = `blk${l}_`;
    ones(p + "attn_norm", DIM); ones(p + "ffn_norm", DIM);
    weight(p + "wq", DIM, HEADS * HEAD); weight(p + "wk", DIM, KV_HEADS * HEAD);
    weight(p + "wv", DIM, KV_HEADS * HEAD); weight(p + "wo", HEADS * HEAD, DIM);
    weight(p + "wg", DIM, FFN); weight(p + "wu", DIM, FFN); weight(p + "wd", FFN, DIM);
    const h = rmsNorm(x, p + "attn_norm");
    const q = rope(node("Reshape", [node("MatMul", [h, p + "wq"]), "shape_t_heads_head"]));
    const k = rope(node("Reshape", [node("MatMul", [h, p + "wk"]), "shape_t_kv_head"]));
    const v = node("Reshape", [node("MatMul", [h, p + "wv"]), "shape_t_kv_head"]);
    const kAll = node("Concat", [p + "past_k", k], {axis: 0});
    const vAll = node("Concat", [p + "past_v", v], {axis: 0});
    inputs.push([p + "past_k", FLOAT, ["P", KV_HEADS, HEAD]], [p + "past_v", FLOAT, ["P", KV_HEADS, HEAD]]);
    outputs.push([kAll, FLOAT, ["S", KV_HEADS, HEAD]], [vAll, FLOAT, ["S", KV_HEADS, HEAD]]);
    const qh = node("Transpose", [q], {perm: [1, 0, 2]});                 // [H, T, D]
    const kh = node("Transpose", [expandKv(kAll)], {perm: [1, 2, 0]});    // [H, D, S]
    const vh = node("Transpose", [expandKv(vAll)], {perm: [1, 0, 2]});    // [H, S, D]
    const scores = node("Add", [node("Mul", [node("MatMul", [qh, kh]), "scale"]), "mask"]);
    const attended = node("MatMul", [node("Softmax", [scores], {axis: -1}), vh]);
    const merged = node("Reshape", [node("Transpose", [attended], {perm: [1, 0, 2]}), "shape_t_dim"]);
    x = node("Add", [x, node("MatMul", [merged, p + "wo"])]);
    const f = rmsNorm(x, p + "ffn_norm");
    const gate = node("MatMul", [f, p + "wg"]);
    const swiglu = node("Mul", [node("Mul", [gate, node("Sigmoid", [gate])]), node("MatMul", [f, p + "wu"])]);
    x = node("Add", [x, node("MatMul", [swiglu, p + "wd"])]);
  }
  ones("output_norm", DIM);
  weight("output", DIM, VOCAB);
  const lastRow = node("Slice", [x, "last", "end", "zero"]);
  const logits = node("MatMul", [rmsNorm(lastRow, "output_norm"), "output"]);
  outputs.unshift([logits, FLOAT, [1, VOCAB]]);

  const valueInfo = ([name, type, dims]) => {
    const shape = new Writer();
    for (const d of dims) {
      shape.message(1, typeof d === "number" ? new Writer().int(1, d) : new Writer().string(2, d));
    }
    const tensorType = new Writer().int(1, type).message(2, shape);
    return new Writer().string(1, name).message(2, new Writer().message(1, tensorType));
  };
  const graph = new Writer();
  for (const n of nodes) graph.message(1, n);
  graph.string(2, `llama_${layers}`);
  for (const t of initializers) graph.message(5, t);
  for (const i of inputs) graph.message(11, valueInfo(i));
  for (const o of outputs) graph.message(12, valueInfo(o));
  const model = new Writer().int(1, 8).string(2, "ferrite-bench").message(7, graph)
                            .message(8, new Writer().string(1, "").int(2, 17));
  return {bytes: model.finish(), outputs: outputs.map((o) => o[0]), inputs};
}

const layers = Number(process.argv[2] ?? 8), reps = Number(process.argv[3] ?? 3);
const threads = Number(process.argv[4] ?? 1);
const options = {graphOptimizationLevel: "all", intraOpNumThreads: threads,
                 interOpNumThreads: 1, executionProviders: ["cpu"]};
// ONNX Runtime's own start-up (library, environment, kernel registries) is
// paid once per process, by a 1-layer session before any timing.
await (await ort.InferenceSession.create(buildModel(1).bytes, options)).release();
const {bytes, inputs} = buildModel(layers);
const createMs = [];
let session;
for (let r = 0; r < reps; ++r) {
  const start = process.hrtime.bigint();
  session = await ort.InferenceSession.create(bytes, options);
  createMs.push(Number(process.hrtime.bigint() - start) / 1e6);
  if (r + 1 < reps) await session.release();
}
// One step on a 4-token prompt: the model is a working decoder.
const T = 4, feeds = {
  tokens: new ort.Tensor("int64", BigInt64Array.from([1n, 45n, 270n, 9n]), [T]),
  positions: new ort.Tensor("int64", BigInt64Array.from([0n, 1n, 2n, 3n]), [T]),
  mask: new ort.Tensor("float32", Float32Array.from({length: T * T}, (_, i) =>
      (i % T) > Math.floor(i / T) ? -1e9 : 0), [T, T]),
};
for (const [name, , dims] of inputs.slice(3)) {
  feeds[name] = new ort.Tensor("float32", new Float32Array(0), [0, dims[1], dims[2]]);
}
const result = await session.run(feeds);
const logits = result[session.outputNames[0]].data;
const runOk = logits.length === VOCAB && logits.every(Number.isFinite);
console.log(JSON.stringify({layers, nodes: nodes.length, initializers: initializers.length,
                            model_bytes: bytes.length, create_ms: createMs, run_ok: runOk,
                            onnxruntime: ort.env.versions.common}));
