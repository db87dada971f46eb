// The Python side of the reward worker, run as `python -c <this>`: shipped as a string so the
// esbuild bundle needs no extra file. Protocol: JSON lines, requests on fd 3, answers on fd 4, so
// whatever user code prints (fd 1/2) cannot corrupt it. See protocol.ts for the messages.
/**
 * What the reward worker and the environment worker share: imports, the channel, loading the file,
 * the load handshake and the reports of a call's failure (exception, out of memory, invalid result).
 */
export const PYTHON_WORKER_COMMON = String.raw`
import sys
# python -c puts the working directory (the reward file's folder) first on sys.path: drop it before
# the worker's own imports, so a user file named json.py cannot stand in for the standard module
sys.path = [p for p in sys.path if p not in ("", ".")]
import ast, faulthandler, inspect, io, json, math, numbers, os, threading, time, traceback, types

def send(out, msg):
    out.write((json.dumps(msg) + "\n").encode("utf-8"))

def locate_definition(source, name):
    # line/column (1-based) of the top-level def or assignment of name, for load errors
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None, None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node.lineno, node.col_offset + 1
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return node.lineno, node.col_offset + 1
    return None, None

def describe(exc, tb, file):
    # message, traceback text from the user's frames on, and the innermost frame in the reward file
    text = "".join(traceback.format_exception(type(exc), exc, tb))
    message = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    info = {"message": message[:2000], "traceback": text[-20000:]}
    for frame in traceback.extract_tb(tb):
        if frame.filename == file and frame.lineno:
            info["line"] = frame.lineno
            colno = getattr(frame, "colno", None)
            if colno is not None:
                info["column"] = colno + 1
            else:
                info.pop("column", None)
    return info

def watch_parent():
    # exit when the parent is gone, even while user code spins
    parent = os.getppid()
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            os._exit(0)

def load_module(msg, fallback_name):
    file = msg["file"]
    source = msg["source"]
    try:
        import resource
        cap = int(msg["memoryMb"]) * 1024 * 1024
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            cap = min(cap, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    except (ImportError, ValueError, OSError):
        pass
    try:
        code = compile(source, file, "exec", dont_inherit=True)
    except SyntaxError as e:
        info = {"message": "%s: %s" % (type(e).__name__, e.msg), "traceback": "".join(traceback.format_exception_only(type(e), e))}
        if e.lineno:
            info["line"] = e.lineno
        if e.offset and e.offset > 0:
            info["column"] = e.offset
        return None, info
    # the file's own name as module name (pickle, dataclasses look it up), unless that would hide
    # a module already imported (a reward file named json.py)
    name = os.path.splitext(os.path.basename(file))[0]
    if not name.isidentifier() or name in sys.modules:
        name = fallback_name
    module = types.ModuleType(name)
    module.__file__ = file
    sys.modules[name] = module
    sys.path.insert(0, os.path.dirname(file))
    sys.argv = [file]
    try:
        exec(code, module.__dict__)
    except BaseException as e:
        info = describe(e, e.__traceback__.tb_next if e.__traceback__ else None, file)
        if isinstance(e, MemoryError) or "failed to map segment" in str(e):
            info["message"] += " (the worker's memory cap is %s MB)" % msg["memoryMb"]
        return None, info
    return module, None

def open_channel():
    # requests on fd 3, answers on fd 4 (user prints on 1/2 cannot corrupt them); crash reports on
    # stderr; exit when the parent is gone
    os.set_inheritable(3, False)
    os.set_inheritable(4, False)
    requests = io.open(3, "rb")
    out = io.open(4, "wb", buffering=0)
    faulthandler.enable(all_threads=False)
    threading.Thread(target=watch_parent, daemon=True).start()
    return requests, out

class loaded:
    file = None
    memory_mb = "?"

def serve(load, handle):
    # the handshake, then the requests one at a time: "load" answers "ready" (with the fields load
    # returns) or "load_error" and exits; every later request goes to handle(msg, out)
    requests, out = open_channel()
    for line in requests:
        msg = json.loads(line)
        if msg["type"] == "load":
            loaded.file = msg["file"]
            loaded.memory_mb = msg["memoryMb"]
            ready, error = load(msg)
            if error is not None:
                error["type"] = "load_error"
                send(out, error)
                os._exit(0)
            send(out, dict(ready, type="ready"))
            continue
        handle(msg, out)

def since(start):
    return (time.perf_counter() - start) * 1000.0

def report_out_of_memory(out, ident, start, what):
    send(out, dict(ident, type="failure", kind="crash", durationMs=since(start),
                   message="%s ran out of memory (the cap is %s MB); the worker was replaced" % (what, loaded.memory_mb)))
    os._exit(70)

def report_exception(out, ident, start, e):
    # called in the except clause around the user call: its frame is the worker's, the next the user's
    info = describe(e, e.__traceback__.tb_next if e.__traceback__ else None, loaded.file)
    info.update(ident)
    info.update({"type": "failure", "kind": "exception", "durationMs": since(start)})
    send(out, info)

def report_invalid_result(out, ident, duration, value, explain):
    # explain(the value's repr, shortened) says what is wrong with it
    try:
        raw = repr(value)
    except BaseException:
        raw = "<unrepresentable %s>" % type(value).__name__
    send(out, dict(ident, type="failure", kind="invalid_result", durationMs=duration, raw=raw[:1000], message=explain(raw[:80])))

`;

export const PYTHON_WORKER_SOURCE = PYTHON_WORKER_COMMON + String.raw`
def as_reward(value):
    if isinstance(value, numbers.Real):
        try:
            number = float(value)
        except Exception:
            return None
        if math.isfinite(number):
            return number
    return None

def as_result(value):
    # a number, or a dict {"reward": number, "format": number (optional)}: (reward, format, what is wrong)
    if isinstance(value, dict):
        unknown = [k for k in value if k not in ("reward", "format")]
        if unknown:
            return None, None, "a dict may hold only \"reward\" and \"format\" (it has %s)" % ", ".join(repr(k) for k in unknown[:5])
        if "reward" not in value:
            return None, None, "a dict needs \"reward\""
        reward = as_reward(value["reward"])
        if reward is None:
            return None, None, "its \"reward\" is not a finite number"
        fmt = None
        if "format" in value and value["format"] is not None:
            fmt = as_reward(value["format"])
            if fmt is None:
                return None, None, "its \"format\" is not a finite number"
        return reward, fmt, None
    reward = as_reward(value)
    return reward, None, None if reward is not None else "not a finite number"

def load(msg):
    module, info = load_module(msg, "__tinker_reward__")
    if module is None:
        return None, info
    source = msg["source"]
    line, column = locate_definition(source, "compute_reward")
    where = {}
    if line:
        where["line"] = line
    if column:
        where["column"] = column
    fn = module.__dict__.get("compute_reward")
    if fn is None:
        return None, {"message": "no function compute_reward(completion, ground_truth) is defined at the top level of the file"}
    if not callable(fn):
        return None, dict(where, message="compute_reward is a %s, not a function" % type(fn).__name__)
    if inspect.iscoroutinefunction(fn):
        return None, dict(where, message="compute_reward must be a plain def, not async def")
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        signature = None
    if signature is not None:
        try:
            signature.bind("", "")
        except TypeError:
            return None, dict(where, message="compute_reward must take exactly two positional parameters (completion, ground_truth); it is declared as compute_reward%s" % signature)
    return fn, None

reward_fn = None

def load_reward(msg):
    global reward_fn
    reward_fn, error = load(msg)
    return {}, error

def score(msg, out):
    fn = reward_fn
    for index, (completion, ground_truth) in enumerate(msg["cases"]):
        start = time.perf_counter()
        try:
            value = fn(completion, ground_truth)
        except MemoryError:
            report_out_of_memory(out, {"index": index}, start, "compute_reward")
        except BaseException as e:
            report_exception(out, {"index": index}, start, e)
            continue
        duration = (time.perf_counter() - start) * 1000.0
        reward, fmt, wrong = as_result(value)
        if reward is None:
            report_invalid_result(out, {"index": index}, duration, value, lambda raw: "compute_reward returned %s (%s), %s" % (raw, type(value).__name__, wrong))
        elif fmt is not None:
            out.write(b'{"type":"reward","index":%d,"reward":%r,"format":%r,"durationMs":%r}\n' % (index, reward, fmt, duration))
        else:
            # the hot path, formatted by hand: repr() of a finite float is valid JSON
            out.write(b'{"type":"reward","index":%d,"reward":%r,"durationMs":%r}\n' % (index, reward, duration))

def main():
    serve(load_reward, lambda msg, out: score(msg, out) if msg["type"] == "score" else None)

main()
`;
