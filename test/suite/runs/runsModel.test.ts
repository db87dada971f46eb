// The Runs view's model notices a run whose writer died holding its directory (a window reloaded or
// closed mid-run, a killed CLI): no file changes when that happens, yet the run turns interrupted.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Redactor } from '../../../src/core/config/redact';
import { deriveRunStatus } from '../../../src/core/runs/runStatus';
import { RunWriter } from '../../../src/core/runs/runWriter';
import { Log } from '../../../src/vscode/common/log';
import { RunsModel } from '../../../src/vscode/runs/runsModel';
import { holdInChild, killHolder } from '../../unit/runs/lockHolder';
import { waitFor } from '../helpers';

suite('Runs model', function () {
  this.timeout(120_000);

  test('a run whose writer dies holding its directory turns interrupted without any file changing', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-runs-model-'));
    const w = RunWriter.create(folder, 'held');
    w.writeConfig({});
    w.appendMetrics(0, { 'env/all/reward/total': 0.5 });
    w.close();
    const log = new Log(new Redactor(), 'Tinker (test)');
    const model = new RunsModel(folder, log);
    const child = await holdInChild(w.dir);
    try {
      await model.refresh();
      const [run] = await model.list();
      assert.ok(run);
      assert.strictEqual(run.locked, true);
      assert.strictEqual(deriveRunStatus(run, undefined), 'not finished');
      const before = fs.readdirSync(w.dir).map((f) => `${f}:${fs.statSync(path.join(w.dir, f)).mtimeMs}`).join();
      await killHolder(child);
      const after = await waitFor('the run to read as interrupted', async () => {
        const [r] = await model.list();
        return r && deriveRunStatus(r, undefined) === 'interrupted' ? r : undefined;
      }, 60_000);
      assert.strictEqual(after.locked, false);
      assert.strictEqual(fs.readdirSync(w.dir).map((f) => `${f}:${fs.statSync(path.join(w.dir, f)).mtimeMs}`).join(), before, 'no file of the run changed');
    } finally {
      await killHolder(child);
      model.dispose();
      log.dispose();
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });
});
