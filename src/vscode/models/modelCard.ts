// What a model card shows, built from the registry (no vscode here beyond types): the version's
// fields, recipe, data, history and expiry; each suite entry's metric across the model's versions
// (the same suite version as this version's newest result, so the points measure the same thing);
// and its MODELS.md entry, cut from the generated file's text.
import type { ModelVersion, Registry, StatusChange } from '../../core/models/registry';
import type { GateView, MetricSeriesView, ModelCardSnapshot } from '../../protocol/modelCardProtocol';

function who(c: StatusChange): string {
  return c.by.git_user && c.by.git_user !== c.by.os_user ? `${c.by.git_user} (${c.by.os_user})` : c.by.os_user;
}

/** The `### <id> …` section of MODELS.md (up to the next heading of that level or above). */
export function markdownEntry(md: string, id: string): string {
  const lines = md.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`### ${id} `) || l === `### ${id}`);
  if (start < 0) return '';
  let end = start + 1;
  while (end < lines.length && !/^#{1,3} /.test(lines[end]!)) end++;
  return lines.slice(start, end).join('\n').trimEnd();
}

/** Each entry of the version's newest suite result, over every version of the model with a result of that suite version. */
export function metricSeries(reg: Registry, v: ModelVersion): { suite?: { name: string; version: string }; series: MetricSeriesView[] } {
  const own = v.suite_results.at(-1);
  if (!own) return { series: [] };
  const siblings = reg.versions.filter((x) => x.name === v.name).sort((a, b) => a.version - b.version);
  const series = own.entries.map((e): MetricSeriesView => ({
    entry: e.name,
    metric: e.metric,
    layer: e.layer,
    goal: e.goal,
    points: siblings.flatMap((s) => {
      const snap = [...s.suite_results].reverse().find((r) => r.suite.name === own.suite.name && r.suite.version === own.suite.version);
      const r = snap?.entries.find((x) => x.name === e.name);
      return r ? [{ id: s.id, status: s.status, estimate: r.estimate, n: r.n, current: s.id === v.id }] : [];
    }),
  }));
  return { suite: { name: own.suite.name, version: own.suite.version }, series };
}

export function cardSnapshot(reg: Registry, v: ModelVersion, o: { registryFile: string; markdown: string; gate?: GateView }): ModelCardSnapshot {
  const { suite, series } = metricSeries(reg, v);
  const production = reg.versions.find((x) => x.name === v.name && x.status === 'production');
  const fields = [
    ['Sampler path', v.sampler_path],
    ['State path', v.state_path],
    ['Base model', v.base_model],
    ['Renderer', v.renderer],
    ['LoRA rank', v.lora_rank === undefined ? undefined : String(v.lora_rank)],
    ['Source run', v.source_run],
    ['Registered', v.registered_at],
    ['Description', v.description],
  ].flatMap(([label, value]) => (value ? [{ label: label!, value }] : []));
  return {
    type: 'snapshot',
    id: v.id,
    registryFile: o.registryFile,
    status: v.status,
    fields,
    recipe: v.recipe.map((r) => ({
      kind: r.kind,
      run: r.run_dir ?? r.name ?? '–',
      ...(r.learning_rate !== undefined ? { learning_rate: r.learning_rate } : {}),
      ...(r.steps !== undefined ? { steps: r.steps } : {}),
      ...(r.load_checkpoint_path || r.planned ? { detail: [r.planned ? `planned ${r.planned}` : '', r.load_checkpoint_path ? `from ${r.load_checkpoint_path}` : ''].filter(Boolean).join(' · ') } : {}),
    })),
    data: v.data.map((d) => ({ file: d.file, ...(d.lines !== undefined ? { lines: d.lines } : {}), ...(d.sha256 ? { sha256: d.sha256 } : {}) })),
    history: v.history.map((h) => ({ at: h.at, status: h.status, by: who(h), ...(h.reason ? { reason: h.reason } : {}), ...(h.anyway ? { anyway: true } : {}) })),
    ...(v.expires_at ? { expiry: { at: v.expires_at, flagged: v.status === 'production' } } : {}),
    ...(suite ? { suite } : {}),
    metrics: series,
    ...(o.gate ? { gate: o.gate } : {}),
    markdown: o.markdown,
    can: {
      promote: v.status !== 'production',
      retire: v.status !== 'retired',
      playground: !!v.sampler_path,
      clearTtl: !!v.expires_at,
      compare: !!production && production.id !== v.id,
    },
  };
}

/** The promotion gate's verdict of a version against production, read from the stored suite results (undefined for the production version itself). */
export async function gateView(registryFile: string, id: string): Promise<GateView | undefined> {
  const { checkPromotion } = await import('../../core/models/promotion');
  const c = await checkPromotion(registryFile, id);
  if (c.production?.id === c.candidate.id || c.candidate.status === 'production') return undefined;
  return {
    against: c.production?.id ?? 'no production version yet',
    passed: c.refusals.length === 0,
    reasons: [...c.refusals.map((text) => ({ passed: false, text })), ...c.passes.map((text) => ({ passed: true, text }))],
  };
}
