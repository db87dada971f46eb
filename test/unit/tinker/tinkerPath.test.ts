// tinker:// checkpoint paths, parsed in one place for the client, the views and the embedded engine:
// both kinds, the engine's short form (no kind), and errors that name the path.
import * as assert from 'assert';
import { parseTinkerPath, splitTinkerPath } from '../../../src/core/tinker/tinkerPath';
import { TinkerError } from '../../../src/core/tinker/errors';

describe('tinker:// paths', () => {
  it('parses both kinds and the short form', () => {
    assert.deepStrictEqual(parseTinkerPath('tinker://run-1/weights/000004'), { runId: 'run-1', kind: 'weights', name: '000004' });
    assert.deepStrictEqual(parseTinkerPath('tinker://run-1/sampler_weights/final'), { runId: 'run-1', kind: 'sampler_weights', name: 'final' });
    assert.deepStrictEqual(parseTinkerPath('tinker://run-1/final'), { runId: 'run-1', kind: undefined, name: 'final' });
  });

  it('splits a path with its kind into the run and the checkpoint id; the short form has no checkpoint id', () => {
    assert.deepStrictEqual(splitTinkerPath('tinker://r/sampler_weights/a b'), { runId: 'r', checkpointId: 'sampler_weights/a%20b', kind: 'sampler_weights', name: 'a b' });
    assert.throws(() => splitTinkerPath('tinker://r/final'), (e: Error) => e instanceof TinkerError && /"tinker:\/\/r\/final" is not of the form tinker:\/\/<run>\/weights\/<name>/.test(e.message));
  });

  it('names the path it rejects', () => {
    for (const bad of ['http://r/weights/a', 'tinker://', 'tinker://r', 'tinker://r/other/a', 'tinker://r/weights/a/b', 'tinker:///weights/a']) {
      assert.throws(() => parseTinkerPath(bad), (e: Error) => e instanceof TinkerError && e.message.includes(`"${bad}"`), bad);
    }
  });
});
