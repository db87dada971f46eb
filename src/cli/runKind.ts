// `tinker-studio <kind> <spec>` once the flags are read: the kind looked up in the kinds table
// (src/core/kinds/registry.ts), its run started or resumed, its own report printed, then the status
// line and the exit code every kind shares.
import { runKind } from '../core/kinds/registry';
import type { RunStartOptions } from '../core/runs/startParts';

export interface CliOutput {
  stdout(text: string): void;
  stderr(text: string): void;
  /** secrets out of the text before it is printed */
  redact(text: string): string;
}

/** Runs (or resumes) a run of the kind `kindId` to its end; the exit code: 0 completed, 130 cancelled, 1 failed. */
export async function runKindCommand(kindId: string, o: RunStartOptions<unknown>, out: CliOutput): Promise<number> {
  const kind = await runKind(kindId);
  const result = await kind.start(o);
  out.stdout(kind.cliReport(result));
  out.stdout(`run ${result.status}: ${result.runDir} (${result.iterationsRun} ${kind.row.unit.many} this time)\n`);
  if (result.error) out.stderr(`error: ${out.redact(result.error)}\n`);
  if (result.budgetStop) out.stdout(`budget: ${result.budgetStop}\nresume with: tinker-studio ${kindId} --resume ${result.runDir} <the spec with a higher max_cost_usd / max_tokens_total>\n`);
  else if (result.status === 'cancelled') out.stdout(`resume with: tinker-studio ${kindId} --resume ${result.runDir}\n`);
  return result.status === 'completed' ? 0 : result.status === 'cancelled' ? 130 : 1;
}
