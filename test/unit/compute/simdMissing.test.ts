// Without WebAssembly SIMD the engine falls back to the reference GEMM, and must say so: in its own
// thread and in its worker. A Node process whose WebAssembly.compile refuses every module (preloaded
// with --require, which the worker inherits) stands in for a runtime without SIMD.
import * as assert from 'assert';
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

function runWithoutSimd(inWorker: boolean, dir: string): Promise<{ code: number | null; stderr: string }> {
  const preload = path.join(dir, 'no-simd.js');
  fs.writeFileSync(preload, "WebAssembly.compile = () => Promise.reject(new Error('simulated runtime without WebAssembly SIMD'));\n");
  const entry = path.join(__dirname, '../../../src/engine/model/index.js');
  const script = `require(${JSON.stringify(entry)}).createComputeBackend({ inWorker: ${inWorker} }).then((b) => b.close());`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--require', preload, '-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('a runtime without WebAssembly SIMD', function () {
  this.timeout(60_000);
  let dir: string;
  before(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-no-simd-'))));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  for (const inWorker of [false, true]) {
    it(`is reported on stderr by the engine ${inWorker ? 'in its worker' : 'in-thread'}`, async () => {
      const r = await runWithoutSimd(inWorker, dir);
      assert.strictEqual(r.code, 0, r.stderr);
      assert.match(r.stderr, /WASM SIMD kernel unavailable \(simulated runtime without WebAssembly SIMD\); using the pure-TypeScript reference/);
    });
  }
});
