// The messages a GRPO spec gives when read (every problem, as the spec layer words it), for the spec tests.
import { parseGrpoSpecText } from '../../../src/core/grpo/spec';
import { RunSpecError } from '../../../src/core/spec/text';

/** The messages a spec gives, or [] when it is valid. */
export function problemsOf(spec: unknown, file = 'arith.grpo.json'): string[] {
  try {
    parseGrpoSpecText(JSON.stringify(spec), file);
    return [];
  } catch (err) {
    if (err instanceof RunSpecError) return err.problems;
    throw err;
  }
}
