// `tinker-studio registry …`: the model registry from the command line, on the same core as the Models
// view (src/core/models). A refused promotion prints every reason and exits 1.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { registerFromPath, registerFromRun, requireVersion, setGateSuite, setStatus } from '../core/models/lifecycle';
import { estimateText, expiryWarning, renderModelsMd, versionSection } from '../core/models/markdown';
import { promote, PromotionRefusedError, recordSuiteResult } from '../core/models/promotion';
import { REGISTRY_FILE, sortedVersions, type ModelVersion } from '../core/models/registry';
import { readRegistry, writeModelsMd } from '../core/models/store';
import { writeFileAtomic } from '../core/fs/atomic';
import type { SuiteRunner } from '../core/suite/contract';
import type { RegistryArgs } from './registryArgs';

export interface RegistryIo {
  out: (text: string) => void;
  err: (text: string) => void;
  /** the suite runner on the backend the flags name (opened only when a suite must run) */
  runner: () => SuiteRunner;
  signal?: AbortSignal;
}

/** --registry, else $TINKER_STUDIO_REGISTRY, else ./tinker-models.json; a folder means its tinker-models.json. */
export function registryFileOf(args: Pick<RegistryArgs, 'registry'>, env: NodeJS.ProcessEnv = process.env): string {
  const given = path.resolve(args.registry || env.TINKER_STUDIO_REGISTRY || REGISTRY_FILE);
  return fs.existsSync(given) && fs.statSync(given).isDirectory() ? path.join(given, REGISTRY_FILE) : given;
}

function listLine(v: ModelVersion): string {
  const latest = v.suite_results.at(-1);
  const figures = latest ? latest.entries.map((e) => `${e.name} ${e.metric} ${estimateText(e.estimate)}`).join('; ') : 'no suite result';
  const warn = expiryWarning(v);
  return [v.id.padEnd(16), v.status.padEnd(10), v.sampler_path ?? v.state_path ?? '', figures, warn ? `WARNING: ${warn}` : ''].filter(Boolean).join('  ');
}

export async function runRegistry(args: RegistryArgs, io: RegistryIo): Promise<number> {
  const file = registryFileOf(args);
  const rel = (p: string) => path.relative(process.cwd(), p) || p;
  switch (args.action) {
    case 'list': {
      const reg = await readRegistry(file);
      const versions = sortedVersions(reg);
      if (args.json) io.out(`${JSON.stringify(versions, null, 2)}\n`);
      else if (versions.length === 0) io.out(`no model is registered in ${rel(file)} (tinker-studio registry register <name> <run dir>)\n`);
      else io.out(`${versions.map(listLine).join('\n')}\n`);
      return 0;
    }
    case 'show': {
      const v = requireVersion(await readRegistry(file), args.target!);
      io.out(args.json ? `${JSON.stringify(v, null, 2)}\n` : `${versionSection(v).join('\n').trimEnd()}\n`);
      return 0;
    }
    case 'register': {
      const v = args.runDir
        ? await registerFromRun(file, { name: args.target!, runDir: path.resolve(args.runDir), ...(args.checkpoint ? { checkpoint: args.checkpoint } : {}), ...(args.description ? { description: args.description } : {}) })
        : await registerFromPath(file, {
            name: args.target!,
            ...(args.samplerPath ? { samplerPath: args.samplerPath } : {}),
            ...(args.statePath ? { statePath: args.statePath } : {}),
            baseModel: args.baseModel!,
            ...(args.renderer ? { renderer: args.renderer } : {}),
            ...(args.loraRank ? { loraRank: args.loraRank } : {}),
            ...(args.description ? { description: args.description } : {}),
          });
      const chain = v.recipe.map((r) => r.kind.toUpperCase()).join(' → ');
      io.out(`registered ${v.id} (candidate): ${v.sampler_path ?? v.state_path}${chain ? `, recipe ${chain}` : ''}\n${rel(file)} and MODELS.md updated\n`);
      return 0;
    }
    case 'gate': {
      if (args.suite) {
        await setGateSuite(file, args.suite);
        io.out(`promotions to production are gated by ${rel(path.resolve(args.suite))}\n`);
      } else {
        const reg = await readRegistry(file);
        io.out(reg.gate_suite ? `${reg.gate_suite}\n` : `no gate suite (tinker-studio registry gate <file.suite.json>)\n`);
      }
      return 0;
    }
    case 'suite': {
      const { version } = await recordSuiteResult(file, args.target!, { ...(args.suite ? { suiteFile: args.suite } : {}), runSuite: io.runner(), ...(io.signal ? { signal: io.signal } : {}), onProgress: (l) => io.err(`${l}\n`) });
      const s = version.suite_results.at(-1)!;
      io.out(`${version.id} on suite ${s.suite.name} version ${s.suite.version}${s.complete ? '' : ' (incomplete)'}:\n${s.entries.map((e) => `  ${e.name} (${e.layer}) ${e.metric} ${estimateText(e.estimate)} n=${e.n}`).join('\n')}\n`);
      return 0;
    }
    case 'promote': {
      if (args.to === 'staging') {
        const v = await setStatus(file, args.target!, 'staging', { ...(args.reason ? { reason: args.reason } : {}) });
        io.out(`${v.id} is in staging\n`);
        return 0;
      }
      try {
        const r = await promote(file, args.target!, {
          ...(args.suite ? { suiteFile: args.suite } : {}),
          ...(args.runSuite ? { runSuite: io.runner() } : {}),
          ...(args.anyway !== undefined ? { anyway: args.anyway } : {}),
          ...(args.reason ? { reason: args.reason } : {}),
          ...(io.signal ? { signal: io.signal } : {}),
          onProgress: (l) => io.err(`${l}\n`),
        });
        const anyway = r.check.refusals.length > 0;
        io.out(
          [
            `${r.version.id} is in production${anyway ? ' (promoted anyway past the gate)' : ''}${r.replaced ? `; ${r.replaced.id} retired` : ''}`,
            ...(anyway ? ['the gate refused:', ...r.check.refusals.map((x) => `  - ${x}`)] : []),
            ...(r.check.passes.length ? ['the gate passed:', ...r.check.passes.map((x) => `  - ${x}`)] : []),
            ...(expiryWarning(r.version) ? [`WARNING: ${expiryWarning(r.version)}`] : []),
          ].join('\n') + '\n',
        );
        return 0;
      } catch (e) {
        if (!(e instanceof PromotionRefusedError)) throw e;
        io.err(`${e.message}\n`);
        return 1;
      }
    }
    case 'retire': {
      const v = await setStatus(file, args.target!, 'retired', { ...(args.reason ? { reason: args.reason } : {}) });
      io.out(`${v.id} is retired\n`);
      return 0;
    }
    case 'export-md': {
      const reg = await readRegistry(file);
      const out = args.out ? path.resolve(args.out) : await writeModelsMd(file, reg);
      if (args.out) await writeFileAtomic(out, renderModelsMd(reg));
      io.out(`${rel(out)}\n`);
      return 0;
    }
  }
}
