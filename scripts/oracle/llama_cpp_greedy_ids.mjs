// Greedy decoding by token ids with llama.cpp (node-llama-cpp), one token at
// a time, for each prompt: a line `tokens ...` (the greedy ids) and a line
// `margins ...` (each step's top-1 minus top-2 logit: log p1 - log p2 of the
// full softmax at temperature 1, which is the logit difference). The model
// is loaded once; each prompt gets a fresh context.
//   node families_greedy_ids.mjs MODEL STEPS "1 300 45" ["1 260 261" ...]
import {getLlama} from "node-llama-cpp";
const [modelPath, steps, ...prompts] = process.argv.slice(2);
const llama = await getLlama({gpu: false});
const model = await llama.loadModel({modelPath});
for (const ids of prompts) {
  // K and V cached in F32 (llama.cpp's default is F16), as Ferrite keeps them.
  const context = await model.createContext({contextSize: 256, experimentalKvCacheKeyType: "F32",
                                             experimentalKvCacheValueType: "F32"});
  const sequence = context.getSequence();
  let input = ids.trim().split(/[ ,]+/).map(Number);
  const tokens = [], margins = [];
  for (let step = 0; step < Number(steps); ++step) {
    const generator = sequence.evaluateWithMetadata(
        input, {probabilities: true},
        {temperature: 1, topK: 0, topP: 1, minP: 0, yieldEogToken: true});
    const {value} = await generator.next();
    await generator.return();
    const ranked = [...value.probabilities.entries()].sort((a, b) => b[1] - a[1]);
    const best = ranked[0][0];
    margins.push(ranked.length > 1 ? Math.log(ranked[0][1]) - Math.log(ranked[1][1]) : Infinity);
    tokens.push(best);
    input = [best];
  }
  console.log("prompt " + ids.trim());
  console.log("tokens " + tokens.join(" "));
  console.log("margins " + margins.map((m) => m.toFixed(4)).join(" "));
  await context.dispose();
}
process.exit(0);
