// Greedy decoding by token ids with llama.cpp (node-llama-cpp), as
// llama_cpp_greedy_ids.mjs, and each step's five most likely ids with their
// log-probabilities (full softmax at temperature 1: a logit minus the
// log-sum-exp of all logits, so shift-free logits to compare): per prompt a
// line `prompt ...`, `tokens ...`, `margins ...`, then one line per step
// `top STEP id:logprob id:logprob ...`.
//   node llama_cpp_greedy_top.mjs MODEL STEPS "1 300 45" ["1 260 261" ...]
import {getLlama} from "node-llama-cpp";
const [modelPath, steps, ...prompts] = process.argv.slice(2);
const llama = await getLlama({gpu: false});
const model = await llama.loadModel({modelPath});
for (const ids of prompts) {
  const context = await model.createContext({contextSize: 256, experimentalKvCacheKeyType: "F32",
                                             experimentalKvCacheValueType: "F32"});
  const sequence = context.getSequence();
  let input = ids.trim().split(/[ ,]+/).map(Number);
  const tokens = [], margins = [], tops = [];
  for (let step = 0; step < Number(steps); ++step) {
    const generator = sequence.evaluateWithMetadata(
        input, {probabilities: true},
        {temperature: 1, topK: 0, topP: 1, minP: 0, yieldEogToken: true});
    const {value} = await generator.next();
    await generator.return();
    const ranked = [...value.probabilities.entries()].sort((a, b) => b[1] - a[1]);
    const best = ranked[0][0];
    margins.push(ranked.length > 1 ? Math.log(ranked[0][1]) - Math.log(ranked[1][1]) : Infinity);
    tops.push(ranked.slice(0, 5).map(([id, p]) => id + ":" + Math.log(p).toFixed(6)).join(" "));
    tokens.push(best);
    input = [best];
  }
  console.log("prompt " + ids.trim());
  console.log("tokens " + tokens.join(" "));
  console.log("margins " + margins.map((m) => m.toFixed(4)).join(" "));
  tops.forEach((t, i) => console.log("top " + i + " " + t));
  await context.dispose();
}
process.exit(0);
