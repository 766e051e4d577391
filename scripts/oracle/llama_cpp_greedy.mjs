import {getLlama} from "node-llama-cpp";
const [modelPath, prompt, steps] = process.argv.slice(2);
const llama = await getLlama({gpu: false});
const model = await llama.loadModel({modelPath});
const context = await model.createContext({contextSize: 512});
const sequence = context.getSequence();
const input = [model.tokens.bos, ...model.tokenize(prompt)];
const out = [];
for await (const token of sequence.evaluate(input, {temperature: 0})) {
  if (token === model.tokens.eos) break;
  out.push(token);
  if (out.length >= Number(steps)) break;
}
console.log("prompt " + input.join(" "));
console.log("tokens " + out.join(" "));
process.exit(0);
