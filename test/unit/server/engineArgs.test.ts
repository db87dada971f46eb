// The engine's command line (src/engine/args.ts): defaults, each option, and errors that name the
// option at fault.
import * as assert from 'assert';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseEngineArgs } from '../../../src/engine/args';
import { engineStoreDir, tinkerStudioCacheDir } from '../../../src/engine/storeDir';

describe('engine command line', () => {
  it('defaults to an ephemeral port on loopback, the one checkpoint store and a worker thread', () => {
    assert.deepStrictEqual(parseEngineArgs([]), {
      port: 0,
      host: '127.0.0.1',
      dataDir: engineStoreDir(),
      inWorker: true,
      help: false,
    });
  });

  it('puts the one store under TINKER_STUDIO_CACHE_DIR, else XDG_CACHE_HOME, else ~/.cache', () => {
    assert.strictEqual(engineStoreDir({ TINKER_STUDIO_CACHE_DIR: '/tmp/tc', XDG_CACHE_HOME: '/x' }), path.resolve('/tmp/tc/engine'));
    assert.strictEqual(engineStoreDir({ XDG_CACHE_HOME: '/x/cache' }), path.join('/x/cache', 'tinker-studio', 'engine'));
    assert.strictEqual(engineStoreDir({ XDG_CACHE_HOME: 'relative' }), path.join(os.homedir(), '.cache', 'tinker-studio', 'engine'), 'a relative XDG_CACHE_HOME is ignored');
    assert.strictEqual(engineStoreDir({}), path.join(os.homedir(), '.cache', 'tinker-studio', 'engine'));
    assert.strictEqual(tinkerStudioCacheDir({}), path.join(os.homedir(), '.cache', 'tinker-studio'));
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
