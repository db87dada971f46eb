// The JSON schema of `*.suite.json` for the editor (the build writes dist/suite.schema.json, package.json
// contributes it): the suite contract's schema, with an inline entry's eval spec described by the eval
// spec's own schema (its targets optional: the suite runs each entry on its own checkpoint).
import { specJsonSchema } from '../spec/define';
import { evalSpecJsonSchema } from '../evals/spec';
import { SuiteFileSchema } from './contract';

export const SUITE_SCHEMA_FILE = 'suite.schema.json';

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined);

export function suiteJsonSchema(): Json {
  const schema = specJsonSchema(SuiteFileSchema);
  const entry = obj(obj(obj(schema['properties'])?.['entries'])?.['items']);
  const props = obj(entry?.['properties']);
  const evalProp = obj(props?.['eval']);
  if (!props || !evalProp) throw new Error('the suite schema has no entries[].eval to describe');
  const { $schema: _s, ...evalSchema } = evalSpecJsonSchema();
  const required = Array.isArray(evalSchema['required']) ? (evalSchema['required'] as unknown[]).filter((k) => k !== 'targets') : [];
  props['eval'] = {
    description: evalProp['description'],
    anyOf: [
      { type: 'string', minLength: 1, pattern: '\\.json$', description: 'A *.eval.json file, relative to the suite file.' },
      { ...evalSchema, required, description: 'An inline eval spec (the suite runs it on its own checkpoint, whatever its targets).' },
    ],
  };
  return schema;
}
