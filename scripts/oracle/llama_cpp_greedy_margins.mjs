// Greedy decoding with llama.cpp (node-llama-cpp) that also reports, per
// generated position, the margin between the two most probable next tokens
// as a logit difference ln(p1 / p2). Prompt given as token ids ("1 403 407").
//   node greedy_margins.mjs MODEL.gguf "IDS" STEPS
import {getLlama} from "node-llama-cpp";
const [modelPath, ids, steps] = process.argv.slice(2);
const llama = await getLlama({gpu: false});
const model = await llama.loadModel({modelPath});
const context = await model.createContext({contextSize: 512});
const sequence = context.getSequence();
const input = ids.split(/[ ,]+/).filter((s) => s.length > 0).map(Number);
const out = [], margins = [];
for await (const step of sequence.evaluateWithMetadata(input, {probabilities: true}, {temperature: 0})) {
  const ranked = [...step.probabilities.entries()].sort((a, b) => b[1] - a[1]);
  const p1 = ranked[0]?.[1] ?? 1, p2 = ranked[1]?.[1] ?? 0;
  margins.push(p2 > 0 ? Math.log(p1 / p2) : Infinity);
  out.push(step.token);
  if (out.length >= Number(steps)) break;
}
console.log("tokens " + out.join(" "));
console.log("margins " + margins.map((m) => m.toFixed(5)).join(" "));
process.exit(0);
