// One status for a run wherever it shows (Runs view, status bar, metrics panel): what this window
// saw of the run decides while it has begun or ended; otherwise the run directory does.
import * as assert from 'assert';
import { deriveRunStatus, isResumable, progressText } from '../../../src/core/runs/runStatus';
import { formatLocalTime } from '../../../src/core/text/time';

describe('run status and progress text', () => {
  it('a run this window started reports its own status, except while starting; a live agent session between calls reads "paused (agent)"', () => {
    assert.strictEqual(deriveRunStatus({ finished: false }, { status: 'running' }), 'running');
    assert.strictEqual(deriveRunStatus({ finished: true }, { status: 'failed' }), 'failed');
    assert.strictEqual(deriveRunStatus({ finished: false }, { status: 'cancelled' }), 'cancelled');
    assert.strictEqual(deriveRunStatus({ finished: true }, { status: 'starting' }), 'completed');
    assert.strictEqual(deriveRunStatus({ finished: false }, { status: 'paused' }), 'paused (agent)');
  });

  it('any other run is completed with a final checkpoint, else interrupted when its writer died holding it, else not finished', () => {
    assert.strictEqual(deriveRunStatus({ finished: true }, undefined), 'completed');
    assert.strictEqual(deriveRunStatus({ finished: true, interrupted: true }, undefined), 'completed');
    assert.strictEqual(deriveRunStatus({ finished: false, interrupted: true }, undefined), 'interrupted');
    assert.strictEqual(deriveRunStatus({ finished: false }, undefined), 'not finished');
  });

  it('a run a sweep stopped early reads "stopped early" (even though its writer released the lock mid-step) and is not resumable', () => {
    assert.strictEqual(deriveRunStatus({ finished: false, stoppedEarly: true, interrupted: true }, undefined), 'stopped early');
    assert.strictEqual(isResumable({ finished: false, stoppedEarly: true }, undefined), false);
    assert.strictEqual(isResumable({ finished: false, stoppedEarly: true }, { status: 'cancelled' }), false);
  });

  it('a run is resumable without a final checkpoint unless this window is starting, running, holding it live for an agent (paused) or has just completed it', () => {
    assert.strictEqual(isResumable({ finished: true }, undefined), false, 'a completed run');
    assert.strictEqual(isResumable({ finished: true }, { status: 'failed' }), false, 'a run that failed after its final checkpoint');
    assert.strictEqual(isResumable({ finished: false }, undefined), true, 'not finished');
    assert.strictEqual(isResumable({ finished: false, interrupted: true }, undefined), true, 'interrupted');
    for (const status of ['starting', 'running', 'paused', 'completed'] as const) assert.strictEqual(isResumable({ finished: false }, { status }), false, status);
    for (const status of ['cancelled', 'failed'] as const) assert.strictEqual(isResumable({ finished: false }, { status }), true, status);
  });

  it('progress counts from 1, caps at the last iteration and names the phase with its count', () => {
    assert.strictEqual(progressText({ unit: 'iteration', step: 2, endStep: 10 }), 'iteration 3/10');
    assert.strictEqual(progressText({ unit: 'iteration', step: 10, endStep: 10 }), 'iteration 10/10');
    assert.strictEqual(progressText({ unit: 'iteration', step: 0, endStep: 4, phase: 'sampling', phaseDone: 3, phaseTotal: 8 }), 'iteration 1/4 · sampling 3/8');
    assert.strictEqual(progressText({ unit: 'step', step: 4, endStep: 20, phase: 'training' }), 'step 5/20 · training');
  });

  it('times show as local date and minute; an unparsable time shows as it came', () => {
    const d = new Date(2026, 0, 5, 7, 3, 59);
    assert.strictEqual(formatLocalTime(d), '2026-01-05 07:03');
    assert.strictEqual(formatLocalTime(d.toISOString()), '2026-01-05 07:03');
    assert.strictEqual(formatLocalTime('not a time'), 'not a time');
  });
});
