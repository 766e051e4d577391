#!/usr/bin/env bash
# Drives `ferrite serve` with the official OpenAI client (npm `openai` 6.x;
# 7.x needs Node 22): streaming and non-streaming completions and chat, the
# models list and a refused request, then SIGTERM, which must exit 0.
# Opt-in: the first run installs the client into ~/.cache/ferrite-serve-npm.
#
# Usage: bash scripts/serve/openai_client_test.sh [MODEL] [extra `ferrite serve` options...]
#   MODEL defaults to ../shared/models/stories260K.gguf; FERRITE_BINARY to build/ferrite.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
model=${1:-$root/../shared/models/stories260K.gguf}
shift || true
ferrite=${FERRITE_BINARY:-$root/build/ferrite}
npm_dir=$HOME/.cache/ferrite-serve-npm
if [ ! -d "$npm_dir/node_modules/openai" ]; then
  mkdir -p "$npm_dir"
  (cd "$npm_dir" && npm init -y >/dev/null && npm install --no-audit --no-fund openai@6 >/dev/null)
fi
echo "openai client $(node -p "require('$npm_dir/node_modules/openai/package.json').version")"

log=$(mktemp)
trap 'rm -f "$log"; [ -n "${server:-}" ] && kill "$server" 2>/dev/null || true' EXIT
"$ferrite" serve "$model" --port 0 --parallel 4 --model-name test-model --api-key test-key "$@" \
  2>"$log" &
server=$!
port=
for _ in $(seq 1 300); do
  port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\).*|\1|p' "$log" | head -1)
  [ -n "$port" ] && break
  kill -0 "$server" 2>/dev/null || { cat "$log"; echo "ferrite serve exited"; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { cat "$log"; echo "no port after 30 s"; exit 1; }
echo "ferrite serve on port $port"

NODE_PATH=$npm_dir/node_modules FERRITE_PORT=$port node - <<'JS'
const OpenAI = require('openai');
const client = new OpenAI({ baseURL: `http://127.0.0.1:${process.env.FERRITE_PORT}/v1`,
                            apiKey: 'test-key', maxRetries: 0, timeout: 60000 });
const check = (ok, what) => { if (!ok) { console.error('FAIL', what); process.exit(1); } console.log('ok  ', what); };
(async () => {
  const models = await client.models.list();
  check(models.data.length === 1 && models.data[0].id === 'test-model', 'models.list');

  const c = await client.completions.create({ model: 'test-model', prompt: 'Once upon a time',
                                              max_tokens: 24, temperature: 0 });
  check(c.object === 'text_completion' && c.choices[0].text.length > 0 &&
        c.usage.prompt_tokens > 0, `completions: ${JSON.stringify(c.choices[0].text)}`);

  let streamed = '', finish = null, usage = null;
  const s = await client.completions.create({ model: 'test-model', prompt: 'Once upon a time',
                                              max_tokens: 24, temperature: 0, stream: true,
                                              stream_options: { include_usage: true } });
  for await (const chunk of s) {
    if (chunk.choices.length) { streamed += chunk.choices[0].text; finish = chunk.choices[0].finish_reason || finish; }
    if (chunk.usage) usage = chunk.usage;
  }
  check(streamed === c.choices[0].text && finish === c.choices[0].finish_reason &&
        usage && usage.completion_tokens === c.usage.completion_tokens,
        'completions stream equals the non-streamed text, with usage');

  const messages = [{ role: 'system', content: 'You tell stories.' },
                    { role: 'user', content: 'Tell me about a cat.' }];
  const chat = await client.chat.completions.create({ model: 'test-model', messages,
                                                      max_completion_tokens: 24, seed: 3, temperature: 0.7 });
  check(chat.object === 'chat.completion' && chat.choices[0].message.role === 'assistant',
        `chat: ${JSON.stringify(chat.choices[0].message.content)}`);

  let chatStreamed = '';
  const cs = await client.chat.completions.create({ model: 'test-model', messages,
                                                    max_completion_tokens: 24, seed: 3, temperature: 0.7,
                                                    stream: true });
  for await (const chunk of cs) chatStreamed += chunk.choices[0]?.delta?.content || '';
  check(chatStreamed === chat.choices[0].message.content, 'chat stream equals the non-streamed reply');

  const parallel = await Promise.all([1, 2, 3, 4, 5, 6].map(i => client.completions.create(
      { model: 'test-model', prompt: 'Once upon a time', max_tokens: 24, temperature: 0 })));
  check(parallel.every(p => p.choices[0].text === c.choices[0].text),
        '6 concurrent requests each equal the request alone');

  try {
    await client.completions.create({ model: 'test-model', prompt: 'x', n: 2 });
    check(false, 'n = 2 refused');
  } catch (e) {
    check(e.status === 400 && e.error && e.error.type === 'invalid_request_error', `n = 2 refused: ${e.message}`);
  }
  try {
    await new OpenAI({ baseURL: client.baseURL, apiKey: 'wrong', maxRetries: 0 }).models.list();
    check(false, 'wrong key refused');
  } catch (e) {
    check(e.status === 401, 'wrong key refused with 401');
  }
})().catch(e => { console.error('FAIL', e); process.exit(1); });
JS

kill -TERM "$server"
status=0
wait "$server" || status=$?
server=
cat "$log"
[ "$status" -eq 0 ] || { echo "ferrite serve exited $status after SIGTERM"; exit 1; }
echo "ferrite serve exited 0 after SIGTERM"
echo "PASS"
