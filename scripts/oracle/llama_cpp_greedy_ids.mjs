// Greedy decoding by token ids with llama.cpp (node-llama-cpp), one token at
// a time, printing each step's top-1 minus top-2 logit (log p1 - log p2 of
// the full softmax at temperature 1, which is the logit difference).
//   node greedy_ids.mjs MODEL "1 300 45" STEPS
import {getLlama} from "node-llama-cpp";
const [modelPath, ids, steps] = process.argv.slice(2);
const llama = await getLlama({gpu: false});
const model = await llama.loadModel({modelPath});
const context = await model.createContext({contextSize: 256});
const sequence = context.getSequence();
let input = ids.trim().split(/[ ,]+/).map(Number);
const tokens = [], margins = [];
for (let step = 0; step < Number(steps); ++step) {
  const generator = sequence.evaluateWithMetadata(
      input, {probabilities: true},
      {temperature: 1, topK: 0, topP: 1, minP: 0});
  const {value} = await generator.next();
  await generator.return();
  const ranked = [...value.probabilities.entries()].sort((a, b) => b[1] - a[1]);
  const best = ranked[0][0];
  margins.push(ranked.length > 1 ? Math.log(ranked[0][1]) - Math.log(ranked[1][1]) : Infinity);
  tokens.push(best);
  input = [best];
}
console.log("tokens " + tokens.join(" "));
console.log("margins " + margins.map((m) => m.toFixed(4)).join(" "));
process.exit(0);
