// The Python reward runner: `compute_reward(completion, ground_truth) -> float` in a persistent pool
// of `python -c <worker>` processes (see pythonWorkerSource.ts), each under an address-space cap
// (RLIMIT_AS), with a filtered environment and the reward file's folder as working directory.
import * as path from 'path';
import { workerEnvironment } from './env';
import type { WorkerExit } from './pool';
import { PYTHON_WORKER_SOURCE } from './pythonWorkerSource';
import { readRewardSource, REWARD_DEFAULTS, startRewardPool } from './source';
import type { RewardError, RewardRunner, RewardRunnerOptions } from './types';

export async function createPythonRewardRunner(opts: RewardRunnerOptions): Promise<RewardRunner & { pids(): number[] }> {
  const setup = await pythonWorkerSetup(opts, PYTHON_WORKER_SOURCE, 'compute_reward');
  return startRewardPool(opts, setup.command, { file: setup.file, load: setup.load, functionName: 'compute_reward', describeCrash: setup.describeCrash });
}

/** How a Python worker running `workerSource` is started for a .py file: the command, its `load` message, how its crashes read. */
export async function pythonWorkerSetup(opts: RewardRunnerOptions, workerSource: string, functionName: string) {
  const file = path.resolve(opts.file);
  const source = await readRewardSource(file, opts.source);
  const memoryMb = opts.memoryMb ?? REWARD_DEFAULTS.memoryMb;
  return {
    file,
    command: {
      command: opts.python ?? REWARD_DEFAULTS.python,
      args: ['-c', workerSource],
      env: workerEnvironment({ PYTHONIOENCODING: 'utf-8', PYTHONDONTWRITEBYTECODE: '1' }, process.env, { allow: opts.environment ?? [] }),
      channel: 'fd' as const,
    },
    load: { type: 'load' as const, file, source, format: 'python' as const, memoryMb },
    describeCrash: (exit: WorkerExit) => describePythonCrash(file, exit, functionName),
  };
}

/** a dead Python worker's last words: faulthandler's report names the reward file's line */
function describePythonCrash(file: string, exit: WorkerExit, functionName: string): Pick<RewardError, 'message' | 'traceback' | 'line'> {
  const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
  const tail = exit.outputTail.trim();
  const fatal = tail.lastIndexOf('Fatal Python error');
  const report = fatal >= 0 ? tail.slice(fatal) : undefined;
  const frames = report ? [...report.matchAll(/File "([^"]+)", line (\d+)/g)].filter((m) => m[1] === file) : [];
  const first = frames[0];
  const reason = report ? `: ${report.split('\n')[0]}` : '';
  return {
    message: `the Python worker ${how} while running ${functionName}${reason}; it was replaced`,
    ...(report ? { traceback: report } : {}),
    ...(first ? { line: Number(first[2]) } : {}),
  };
}
