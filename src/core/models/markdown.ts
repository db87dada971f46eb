// MODELS.md: the registry as a person reads it, every field of every version (its exports and publishes
// too), newest first. Generated from tinker-models.json on every write; deterministic (no generation
// time), so it diffs cleanly.
import type { Estimate } from '../evals/results';
import { MODEL_STATUSES, REGISTRY_FILE, sortedVersions, type ModelVersion, type Registry, type StatusChange } from './registry';

const num = (x: number) => (Number.isInteger(x) ? String(x) : Number(x.toPrecision(4)).toString());
export const estimateText = (e: Estimate) => (e.lo !== undefined && e.hi !== undefined ? `${num(e.value)} [${num(e.lo)}, ${num(e.hi)}]` : num(e.value));
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
const code = (s: string) => `\`${s.replace(/`/g, "'")}\``;

/** The command that removes a checkpoint's expiry (what "Clear TTL" runs). */
export function clearTtlCommand(v: Pick<ModelVersion, 'sampler_path' | 'state_path'>): string {
  const paths = [v.state_path, v.sampler_path].filter((p): p is string => !!p);
  return `tinker-studio checkpoints ttl ${paths.join(' ')} --clear`;
}

/** A production version whose checkpoint has an expiry: it will disappear from under the users. */
export function expiryWarning(v: ModelVersion): string | undefined {
  if (!v.expires_at || v.status !== 'production') return undefined;
  return `the production checkpoint expires at ${v.expires_at}: clear its TTL (${clearTtlCommand(v)})`;
}

function who(c: StatusChange): string {
  return c.by.git_user && c.by.git_user !== c.by.os_user ? `${c.by.git_user} (${c.by.os_user})` : c.by.os_user;
}

/** One version's section of MODELS.md (the card's text). */
export function versionSection(v: ModelVersion): string[] {
  const out: string[] = [`### ${v.id} — ${v.status}`, ''];
  const warn = expiryWarning(v);
  if (warn) out.push(`> **Warning:** ${warn}`, '');
  if (v.description) out.push(v.description, '');
  const rows: [string, string][] = [
    ['Status', v.status],
    ['Registered', v.registered_at],
    ['Sampler path', v.sampler_path ? code(v.sampler_path) : '—'],
    ['State path', v.state_path ? code(v.state_path) : '—'],
    ['Base model', code(v.base_model)],
    ['Renderer', v.renderer ?? '—'],
    ['LoRA rank', v.lora_rank !== undefined ? String(v.lora_rank) : '—'],
    ['Source run', v.source_run ? code(v.source_run) : '—'],
    ['Checkpoint expiry', v.expires_at ?? 'none known (no TTL)'],
  ];
  out.push('| Field | Value |', '| --- | --- |', ...rows.map(([k, val]) => `| ${k} | ${cell(val)} |`), '');

  out.push('**Training recipe**', '');
  if (v.recipe.length === 0) out.push('Not known (registered from a tinker:// path).', '');
  else {
    out.push('| # | Kind | Run folder | Learning rate | Steps | Planned | Started from | Checkpoint |', '| --- | --- | --- | --- | --- | --- | --- | --- |');
    v.recipe.forEach((r, i) =>
      out.push(
        `| ${i + 1} | ${r.kind} | ${r.run_dir ? code(r.run_dir) : '—'} | ${r.learning_rate !== undefined ? num(r.learning_rate) : '—'}${r.lr_schedule ? ` (${r.lr_schedule})` : ''} | ${r.steps ?? '—'} | ${cell(r.planned ?? '—')} | ${r.load_checkpoint_path ? code(r.load_checkpoint_path) : 'base model'} | ${r.checkpoint ? code(r.checkpoint) : '—'} |`,
      ),
    );
    out.push('', `Chain: ${v.recipe.map((r) => r.kind.toUpperCase()).join(' → ')}`, '');
  }

  out.push('**Training data**', '');
  if (v.data.length === 0) out.push('None recorded.', '');
  else {
    out.push('| File | Used as | Lines | sha256 |', '| --- | --- | --- | --- |');
    for (const d of v.data) out.push(`| ${code(d.file)} | ${cell(d.used_as)} | ${d.lines ?? '—'} | ${d.sha256 ? code(d.sha256) : cell(d.note ?? '—')} |`);
    out.push('');
  }

  out.push('**Suite results**', '');
  if (v.suite_results.length === 0) out.push('None yet.', '');
  for (const s of v.suite_results) {
    out.push(`Suite ${code(s.suite.name)} version ${code(s.suite.version)} (${code(s.suite.file)}), result of ${s.at}${s.complete ? '' : ', incomplete'}:`, '');
    out.push('| Entry | Layer | Metric | Estimate [95 % CI] | n |', '| --- | --- | --- | --- | --- |');
    for (const e of s.entries) out.push(`| ${e.name} | ${e.layer} | ${e.metric} (${e.goal === 'minimize' ? 'lower' : 'higher'} is better) | ${estimateText(e.estimate)} | ${e.n} |`);
    out.push('');
  }

  if (v.exports?.length) {
    // where the weights went: export folders (relative to the registry) and Hub repos, oldest first
    out.push('**Exports and publishes**', '', '| At | Folder | Hub repo | sha256 |', '| --- | --- | --- | --- |');
    for (const e of v.exports) {
      const hub = e.hub_url ? `${e.hub_url}${e.private === undefined ? '' : e.private ? ' (private)' : ' (public)'}${e.commit ? ` at ${code(e.commit)}` : ''}` : '—';
      out.push(`| ${e.at} | ${e.path ? code(e.path) : 'temporary (not kept)'} | ${cell(hub)} | ${code(e.sha256)} |`);
    }
    out.push('');
  }

  out.push('**History**', '');
  for (const h of v.history) {
    const extra = [h.anyway ? '**promoted anyway**' : '', h.reason ? `reason: ${h.reason}` : ''].filter(Boolean).join('; ');
    out.push(`- ${h.at} → **${h.status}** by ${who(h)}${extra ? ` — ${cell(extra)}` : ''}`);
    for (const g of h.gate ?? []) out.push(`  - ${cell(g)}`);
  }
  out.push('');
  return out;
}

export function renderModelsMd(reg: Registry, _o: { registryDir?: string } = {}): string {
  const out: string[] = ['# Models', '', `Generated from \`${REGISTRY_FILE}\` (the source of truth); do not edit by hand.`, ''];
  if (reg.gate_suite) out.push(`Promotions to production are gated by the suite ${code(reg.gate_suite)}.`, '');
  const versions = sortedVersions(reg);
  if (versions.length === 0) out.push('No model is registered yet.', '');
  const names = [...new Set(versions.map((v) => v.name))];
  if (names.length) {
    out.push('| Model | ' + MODEL_STATUSES.join(' | ') + ' |', '| --- |' + MODEL_STATUSES.map(() => ' --- |').join(''));
    for (const n of names) out.push(`| ${n} | ${MODEL_STATUSES.map((s) => versions.filter((v) => v.name === n && v.status === s).map((v) => `v${v.version}`).join(', ') || '—').join(' | ')} |`);
    out.push('');
  }
  for (const n of names) {
    out.push(`## ${n}`, '');
    for (const v of versions.filter((x) => x.name === n)) out.push(...versionSection(v));
  }
  return `${out.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd()}\n`;
}
