// The worker side of environment files, in Python and in Node: shipped as strings (as the reward
// workers, whose shared part they reuse: the channel, loading the file, the handshake, failure reports). A worker
// loads the file, finds the environment class, then answers calls one at a time, in order:
//   create(instance, problem)  → constructs the class from the dataset line, kept under `instance`
//   initial(instance)          → initial_observation()
//   step(instance, message)    → step(message)
//   group(problems, transcripts) → the module-level compute_group_rewards
//   drop(instance)             → forgets the instance
// Async methods (Python `async def`, JS promises) are awaited. A result goes back as JSON (the
// parent checks its shape); a value JSON cannot carry is an `invalid_result`, an exception a
// `failure` with its traceback and the line in the user's file.
import { NODE_WORKER_COMMON } from '../reward/nodeWorkerSource';
import { PYTHON_WORKER_COMMON } from '../reward/pythonWorkerSource';

export const PYTHON_ENV_WORKER_SOURCE =
  PYTHON_WORKER_COMMON +
  String.raw`
import asyncio, dataclasses

def find_class(module, wanted):
    # the class named by env.class, else the one class of the file with initial_observation and step
    if wanted:
        cls = module.__dict__.get(wanted)
        if cls is None:
            return None, "no class %s at the top level of the file" % wanted
        if not isinstance(cls, type):
            return None, "%s is a %s, not a class" % (wanted, type(cls).__name__)
    else:
        found = [v for v in module.__dict__.values() if isinstance(v, type) and v.__module__ == module.__name__ and callable(getattr(v, "step", None)) and callable(getattr(v, "initial_observation", None))]
        if not found:
            return None, "no environment class in the file: define a class with initial_observation(self) and step(self, message)"
        if len(found) > 1:
            return None, "several environment classes (%s): name one with \"class\" in the spec's env" % ", ".join(c.__name__ for c in found)
        cls = found[0]
    for method in ("initial_observation", "step"):
        if not callable(getattr(cls, method, None)):
            return None, "%s has no method %s" % (cls.__name__, method)
    try:
        inspect.signature(cls).bind({})
    except TypeError:
        return None, "%s(...) must take the dataset line as its one argument: __init__(self, problem)" % cls.__name__
    except ValueError:
        pass
    try:
        inspect.signature(cls.step).bind(None, {})
    except TypeError:
        return None, "%s.step must take one message: step(self, message)" % cls.__name__
    except ValueError:
        pass
    return cls, None

def plain(value):
    # dataclasses (a MessageStepResult) and tuples become JSON-able dicts and lists
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value

def main():
    env = {"cls": None, "group": None}
    instances = {}
    loop = asyncio.new_event_loop()

    def load(msg):
        module, error = load_module(msg, "__tinker_env__")
        if module is not None:
            cls, wrong = find_class(module, msg.get("className"))
            if cls is None:
                error = {"message": wrong}
                line_no, column = locate_definition(msg["source"], msg.get("className") or "")
                if line_no:
                    error["line"] = line_no
            group = module.__dict__.get("compute_group_rewards")
            if group is not None and not callable(group):
                error = {"message": "compute_group_rewards is a %s, not a function" % type(group).__name__}
            env["cls"], env["group"] = cls, group
        if error is not None:
            return None, error
        return {"className": env["cls"].__name__, "groupRewards": env["group"] is not None}, None

    def call(msg, out):
        call_id = msg["id"]
        op = msg["op"]
        start = time.perf_counter()
        try:
            if op == "create":
                instances[msg["instance"]] = env["cls"](msg["problem"])
                value = None
            elif op == "initial":
                value = instances[msg["instance"]].initial_observation()
            elif op == "step":
                value = instances[msg["instance"]].step(msg["message"])
            elif op == "group":
                value = env["group"](msg["problems"], msg["transcripts"])
            else:
                instances.pop(msg["instance"], None)
                value = None
            if inspect.iscoroutine(value):
                value = loop.run_until_complete(value)
        except MemoryError:
            report_out_of_memory(out, {"id": call_id}, start, "the environment")
        except BaseException as e:
            report_exception(out, {"id": call_id}, start, e)
            return
        duration = (time.perf_counter() - start) * 1000.0
        try:
            text = json.dumps({"type": "result", "id": call_id, "value": plain(value), "durationMs": duration}, allow_nan=False)
        except (TypeError, ValueError) as e:
            report_invalid_result(out, {"id": call_id}, duration, value, lambda raw: "%s returned %s, which is not JSON data (%s)" % (op, raw, e))
            return
        out.write((text + "\n").encode("utf-8"))

    serve(load, call)

main()
`;

export const NODE_ENV_WORKER_SOURCE =
  NODE_WORKER_COMMON +
  String.raw`
let Env = null;
let group = null;
const instances = new Map();

const method = (obj, camel, snake) => (obj && typeof obj[camel] === 'function' ? obj[camel] : obj && typeof obj[snake] === 'function' ? obj[snake] : undefined);
const isEnvClass = (v) => typeof v === 'function' && v.prototype && typeof v.prototype.step === 'function' && typeof method(v.prototype, 'initialObservation', 'initial_observation') === 'function';

function locateName(name) {
  const m = name ? new RegExp('\\bclass\\s+' + name + '\\b').exec(source) : null;
  return m ? lineColumnAt(m.index + m[0].indexOf(name)) : {};
}

// the class named by env.class, else the one exported class with initialObservation and step
function findClass(exported, wanted) {
  const pool = Object.assign({}, exported && exported.default && typeof exported.default === 'object' ? exported.default : {}, exported || {});
  if (exported && isEnvClass(exported.default) && !wanted) pool[exported.default.name || 'default'] = exported.default;
  if (wanted) {
    const c = pool[wanted];
    if (c === undefined) return { wrong: 'no exported class ' + wanted + ' in the file' };
    if (!isEnvClass(c)) return { wrong: wanted + ' is not a class with initialObservation() and step(message)' };
    return { cls: c };
  }
  const found = [...new Set(Object.values(pool).filter(isEnvClass))];
  if (found.length === 0) return { wrong: 'no environment class is exported: export a class with initialObservation() and step(message)' };
  if (found.length > 1) return { wrong: 'several environment classes are exported (' + found.map((c) => c.name).join(', ') + '): name one with "class" in the spec\'s env' };
  return { cls: found[0] };
}

async function load(msg) {
  const { exported, loadError } = await exportsOrLoadError(msg);
  if (loadError) return loadError;
  const r = findClass(exported, msg.className);
  if (!r.cls) return Object.assign({ type: 'load_error', message: r.wrong }, locateName(msg.className));
  Env = r.cls;
  const g = exported && (exported.computeGroupRewards ?? exported.compute_group_rewards ?? (exported.default && (exported.default.computeGroupRewards ?? exported.default.compute_group_rewards)));
  if (g !== undefined && typeof g !== 'function') return { type: 'load_error', message: 'computeGroupRewards is a ' + kindOf(g) + ', not a function' };
  group = g ?? null;
  return { type: 'ready', className: Env.name || 'default', groupRewards: group !== null };
}

async function call(msg) {
  const start = performance.now();
  let value;
  try {
    if (msg.op === 'create') {
      instances.set(msg.instance, new Env(msg.problem));
      value = null;
    } else if (msg.op === 'initial') {
      const env = instances.get(msg.instance);
      value = method(env, 'initialObservation', 'initial_observation').call(env);
    } else if (msg.op === 'step') {
      const env = instances.get(msg.instance);
      value = env.step(msg.message);
    } else if (msg.op === 'group') {
      value = group(msg.problems, msg.transcripts);
    } else {
      instances.delete(msg.instance);
      value = null;
    }
    if (value !== null && typeof value === 'object' && typeof value.then === 'function') value = await value;
  } catch (err) {
    return exceptionReport({ id: msg.id }, start, err);
  }
  const durationMs = performance.now() - start;
  let text;
  try {
    text = value === undefined ? undefined : JSON.stringify(value);
  } catch (err) {
    text = undefined;
  }
  if (text === undefined) return invalidResultReport({ id: msg.id }, durationMs, value, (raw) => msg.op + ' returned ' + raw + ' (' + kindOf(value) + '), which is not JSON data');
  return { type: 'result', id: msg.id, value: JSON.parse(text), durationMs };
}

serve(load, async (msg) => {
  if (msg.type === 'call') send(await call(msg));
});
`;
