// Kimi K2.5's TypeScript-style tool declarations (the cookbook's kimi_k2_5_tool_declaration_ts.py,
// itself Moonshot's tool_declaration_ts.py): each tool as `type name = (_: {…}) => any;` inside
// `namespace functions`, required parameters first, both groups sorted by name, descriptions,
// constraints and defaults as `//` comments, `$defs` as interfaces.
import { RendererError } from './errors';
import { pyJsonDumps, pyStrMember } from './pyJson';

type Schema = Record<string, unknown>;
const INDENT = '  ';
const FIELD_DELIMITER = ',\n';

const isObj = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

class Registry {
  readonly definitions = new Map<string, unknown>();
  hasSelfRef = false;

  register(defs: unknown): void {
    if (!isObj(defs)) return;
    for (const [k, v] of Object.entries(defs)) this.definitions.set(k, v);
  }

  resolve(ref: string): Schema {
    if (ref === '#') {
      this.hasSelfRef = true;
      return { $self_ref: true };
    }
    if (ref.startsWith('#/$defs/')) {
      const name = ref.split('/').pop()!;
      const def = this.definitions.get(name);
      if (def === undefined) throw new RendererError(`tool declaration: reference not found: ${ref}`);
      return def as Schema;
    }
    throw new RendererError(`tool declaration: unsupported reference format: ${ref}`);
  }
}

function formatDescription(description: string, indent = ''): string {
  return description
    .split('\n')
    .map((line) => (line ? `${indent}// ${line}` : ''))
    .join('\n');
}

abstract class BaseType {
  readonly description: string;
  /** each constraint's key and value as Python's str() writes it */
  readonly constraints: [string, string][];

  constructor(extra: Schema, allowed: readonly string[] = []) {
    this.description = typeof extra.description === 'string' ? extra.description : '';
    this.constraints = Object.keys(extra)
      .filter((k) => allowed.includes(k))
      .map((k) => [k, pyStrMember(extra, k)]);
  }

  abstract toTs(indent?: string): string;

  docstring(indent: string): string {
    const lines: string[] = [];
    if (this.description) lines.push(formatDescription(this.description, indent));
    if (this.constraints.length) {
      const sorted = [...this.constraints].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      lines.push(`${indent}// ${sorted.map(([k, v]) => `${k}: ${v}`).join(', ')}`);
    }
    return lines.map((x) => `${x}\n`).join('');
  }
}

class Scalar extends BaseType {
  constructor(
    readonly type: string,
    extra: Schema = {},
  ) {
    super(extra, type === 'string' ? ['maxLength', 'minLength', 'pattern'] : type === 'number' || type === 'integer' ? ['maximum', 'minimum'] : []);
  }
  toTs(): string {
    return this.type === 'integer' ? 'number' : this.type;
  }
}

class Parameter {
  constructor(
    readonly name: string,
    readonly type: BaseType,
    readonly optional: boolean,
    /** the schema holding the parameter's `default`, if any */
    readonly schema: Schema | undefined,
  ) {}

  toTs(indent = ''): string {
    let comments = this.type.docstring(indent);
    const d = this.schema?.default;
    if (this.schema && d !== null && d !== undefined) {
      const repr = typeof d === 'number' || typeof d === 'boolean' ? pyStrMember(this.schema, 'default') : pyJsonDumps(d, { ensureAscii: false });
      comments += `${indent}// Default: ${repr}\n`;
    }
    return `${comments}${indent}${this.name}${this.optional ? '?' : ''}: ${this.type.toTs(indent)}`;
  }
}

class ObjectType extends BaseType {
  properties: Parameter[] = [];
  additional: BaseType | boolean | undefined;

  constructor(schema: Schema, registry?: Registry) {
    super(schema);
    if (Object.keys(schema).length === 0) return;
    if ('$defs' in schema && registry) registry.register(schema.$defs);
    const ap = schema.additionalProperties;
    this.additional = isObj(ap) ? parseType(ap, registry) : typeof ap === 'boolean' ? ap : ap === undefined || ap === null ? undefined : (ap as never);
    if (!('properties' in schema)) return;
    const props = isObj(schema.properties) ? schema.properties : {};
    const required = new Set(Array.isArray(schema.required) ? schema.required : []);
    this.properties = Object.entries(props).map(([name, prop]) => new Parameter(name, parseType(prop, registry), !required.has(name), isObj(prop) ? prop : undefined));
  }

  toTs(indent = ''): string {
    const byName = (a: Parameter, b: Parameter) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    const ordered = [...this.properties.filter((p) => !p.optional).sort(byName), ...this.properties.filter((p) => p.optional).sort(byName)];
    const strs = ordered.map((p) => p.toTs(indent + INDENT));
    if (this.additional !== undefined) {
      const ap = this.additional === true ? 'any' : this.additional === false ? 'never' : this.additional.toTs(indent + INDENT);
      strs.push(`${indent + INDENT}[k: string]: ${ap}`);
    }
    if (!strs.length) return '{}';
    return `{\n${strs.join(FIELD_DELIMITER)}\n${indent}}`;
  }
}

class ArrayType extends BaseType {
  readonly item: BaseType;
  constructor(schema: Schema, registry?: Registry) {
    super(schema, ['minItems', 'maxItems']);
    this.item = schema.items ? parseType(schema.items, registry) : new Scalar('any');
  }
  toTs(indent = ''): string {
    const doc = this.item.docstring(indent + INDENT);
    if (doc) return `Array<\n${doc}${indent}${INDENT}${this.item.toTs(indent + INDENT)}\n${indent}>`;
    return `Array<${this.item.toTs(indent)}>`;
  }
}

class EnumType extends BaseType {
  readonly values: unknown[];
  constructor(schema: Schema) {
    super(schema);
    this.values = Array.isArray(schema.enum) ? schema.enum : [];
  }
  toTs(): string {
    return this.values.map((e, i) => (typeof e === 'string' ? `"${e}"` : pyStrMember(this.values, i))).join(' | ');
  }
}

class AnyOfType extends BaseType {
  readonly types: BaseType[];
  constructor(schema: Schema, registry?: Registry) {
    super(schema);
    this.types = (Array.isArray(schema.anyOf) ? schema.anyOf : []).map((t) => parseType(t, registry));
  }
  toTs(indent = ''): string {
    return this.types.map((t) => t.toTs(indent)).join(' | ');
  }
}

const UNION_NAMES: Readonly<Record<string, string>> = { string: 'string', number: 'number', integer: 'number', boolean: 'boolean', null: 'null', object: '{}', array: 'Array<any>' };

class UnionType extends BaseType {
  readonly types: string[];
  constructor(schema: Schema) {
    super(schema);
    this.types = (schema.type as unknown[]).map((t) => {
      const n = UNION_NAMES[String(t)];
      if (n === undefined) throw new RendererError(`tool declaration: unsupported type ${String(t)} in a type list`);
      return n;
    });
  }
  toTs(): string {
    return this.types.join(' | ');
  }
}

class RefType extends BaseType {
  readonly refName: string;
  constructor(schema: Schema, registry: Registry) {
    super(schema);
    const ref = String(schema.$ref);
    const resolved = registry.resolve(ref);
    this.refName = resolved.$self_ref ? 'parameters' : ref.split('/').pop()!;
  }
  toTs(): string {
    return this.refName;
  }
}

function parseType(schema: unknown, registry?: Registry): BaseType {
  if (typeof schema === 'boolean') return new Scalar(schema ? 'any' : 'null');
  if (!isObj(schema)) throw new RendererError(`tool declaration: invalid JSON Schema object: ${JSON.stringify(schema)}`);
  if ('$ref' in schema && registry) return new RefType(schema, registry);
  if ('anyOf' in schema) return new AnyOfType(schema, registry);
  if ('enum' in schema) return new EnumType(schema);
  if ('type' in schema) {
    const t = schema.type;
    if (Array.isArray(t)) return new UnionType(schema);
    if (t === 'object') return new ObjectType(schema, registry);
    if (t === 'array') return new ArrayType(schema, registry);
    return new Scalar(String(t), schema);
  }
  if (Object.keys(schema).length === 0) return new Scalar('any');
  throw new RendererError(`tool declaration: invalid JSON Schema object: ${JSON.stringify(schema)}`);
}

function functionToTs(fn: Schema): string {
  const registry = new Registry();
  const parameters = isObj(fn.parameters) ? fn.parameters : {};
  const parsed = new ObjectType(parameters, registry);
  const interfaces: string[] = [];
  let root: string | undefined;
  if (registry.hasSelfRef) {
    root = 'parameters';
    const params = parsed.properties.map((p) => p.toTs(INDENT)).join(FIELD_DELIMITER);
    interfaces.push(`interface ${root} {${params ? `\n${params}\n` : ''}}`);
  }
  for (const [name, schema] of [...registry.definitions]) {
    const body = parseType(schema, registry).toTs();
    const desc = isObj(schema) && typeof schema.description === 'string' && schema.description ? `${formatDescription(schema.description)}\n` : '';
    interfaces.push(`${desc}interface ${name} ${body}`);
  }
  const name = typeof fn.name === 'string' ? fn.name : 'function';
  const typeDef = root ? `type ${name} = (_: ${root}) => any;` : `type ${name} = (_: ${parsed.toTs()}) => any;`;
  const description = typeof fn.description === 'string' && fn.description ? formatDescription(fn.description) : '';
  return [interfaces.join('\n'), description, typeDef].filter(Boolean).join('\n');
}

/** `encode_tools_to_typescript_style` over OpenAI-style tools (`{"type": "function", "function": …}`). */
export function kimiToolsTypescript(tools: readonly Schema[]): string {
  const functions = tools.filter((t) => t.type === 'function' && isObj(t.function) && Object.keys(t.function).length > 0).map((t) => functionToTs(t.function as Schema));
  if (!functions.length) return '';
  return `# Tools\n\n## functions\nnamespace functions {\n${functions.join('\n')}\n}\n`;
}
