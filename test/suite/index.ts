/**
 * Mocha entry point loaded by the VS Code extension host (the module named by
 * extensionTestsPath). VS Code calls run() and treats a rejected promise as a
 * failed run.
 *
 * Besides printing the usual spec report, it writes a machine-readable summary
 * to $VSCODE_TEST_RESULTS (if set) so a launcher outside the extension host can
 * read the outcome even when the extension host's stdout is not visible
 * (e.g. when the host is started by code-server on behalf of a browser).
 */
import * as fs from 'fs';
import * as path from 'path';
import * as util from 'util';
import Mocha from 'mocha';
import * as vscode from 'vscode';

interface TestRecord {
  title: string;
  state: 'passed' | 'failed' | 'pending';
  durationMs?: number;
  error?: string;
}

function writeResults(summary: object): void {
  const file = process.env.VSCODE_TEST_RESULTS;
  if (!file) {
    return;
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  // Write to a temp name and rename so a watcher never sees a half-written file.
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(summary, null, 2));
  fs.renameSync(`${file}.tmp`, file);
}

/** activate() timings reported by the extension under test, if it was activated. */
function activationFigures(): { activationMs: number; loadAndActivateMs?: number } | undefined {
  const ext = vscode.extensions.getExtension('tinker-studio.tinker-studio');
  // reading `exports` of an extension that was never activated throws (a grep can leave it inactive)
  const exports: unknown = ext?.isActive ? ext.exports : undefined;
  if (typeof exports !== 'object' || exports === null || !('activationMs' in exports)) return undefined;
  const e = exports as { activationMs: number; loadAndActivateMs?: number };
  return { activationMs: e.activationMs, loadAndActivateMs: e.loadAndActivateMs };
}

/**
 * Every *.test.js under `dir`, its feature folders included, in the order of their file names (not
 * their folders), so that moving a test into another folder does not change the order the suite runs.
 */
function testFiles(dir: string): string[] {
  const collect = (d: string): string[] =>
    fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? collect(path.join(d, e.name)) : e.name.endsWith('.test.js') ? [path.join(d, e.name)] : []));
  const key = (f: string) => `${path.basename(f)}\0${f}`;
  return collect(dir).sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

export function run(): Promise<void> {
  // Hand the extension host's console one preformatted string per line (the
  // remote extension host forwards raw printf-style arguments otherwise).
  Mocha.reporters.Base.consoleLog = (...args: unknown[]) => console.log(util.format(...args));

  const mocha = new Mocha({
    ui: 'tdd',
    color: false,
    timeout: 20_000,
    grep: process.env.MOCHA_GREP || undefined,
  });

  for (const file of testFiles(__dirname)) mocha.addFile(file);

  const tests: TestRecord[] = [];
  const started = Date.now();

  return new Promise<void>((resolve, reject) => {
    try {
      const runner = mocha.run((failures) => {
        try {
          const passed = tests.filter((t) => t.state === 'passed').length;
          const failed = tests.filter((t) => t.state === 'failed').length;
          const pending = tests.filter((t) => t.state === 'pending').length;
          writeResults({
            ok: failures === 0,
            passed,
            failed,
            pending,
            durationMs: Date.now() - started,
            activation: activationFigures(),
            host: {
              vscodeVersion: vscode.version,
              appName: vscode.env.appName,
              appHost: vscode.env.appHost,
              uiKind: vscode.UIKind[vscode.env.uiKind],
            },
            tests,
          });
          console.log(`extension-host: ${passed} passed, ${failed} failed`);
          if (failures > 0) {
            reject(new Error(`${failures} tests failed.`));
          } else {
            resolve();
          }
        } catch (err) {
          reject(err); // a report that cannot be written must not leave the host waiting
        }
      });
      runner.on('pass', (t) => tests.push({ title: t.fullTitle(), state: 'passed', durationMs: t.duration }));
      runner.on('fail', (t, err) =>
        tests.push({ title: t.fullTitle(), state: 'failed', error: String(err?.stack ?? err) }),
      );
      runner.on('pending', (t) => tests.push({ title: t.fullTitle(), state: 'pending' }));
    } catch (err) {
      writeResults({ ok: false, passed: 0, failed: 1, pending: 0, tests, error: String((err as Error)?.stack ?? err) });
      reject(err);
    }
  });
}
