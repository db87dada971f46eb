// The table of benchmarks: one definition per file, found by name.
import { aime_2025 } from './aime_2025';
import type { BenchmarkDefinition, BenchmarkName } from './contract';
import { gsm8k } from './gsm8k';
import { ifeval } from './ifeval';
import { math500 } from './math500';
import { mmlu_redux } from './mmlu_redux';

const DEFINITIONS: Record<BenchmarkName, BenchmarkDefinition> = { gsm8k, math500, ifeval, aime_2025, mmlu_redux };

/** The benchmark's definition; throws naming the ones there are when it is not (yet) defined. */
export function benchmarkDefinition(name: BenchmarkName): BenchmarkDefinition {
  const d = DEFINITIONS[name];
  if (!d) throw new Error(`benchmark "${name}" is not available in this build (available: ${availableBenchmarks().join(', ')})`);
  return d;
}

export function availableBenchmarks(): BenchmarkName[] {
  return Object.keys(DEFINITIONS) as BenchmarkName[];
}
