// Which Python runs reward functions: the interpreter selected in the Python extension
// (ms-python.python) when it is installed, else the tinker.pythonPath setting, else `python3`.
// The Python extension's API is another extension's untyped exports, so every step is checked.
import * as vscode from 'vscode';
import { Log } from './log';
import { pythonPathSetting } from './settings';
import { errorMessage } from '../../core/errors';

export interface PythonChoice {
  path: string;
  source: 'python-extension' | 'setting' | 'default';
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

/** The selected environment's executable, through the Python extension's environments API. */
async function fromPythonExtension(resource: vscode.Uri | undefined, log: Log): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension('ms-python.python');
  if (!ext) return undefined;
  try {
    const exports: unknown = ext.isActive ? ext.exports : await ext.activate();
    if (!isRecord(exports) || !isRecord(exports.environments)) return undefined;
    const envs = exports.environments;
    const getActive = envs.getActiveEnvironmentPath;
    const resolve = envs.resolveEnvironment;
    if (typeof getActive !== 'function' || typeof resolve !== 'function') return undefined;
    const active: unknown = getActive.call(envs, resource);
    const resolved: unknown = await resolve.call(envs, active);
    if (isRecord(resolved) && isRecord(resolved.executable) && isRecord(resolved.executable.uri)) {
      const fsPath = resolved.executable.uri.fsPath;
      if (typeof fsPath === 'string' && fsPath) return fsPath;
    }
    // Fall back to the path of the active environment (an executable for plain interpreters).
    if (isRecord(active) && typeof active.path === 'string' && active.path) return active.path;
  } catch (err) {
    log.warn(`could not ask the Python extension for its interpreter (${errorMessage(err)}); using the setting or python3`);
  }
  return undefined;
}

export async function resolvePython(resource: vscode.Uri | undefined, log: Log): Promise<PythonChoice> {
  const fromExt = await fromPythonExtension(resource, log);
  if (fromExt) return { path: fromExt, source: 'python-extension' };
  const setting = pythonPathSetting();
  if (setting) return { path: setting, source: 'setting' };
  return { path: 'python3', source: 'default' };
}
