// The engine's command line (src/engine/args.ts): defaults, each option, and errors that name the
// option at fault.
import * as assert from 'assert';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseEngineArgs } from '../../../src/engine/args';

describe('engine command line', () => {
  it('defaults to an ephemeral port on loopback, the user cache folder and a worker thread', () => {
    assert.deepStrictEqual(parseEngineArgs([]), {
      port: 0,
      host: '127.0.0.1',
      dataDir: path.join(os.homedir(), '.cache', 'tinker-studio', 'engine'),
      inWorker: true,
      help: false,
    });
  });

  it('reads every option, in either spelling of a value', () => {
    const a = parseEngineArgs(['--port', '8123', '--host=0.0.0.0', '--data-dir', 'rel/dir', '--in-process']);
    assert.deepStrictEqual(a, { port: 8123, host: '0.0.0.0', dataDir: path.resolve('rel/dir'), inWorker: false, help: false });
    assert.strictEqual(parseEngineArgs(['-h']).help, true);
  });

  it('refuses a bad port, an unknown option and a missing value', () => {
    assert.throws(() => parseEngineArgs(['--port', '70000']), /--port must be 0\.\.65535/);
    assert.throws(() => parseEngineArgs(['--port', 'x']), /--port must be 0\.\.65535/);
    assert.throws(() => parseEngineArgs(['--verbose']), /--verbose/);
    assert.throws(() => parseEngineArgs(['--data-dir']), /--data-dir/);
  });
});
