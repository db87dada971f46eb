// A Python environment's tool declarations reach the renderer with Python's number forms: the
// declaration the model is shown says "minimum": 5.0 and "default": 21.0, as the cookbook writes it
// (JSON.parse of the worker's answer would have made them 5 and 21), and a bound past 2^53 exact.
import * as assert from 'assert';
import { createEnvRunner, type EnvRunner } from '../../../src/core/env/runner';
import { getRenderer } from '../../../src/core/render/registry';
import { removeTempDirs, rewardFile } from '../reward/fixtures';
import { qwen3Tokenizer } from '../render/fixtures';

const PY_ENV = `
class Thermostat:
    def __init__(self, problem):
        self.problem = problem
    def initial_observation(self):
        tool = {"name": "set_thermostat", "description": "Set the thermostat.", "parameters": {
            "type": "object",
            "properties": {"degrees": {"type": "number", "minimum": 5.0, "default": 21.0},
                           "serial": {"type": "integer", "maximum": 98765432109876543210}},
            "required": ["degrees"]}}
        return {"messages": [{"role": "user", "content": "Warmer, please."}], "tools": [tool]}
    def step(self, message):
        return {"reward": 1.0, "episode_done": True}
`;

describe('env: tool declarations keep their numbers (Python worker → renderer)', function () {
  this.timeout(120_000);
  let runner: EnvRunner | undefined;
  after(async () => {
    await runner?.close();
    removeTempDirs();
  });

  it('a declaration with 5.0, 21.0 and 98765432109876543210 is rendered with exactly those', async () => {
    runner = await createEnvRunner({ file: rewardFile('thermostat.env.py', PY_ENV), workers: 1, timeoutMs: 30_000 });
    const episode = runner.episode({});
    const started = await episode.start();
    assert.ok(started.ok, JSON.stringify(started));
    const tools = started.value.tools;
    assert.ok(tools);
    const [system] = getRenderer('qwen3', qwen3Tokenizer()).createConversationPrefixWithTools(tools);
    const want = '"properties": {"degrees": {"type": "number", "minimum": 5.0, "default": 21.0}, "serial": {"type": "integer", "maximum": 98765432109876543210}}';
    assert.ok(system?.content.includes(want), system?.content);
    await episode.close();
  });
});
