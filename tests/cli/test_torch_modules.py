#!/usr/bin/env python3
"""The PyTorch helper (python/sitecustomize.py, python/kcount/torch/, imported here by its former name
kcount_torch), without a GPU.

1. Qualified names and range nesting (kcount.torch.modules.ModuleRanges) on a tree of stand-in modules:
   names relative to the outermost module, shared modules, modules that are not children of their
   caller or in no tree, re-entrant calls, replaced children, calls outside any root, threads,
   exceptions, kcount not recording, torch.compile tracing, a compiled wrapper (OptimizedModule).
2. With a CPU PyTorch (Debian's python3-torch, at /usr/bin/python3 or $TORCH_PYTHON), a real model:
   the ranges pushed equal the names PyTorch's own named_modules() gives; ranges stay balanced.
3. Start-up: sitecustomize.py chains to the sitecustomize Python would have imported (Debian's, a
   user's), keeps its errors as Python reports them, imports nothing when no switch is set, and never
   imports torch; `kcount run --torch-modules` and LD_PRELOAD with KCOUNT_TORCH_MODULES=1 put the helper
   first on PYTHONPATH; the import hook fires after `import torch` on Python 3.12 too (stand-in torch).
4. End to end with libkcount.so and CPU PyTorch: `kcount run --torch-modules` (preload and --inject
   cuda) and LD_PRELOAD + KCOUNT_TORCH_MODULES=1 give one range per module call in the log, named by
   qualified names, nested under the program's own range; without the switch no module range;
   KCOUNT_TORCH_OPS cuts PyTorch's per-call op name suffixes; --torch-ops on a CPU PyTorch warns once.

Usage: test_torch_modules.py BUILD_DIR NVTX_EXPORT_LIB
Prints PASS/FAIL/SKIP lines; exits 1 if any check failed.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading

from checks import check, exit_status

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
from kcount_torch import modules as km  # noqa: E402


def skip(what):
    print("SKIP " + what)


# ---- 1. names and nesting on stand-in modules ---------------------------------------------------

class Recorder:
    """NVTX stand-in: per thread, the names pushed and the open stack."""

    def __init__(self):
        self.events = []
        self.lock = threading.Lock()
        self.depth = {}

    def push(self, name):
        t = threading.get_ident()
        with self.lock:
            self.events.append((t, "push", name))
            self.depth[t] = self.depth.get(t, 0) + 1

    def pop(self):
        t = threading.get_ident()
        with self.lock:
            self.events.append((t, "pop", None))
            self.depth[t] = self.depth.get(t, 0) - 1

    def names(self):
        return [e[2] for e in self.events if e[1] == "push"]

    def balanced(self):
        return all(d == 0 for d in self.depth.values())

    def clear(self):
        self.events.clear()


class Fake:
    """A module: `_modules`, named_modules() with PyTorch's semantics, and a call that runs the hooks
    around `body(self, *args)`. `post_on_error=False` leaves the post hook out when body raises (a
    PyTorch without always_call)."""
    ranges = None
    post_on_error = True

    def __init__(self, body=None, **children):
        self._modules = dict(children)
        self.body = body

    def named_modules(self, memo=None, prefix=""):
        memo = set() if memo is None else memo
        if id(self) in memo:
            return
        memo.add(id(self))
        yield prefix, self
        for n, m in self._modules.items():
            yield from m.named_modules(memo, prefix + ("." if prefix else "") + n)

    def __call__(self, *args):
        r = Fake.ranges
        r.pre_forward(self, args)
        try:
            out = self.body(self, *args) if self.body else None
        except BaseException:
            if Fake.post_on_error:
                r.post_forward(self, args, None)
            raise
        r.post_forward(self, args, out)
        return out


class Model(Fake):
    pass


class Block(Fake):
    pass


class Linear(Fake):
    pass


class Dropout(Fake):
    pass


class OptimizedModule(Fake):
    pass


def calls_children(self, *a):
    for m in self._modules.values():
        m()


def new_ranges(recording=lambda: True, compiling=lambda: False, root_name=None):
    rec = Recorder()
    r = km.ModuleRanges(rec.push, rec.pop, recording, compiling, root_name)
    Fake.ranges = r
    Fake.post_on_error = True
    return r, rec


def unit_tests():
    # A Llama-like tree: model.layers.N.{attn.q,mlp.up}, lm_head.
    def layer():
        return Block(calls_children, attn=Block(calls_children, q=Linear()), mlp=Block(calls_children, up=Linear()))
    layers = Block(calls_children, **{"0": layer(), "1": layer()})
    inner = Block(calls_children, layers=layers)
    root = Model(calls_children, model=inner, lm_head=Linear())
    r, rec = new_ranges()
    root()
    want = ["Model", "model", "model.layers", "model.layers.0", "model.layers.0.attn", "model.layers.0.attn.q",
            "model.layers.0.mlp", "model.layers.0.mlp.up", "model.layers.1", "model.layers.1.attn",
            "model.layers.1.attn.q", "model.layers.1.mlp", "model.layers.1.mlp.up", "lm_head"]
    check("names: qualified names under the root's class name: %s" % rec.names(),
          rec.names() == want and rec.balanced())
    tree = [n for n, _ in root.named_modules() if n]
    check("names: the same set as named_modules() of the root", set(rec.names()[1:]) == set(tree))
    rec.clear()
    root()
    check("names: a second call gives the same names (cached)", rec.names() == want)

    # Root name from KCOUNT_TORCH_ROOT_NAME.
    r, rec = new_ranges(root_name="net")
    root()
    check("root name: configurable", rec.names()[0] == "net" and rec.names()[1] == "model")

    # A module shared between two parents is named by the parent that called it.
    shared = Linear()
    a, b = Block(calls_children, lin=shared), Block(calls_children, lin=shared)
    root2 = Model(calls_children, a=a, b=b)
    r, rec = new_ranges()
    root2()
    check("shared module: named by its caller: %s" % rec.names(),
          rec.names() == ["Model", "a", "a.lin", "b", "b.lin"] and rec.balanced())

    # A module called by a module that is not its parent: its name in the root's tree; a module in no
    # tree: <caller>.(Class).
    other = Linear()
    holder = Block(None, other=other)
    loose = Dropout()
    caller = Block(lambda self: (other(), loose()))
    root3 = Model(calls_children, caller=caller, holder=holder)
    r, rec = new_ranges()
    root3()
    check("not a child of its caller: name in the root's tree, else (Class): %s" % rec.names(),
          rec.names() == ["Model", "caller", "holder.other", "caller.(Dropout)", "holder"] and rec.balanced())

    # Re-entrant call: a module calling itself.
    depth = [0]

    def recurse(self):
        depth[0] += 1
        if depth[0] < 3:
            self()
    rec_mod = Block(recurse)
    root4 = Model(calls_children, r=rec_mod)
    r, rec = new_ranges()
    root4()
    check("re-entrant call: no second range, balanced: %s" % rec.names(),
          rec.names() == ["Model", "r"] and rec.balanced() and depth[0] == 3)

    # The structure changes: a child replaced, a child renamed.
    r, rec = new_ranges()
    root()
    layers._modules["1"] = Block(calls_children, ffn=Linear())
    rec.clear()
    root()
    check("replaced child: found under its new name",
          "model.layers.1.ffn" in rec.names() and "model.layers.1.mlp" not in rec.names() and rec.balanced())
    lm = root._modules.pop("lm_head")
    root._modules["head"] = lm
    rec.clear()
    root()
    check("renamed child: new name (cache checked against _modules): %s" % rec.names()[-1], rec.names()[-1] == "head")

    # A module called outside any root: it is the root.
    rec.clear()
    layers._modules["0"]()
    check("call outside any root: the module is the root: %s" % rec.names()[:3],
          rec.names()[:3] == ["Block", "attn", "attn.q"])

    # kcount not recording: nothing pushed; asked once per root call.
    asked = [0]
    state = [False]

    def recording():
        asked[0] += 1
        return state[0]
    r, rec = new_ranges(recording=recording)
    root()
    check("not recording: no range, state asked once per root call",
          rec.names() == [] and asked[0] == 1 and not r.tls.stack)
    state[0] = True
    root()
    check("recording again: ranges", rec.names()[0] == "Model" and rec.balanced())

    # torch.compile tracing: hooks return at once.
    r, rec = new_ranges(compiling=lambda: True)
    root()
    check("is_compiling: nothing pushed, no state", rec.names() == [] and not getattr(r.tls, "stack", None))

    # Compiled wrapper: named after the wrapped module, children relative to it.
    r, rec = new_ranges()
    wrapper = OptimizedModule(lambda self: calls_children(root2))
    wrapper._orig_mod = root2
    wrapper._modules["_orig_mod"] = root2
    wrapper()
    check("compiled wrapper: class of _orig_mod, names relative to it: %s" % rec.names(),
          rec.names() == ["Model", "a", "a.lin", "b", "b.lin"])
    # ... and when the wrapper calls the wrapped module eagerly (hooks run for it too): no second range.
    rec.clear()
    wrapper.body = lambda self: root2()
    wrapper()
    check("compiled wrapper calling the wrapped module eagerly: one range, same names: %s" % rec.names(),
          rec.names() == ["Model", "a", "a.lin", "b", "b.lin"] and rec.balanced())

    # DistributedDataParallel around a compiled model: both seen through.
    class DistributedDataParallel(Fake):
        pass
    rec.clear()
    ddp = DistributedDataParallel(lambda self: self.module())
    ddp.module = wrapper
    ddp._modules["module"] = wrapper
    ddp()
    check("DistributedDataParallel(compiled(model)): one root range named after the model: %s" % rec.names(),
          rec.names() == ["Model", "a", "a.lin", "b", "b.lin"] and rec.balanced())

    # Exception without always_call: the post hooks of the inner calls are missing; the outer post hook
    # closes them (balanced).
    def boom(self):
        raise RuntimeError("x")
    bad = Block(calls_children, inner=Block(boom))

    def catch(self):
        try:
            bad()
        except RuntimeError:
            pass
    root5 = Model(catch, bad=bad)
    r, rec = new_ranges()
    Fake.post_on_error = False
    root5()
    Fake.post_on_error = True
    check("exception without always_call: ranges closed by the caller's post hook",
          rec.names() == ["Model", "bad", "bad.inner"] and rec.balanced() and not r.tls.stack)
    r, rec = new_ranges()
    root5()
    check("exception with always_call: balanced", rec.balanced() and not r.tls.stack)

    # Threads: each thread its own stack and its own root.
    r, rec = new_ranges()
    errors = []

    def worker():
        try:
            for _ in range(50):
                root()
        except Exception as e:  # pragma: no cover
            errors.append(e)
    ts = [threading.Thread(target=worker) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    roots = sum(1 for t, kind, name in rec.events if kind == "push" and name == "Model")
    check("threads: per-thread stacks, balanced, every thread's calls named from its own root",
          not errors and rec.balanced() and roots == 200 and rec.names().count("model.layers.0.attn.q") == 200)

    # Backward names: the name of the module's last forward range, " [backward]", outermost asks state.
    r, rec = new_ranges()
    r.track_last = True
    root2()
    rec.clear()
    r.pre_backward(root2, None)
    r.pre_backward(b, None)
    r.pre_backward(shared, None)
    r.post_backward(shared, None, None)
    r.post_backward(b, None, None)
    r.post_backward(root2, None, None)
    check("backward: last forward name + [backward], balanced: %s" % rec.names(),
          rec.names() == ["Model [backward]", "b [backward]", "b.lin [backward]"] and rec.balanced())

    # Cost of the hooks per module call on stand-ins (pure Python part, no PyTorch).
    import time
    r, rec = new_ranges()
    r.push = lambda n: None
    r.pop = lambda: None
    leaf = Linear()
    top = Model(lambda self: [leaf() for _ in range(1000)], leaf=leaf)
    t0 = time.perf_counter()
    for _ in range(20):
        top()
    dt = (time.perf_counter() - t0) / (20 * 1001)
    print("INFO hooks (pre + post, names cached, NVTX stubbed) on stand-in modules: %.2f us per module call" % (dt * 1e6))

    switch_tests()


# Stand-ins for PyTorch's global hook registry and Module._call_impl: hooks run only if registered when
# the call begins (pre) and when its forward returned (post), as in PyTorch.
REGISTRY = {}


class Handle:
    def __init__(self, key):
        self.key = key

    def remove(self):
        REGISTRY.pop(self.key, None)


class Hooked:
    def __init__(self, body=None, **children):
        self._modules = dict(children)
        self.body = body

    def named_modules(self, memo=None, prefix=""):
        return Fake.named_modules(self, memo, prefix)

    def __call__(self, *args):
        pre = REGISTRY.get("pre")
        if pre is not None:
            pre(self, args)
        out = self.body(self, *args) if self.body else None
        post = REGISTRY.get("post")
        if post is not None:
            post(self, args, out)
        return out


def switch_tests():
    state = {"on": False}
    rec = Recorder()
    r = km.ModuleRanges(rec.push, rec.pop, lambda: state["on"], call_codes=[Hooked.__call__.__code__])

    def register():
        REGISTRY["pre"], REGISTRY["post"] = r.pre_forward, r.post_forward
        return [Handle("pre"), Handle("post")]

    sw = km.HookSwitch(r, register, lambda: state["on"])
    check("switch: kcount not recording: no hook registered (PyTorch's fast path)", not sw.sync() and not REGISTRY)
    toggles = []

    def body(self):
        self._modules["a"]()
        if not toggles:  # the window opens in the middle of the first forward
            toggles.append(1)
            state["on"] = True
            sw.sync()
        self._modules["b"]()

    root = Hooked(body, a=Hooked(), b=Hooked(calls_children, c=Hooked()))
    root()
    check("switch: registered in the middle of a forward: the rest of that forward pushes nothing (its calls "
          "are not taken for roots): %s" % rec.names(),
          sw.handles and REGISTRY and rec.names() == [] and r.open_roots == 0)
    root()
    check("switch: the next outermost call has its ranges: %s" % rec.names(),
          rec.names() == ["Hooked", "a", "b", "b.c"] and rec.balanced())
    rec.clear()

    def body_off(self):
        self._modules["a"]()
        state["on"] = False
        sw.sync()  # the window closes while a root range is open: removal waits for it
        check("switch: not removed while a range it opened is open", "pre" in REGISTRY and r.open_roots == 1)
        self._modules["b"]()

    root.body = body_off
    root()
    check("switch: the open root closed normally: %s" % rec.names(),
          rec.balanced() and rec.names() == ["Hooked", "a", "b", "b.c"] and r.open_roots == 0)
    check("switch: removed once no range is open", not sw.sync() and not REGISTRY)
    rec.clear()
    root.body = calls_children
    root()
    check("switch: after removal nothing is pushed", rec.names() == [])
    state["on"] = True
    sw.sync()
    root()
    check("switch: registered again, ranges again (3 changes: %d)" % sw.changes,
          rec.names() == ["Hooked", "a", "b", "b.c"] and rec.balanced() and sw.changes == 3)
    sw.stop()
    check("switch: stop() removes the hooks", not REGISTRY and not r.registered)


# ---- helpers for subprocess tests -----------------------------------------------------------------

def run(cmd, env=None, cwd=None, timeout=300):
    p = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("KCOUNT_") and k not in ("PYTHONPATH", "LD_PRELOAD", "CUDA_INJECTION64_PATH",
                                                        "NVTX_INJECTION64_PATH")}
    env.update(extra)
    return env


def torch_python():
    """A python with a (CPU) torch, or None."""
    for py in [os.environ.get("TORCH_PYTHON"), "/usr/bin/python3", sys.executable]:
        if py and os.path.exists(py):
            rc, out, _ = run([py, "-c", "import torch; print(torch.__version__)"], env=clean_env())
            if rc == 0:
                return py, out.strip()
    return None, None


LLAMA_LIKE = textwrap.dedent("""
    import torch
    from torch import nn
    class Attention(nn.Module):
        def __init__(s, d):
            super().__init__(); s.q_proj = nn.Linear(d, d); s.k_proj = nn.Linear(d, d); s.o_proj = nn.Linear(d, d)
        def forward(s, x):
            a = torch.softmax(s.q_proj(x) @ s.k_proj(x).transpose(-1, -2), -1)
            return s.o_proj(a @ x)
    class MLP(nn.Module):
        def __init__(s, d):
            super().__init__(); s.up_proj = nn.Linear(d, 2 * d); s.act = nn.SiLU(); s.down_proj = nn.Linear(2 * d, d)
        def forward(s, x):
            return s.down_proj(s.act(s.up_proj(x)))
    class Layer(nn.Module):
        def __init__(s, d):
            super().__init__(); s.norm = nn.LayerNorm(d); s.self_attn = Attention(d); s.mlp = MLP(d)
        def forward(s, x):
            x = x + s.self_attn(s.norm(x))
            return x + s.mlp(s.norm(x))
    class Inner(nn.Module):
        def __init__(s, d, n):
            super().__init__(); s.embed_tokens = nn.Embedding(100, d); s.layers = nn.ModuleList([Layer(d) for _ in range(n)])
        def forward(s, ids):
            x = s.embed_tokens(ids)
            for l in s.layers:
                x = l(x)
            return x
    class TinyLlama(nn.Module):
        def __init__(s, d=16, n=2):
            super().__init__(); s.model = Inner(d, n); s.lm_head = nn.Linear(d, 100)
        def forward(s, ids):
            return s.lm_head(s.model(ids))
""")

# Module calls of one TinyLlama forward, in call order (the norm is called twice per layer).
def llama_like_calls(n=2):
    names = ["TinyLlama", "model", "model.embed_tokens"]
    for i in range(n):
        p = "model.layers.%d" % i
        names += [p, p + ".norm", p + ".self_attn", p + ".self_attn.q_proj", p + ".self_attn.k_proj",
                  p + ".self_attn.o_proj", p + ".norm", p + ".mlp", p + ".mlp.up_proj", p + ".mlp.act",
                  p + ".mlp.down_proj"]
    return names + ["lm_head"]


def torch_tests(py, version):
    script = LLAMA_LIKE + textwrap.dedent("""
        import sys, json, threading
        sys.path.insert(0, %r)
        import kcount_torch
        from kcount_torch import modules as km
        events = []
        opts = kcount_torch.Options(modules=True, backward=True)
        r = km.install(torch, opts, recording=lambda: True,
                       backend=(lambda n: events.append(n), lambda: events.append(None), "list"))
        m = TinyLlama()
        ids = torch.randint(0, 100, (2, 5))
        with torch.no_grad():
            m(ids)
        fwd = list(events); events.clear()
        expected = [n for n, mod in m.named_modules() if not isinstance(mod, torch.nn.ModuleList)]
        # An exception inside a submodule, then a normal call.
        orig = m.model.layers[1].mlp.forward
        def boom(x): raise RuntimeError("boom")
        m.model.layers[1].mlp.forward = boom
        try:
            with torch.no_grad(): m(ids)
        except RuntimeError: pass
        m.model.layers[1].mlp.forward = orig
        after_exc_stack = len(r.tls.stack)
        events.clear()
        with torch.no_grad():
            m(ids)
        again = list(events)
        km.remove()
        events.clear()
        m(ids)
        print(json.dumps({"fwd": fwd, "named": expected, "after_exc_stack": after_exc_stack, "again": again,
                          "after_remove": events}))
    """ % os.path.join(ROOT, "python"))
    rc, out, err = run([py, "-c", script], env=clean_env())
    if rc != 0:
        check("torch %s: model run: rc=%d %s" % (version, rc, err[-800:]), False)
        return
    res = json.loads(out.strip().splitlines()[-1])
    pushes = [e for e in res["fwd"] if e is not None]
    pops = [e for e in res["fwd"] if e is None]
    check("torch %s: ranges in call order with qualified names: %s" % (version, pushes), pushes == llama_like_calls())
    check("torch %s: every push popped (%d)" % (version, len(pushes)), len(pops) == len(pushes))
    named = set(res["named"]) - {""}
    check("torch %s: names are exactly named_modules() of the root (ModuleList, never "
          "called, left out)" % version, set(pushes[1:]) == named)
    always_call = tuple(int(x) for x in version.split("+")[0].split(".")[:2]) >= (2, 1)
    if always_call:
        check("torch %s: exception: always_call post hooks close every range" % version, res["after_exc_stack"] == 0)
    else:
        print("INFO torch %s has no always_call: %d stale frames after an exception escaped the root "
              "(closed by the post hook of the next enclosing call only)" % (version, res["after_exc_stack"]))
    check("torch %s: remove() unregisters the hooks" % version, res["after_remove"] == [])

    # The switch with a real PyTorch: no global hook while kcount does not record; registered in the middle
    # of a forward, the rest of that forward has no ranges and the next one has all of them.
    script = textwrap.dedent("""
        import sys, json, torch
        from torch import nn
        sys.path.insert(0, %r)
        import kcount_torch
        from kcount_torch import modules as km
        mm = torch.nn.modules.module
        events, state = [], {"on": False}
        km.install(torch, kcount_torch.Options(modules=True), recording=lambda: state["on"],
                   backend=(lambda n: events.append(n), lambda: events.append(None), "list"))
        sw = km.installed.switch
        res = {"idle_hooks": len(mm._global_forward_pre_hooks) + len(mm._global_forward_hooks)}
        class Toggle(nn.Module):
            def forward(s, x):
                if not state["on"]:
                    state["on"] = True
                    sw.sync()
                return x
        m = nn.Sequential(nn.Linear(4, 4), Toggle(), nn.Linear(4, 4))
        x = torch.ones(2, 4)
        m(x)
        res["mid"] = list(events); events.clear()
        m(x)
        res["next"] = list(events); events.clear()
        state["on"] = False
        sw.sync()
        res["off_hooks"] = len(mm._global_forward_pre_hooks) + len(mm._global_forward_hooks)
        km.remove()
        print(json.dumps(res))
    """ % os.path.join(ROOT, "python"))
    rc, out, err = run([py, "-c", script], env=clean_env())
    if rc != 0:
        check("torch %s: hook switch run: rc=%d %s" % (version, rc, err[-800:]), False)
    else:
        res = json.loads(out.strip().splitlines()[-1])
        check("torch %s: no global module hook registered while kcount does not record" % version,
              res["idle_hooks"] == 0 and res["off_hooks"] == 0)
        check("torch %s: registered inside a forward: that forward has no range, the next has all: %s / %s"
              % (version, res["mid"], res["next"]),
              res["mid"] == [] and res["next"] == ["Sequential", "0", None, "1", None, "2", None, None])

    # Cost per module call, CPU, forward with hooks vs without (interleaved).
    bench = LLAMA_LIKE + textwrap.dedent("""
        import sys, time, json
        sys.path.insert(0, %r)
        import kcount_torch
        from kcount_torch import modules as km
        torch.set_num_threads(1)
        m = TinyLlama(d=8, n=4).eval()
        ids = torch.randint(0, 100, (1, 4))
        calls = sum(1 for _ in m.modules()) + 4  # norm called twice per layer
        def timeit(n=200):
            t0 = time.perf_counter()
            with torch.no_grad():
                for _ in range(n): m(ids)
            return (time.perf_counter() - t0) / n
        res = {"off": [], "idle": [], "on": [], "trivial": []}
        noop = (lambda n: None, lambda: None, "noop")
        mm = torch.nn.modules.module
        for rep in range(5):
            res["off"].append(timeit())
            h = [mm.register_module_forward_pre_hook(lambda m, a: None), mm.register_module_forward_hook(lambda m, a, o: None)]
            res["trivial"].append(timeit()); [x.remove() for x in h]
            km.install(torch, kcount_torch.Options(modules=True), recording=lambda: False, backend=noop)
            res["idle"].append(timeit()); km.remove()
            km.install(torch, kcount_torch.Options(modules=True), recording=lambda: True, backend=noop)
            res["on"].append(timeit()); km.remove()
        med = {k: sorted(v)[len(v) // 2] for k, v in res.items()}
        print(json.dumps({"calls": calls, "off_us": med["off"] * 1e6, "idle_us": med["idle"] * 1e6,
                          "on_us": med["on"] * 1e6, "trivial_us": med["trivial"] * 1e6}))
    """ % os.path.join(ROOT, "python"))
    rc, out, err = run([py, "-c", bench], env=clean_env())
    if rc == 0:
        b = json.loads(out.strip().splitlines()[-1])
        c = b["calls"]
        print("INFO cost on CPU (torch %s, %s, TinyLlama d=8 4 layers, %d module calls per forward, median of 5x200): "
              "forward %.1f us without hooks; %.1f us with two empty global hooks (PyTorch's own cost of global "
              "hooks: +%.2f us per module call); %.1f us with kcount's hooks, kcount not recording (+%.2f us per "
              "module call); %.1f us recording, NVTX stubbed (+%.2f us per module call)"
              % (version, py, c, b["off_us"], b["trivial_us"], (b["trivial_us"] - b["off_us"]) / c, b["idle_us"],
                 (b["idle_us"] - b["off_us"]) / c, b["on_us"], (b["on_us"] - b["off_us"]) / c))
    else:
        check("torch %s: cost measurement ran: %s" % (version, err[-500:]), False)


# ---- 3. start-up ----------------------------------------------------------------------------------

def startup_tests(build, work):
    helper = os.path.join(build, "share", "kcount", "python")
    check("build tree: helper copied to share/kcount/python",
          os.path.isfile(os.path.join(helper, "sitecustomize.py")) and
          os.path.isfile(os.path.join(helper, "kcount", "torch", "modules.py")))
    user = os.path.join(work, "user")
    os.makedirs(user)
    with open(os.path.join(user, "sitecustomize.py"), "w") as f:
        f.write("import os\nUSER_MARK = 'user sitecustomize ran'\nos.environ['USER_SITE_RAN'] = '1'\n")
    probe = ("import sys, os, json; sc = sys.modules.get('sitecustomize');"
             "print(json.dumps({'torch': 'torch' in sys.modules, 'kcount_torch': 'kcount.torch' in sys.modules,"
             "'sc': getattr(sc, '__file__', None), 'user': os.environ.get('USER_SITE_RAN'),"
             "'mark': getattr(sc, 'USER_MARK', None), 'meta': [type(f).__name__ for f in sys.meta_path],"
             "'path0': os.environ.get('PYTHONPATH', '').split(':')[0]}))")
    pythons = [sys.executable]
    if os.path.exists("/usr/bin/python3") and os.path.realpath("/usr/bin/python3") != os.path.realpath(sys.executable):
        pythons.append("/usr/bin/python3")
    for py in pythons:
        rc, out, err = run([py, "-c", "import sitecustomize; print(sitecustomize.__file__)"], env=clean_env())
        system_sc = out.strip() if rc == 0 else None
        # The user's sitecustomize after the helper, with and without the switch.
        for switch in ("1", None):
            env = clean_env(PYTHONPATH=helper + ":" + user)
            if switch:
                env["KCOUNT_TORCH_MODULES"] = switch
            rc, out, err = run([py, "-c", probe], env=env)
            if rc != 0:
                check("%s: probe ran: %s" % (py, err), False)
                continue
            p = json.loads(out)
            what = "%s, switch %s" % (py, "on" if switch else "off")
            check("%s: the user's sitecustomize still runs and is sys.modules['sitecustomize']" % what,
                  p["sc"] == os.path.join(user, "sitecustomize.py") and p["user"] == "1" and p["mark"])
            check("%s: torch not imported" % what, not p["torch"])
            check("%s: kcount.torch imported and its finder installed only with the switch" % what,
                  p["kcount_torch"] == bool(switch) and ("TorchImportFinder" in p["meta"]) == bool(switch))
        if system_sc:
            env = clean_env(PYTHONPATH=helper, KCOUNT_TORCH_MODULES="1")
            rc, out, err = run([py, "-c", probe], env=env)
            p = json.loads(out) if rc == 0 else {}
            check("%s: the system's sitecustomize (%s) still runs" % (py, system_sc), p.get("sc") == system_sc)
        # An error in the user's sitecustomize is reported as Python reports it, and the program runs.
        bad = os.path.join(work, "bad")
        os.makedirs(bad, exist_ok=True)
        with open(os.path.join(bad, "sitecustomize.py"), "w") as f:
            f.write("raise ValueError('user error')\n")
        rc0, out0, err0 = run([py, "-c", "print('ran')"], env=clean_env(PYTHONPATH=bad))
        rc1, out1, err1 = run([py, "-c", "print('ran')"], env=clean_env(PYTHONPATH=helper + ":" + bad, KCOUNT_TORCH_MODULES="1"))
        check("%s: an error in the user's sitecustomize is reported as without the helper: %r" % (py, err1.strip()),
              (rc0, out0, err0) == (rc1, out1, err1) and "Error in sitecustomize" in err1)

    # Python 3.12: the import hook runs after a stand-in torch package finished importing.
    import glob
    py312 = None
    for cand in [shutil.which("python3.12")] + sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.12*/bin/python3.12"))):
        if cand and run([cand, "-c", "pass"], env=clean_env())[0] == 0:
            py312 = cand
            break
    if py312:
        fake = os.path.join(work, "faketorch")
        os.makedirs(os.path.join(fake, "torch", "nn", "modules"))
        with open(os.path.join(fake, "torch", "__init__.py"), "w") as f:
            f.write("import torch.nn.modules.module\nDONE = True\n")
        open(os.path.join(fake, "torch", "nn", "__init__.py"), "w").close()
        open(os.path.join(fake, "torch", "nn", "modules", "__init__.py"), "w").close()
        with open(os.path.join(fake, "torch", "nn", "modules", "module.py"), "w") as f:
            f.write("import sys\nREG = []\n"
                    "def register_module_forward_pre_hook(h):\n"
                    "    import torch; REG.append(('pre', getattr(torch, 'DONE', False)))\n"
                    "def register_module_forward_hook(h, always_call=False):\n"
                    "    REG.append(('post', always_call))\n")
        with open(os.path.join(fake, "torch", "_nvtx_stub.py"), "w") as f:
            f.write("")
        probe312 = ("import sys; import torch, json; from torch.nn.modules import module as m;"
                    "print(json.dumps({'reg': m.REG, 'loader': type(torch.__spec__.loader).__name__,"
                    "'loader2': type(torch.__loader__).__name__, 'meta': [type(f).__name__ for f in sys.meta_path]}))")
        env = clean_env(PYTHONPATH=helper + ":" + fake, KCOUNT_TORCH_MODULES="1", KCOUNT_TORCH_NVTX_LIB=NVTX_LIB,
                        LD_PRELOAD=os.path.join(build, "lib", "libkcount.so"))
        rc, out, err = run([py312, "-c", probe312], env=env)
        p = json.loads(out.strip().splitlines()[-1]) if rc == 0 and out.strip() else {}
        check("python3.12: hooks registered after torch finished importing, always_call, loader restored, finder gone: %s %s"
              % (p, err[-300:]),
              p.get("reg") == [["pre", True], ["post", True]] and p.get("loader") == "SourceFileLoader"
              and p.get("loader2") == "SourceFileLoader" and "TorchImportFinder" not in p.get("meta", ["TorchImportFinder"]))
    else:
        skip("python3.12 not found: import hook on 3.12 not tested here (the GPU check runs on 3.12)")

    # kcount run --torch-modules and the LD_PRELOAD switch put the helper first on PYTHONPATH.
    kcount = os.path.join(build, "bin", "kcount")
    lib = os.path.join(build, "lib", "libkcount.so")
    envp = ("import os, json; print(json.dumps({k: os.environ.get(k) for k in "
            "('PYTHONPATH', 'KCOUNT_TORCH_MODULES', 'KCOUNT_TORCH_OPS', 'KCOUNT_TORCH_BACKWARD')}))")
    real_helper = os.path.realpath(helper)
    rc, out, err = run([kcount, "run", "--torch-modules", "--", sys.executable, "-c", envp], env=clean_env(PYTHONPATH=user))
    p = json.loads(out) if rc == 0 else {}
    check("kcount run --torch-modules: helper first on PYTHONPATH, user's kept, switch set: %s" % p,
          p.get("PYTHONPATH") == real_helper + ":" + user and p.get("KCOUNT_TORCH_MODULES") == "1")
    rc, out, err = run([kcount, "run", "--torch-ops", "--torch-backward", "--", sys.executable, "-c", envp], env=clean_env())
    p = json.loads(out) if rc == 0 else {}
    check("kcount run --torch-ops --torch-backward: switches set: %s" % p,
          p.get("PYTHONPATH") == real_helper and p.get("KCOUNT_TORCH_OPS") == "1" and p.get("KCOUNT_TORCH_BACKWARD") == "1")
    rc, out, err = run([kcount, "run", "--", sys.executable, "-c", envp], env=clean_env())
    p = json.loads(out) if rc == 0 else {}
    check("kcount run without --torch-*: PYTHONPATH untouched",
          p.get("PYTHONPATH") is None and p.get("KCOUNT_TORCH_MODULES") is None)
    for switch in ("KCOUNT_TORCH_MODULES", "KCOUNT_TORCH_OPS"):
        rc, out, err = run([sys.executable, "-c", envp], env=clean_env(LD_PRELOAD=lib, PYTHONPATH=user, **{switch: "1"}))
        p = json.loads(out) if rc == 0 else {}
        check("LD_PRELOAD + %s=1: the library's constructor prepends the helper: %s"
              % (switch, p.get("PYTHONPATH")), p.get("PYTHONPATH") == real_helper + ":" + user)
    rc, out, err = run([sys.executable, "-c", envp], env=clean_env(LD_PRELOAD=lib, PYTHONPATH=real_helper, KCOUNT_TORCH_MODULES="1"))
    p = json.loads(out) if rc == 0 else {}
    check("LD_PRELOAD: helper already on PYTHONPATH (kcount run) is not added twice",
          p.get("PYTHONPATH") == real_helper)
    rc, out, err = run([sys.executable, "-c", envp], env=clean_env(LD_PRELOAD=lib, KCOUNT_TORCH_MODULES="0"))
    p = json.loads(out) if rc == 0 else {}
    check("LD_PRELOAD with KCOUNT_TORCH_MODULES=0: PYTHONPATH untouched", p.get("PYTHONPATH") is None)


# ---- 4. end to end with libkcount.so and CPU PyTorch ----------------------------------------------

E2E = LLAMA_LIKE + textwrap.dedent("""
    import ctypes, os, sys
    nv = ctypes.CDLL(os.environ["TEST_NVTX_LIB"])
    nv.nvtxRangePushA.argtypes = [ctypes.c_char_p]
    m = TinyLlama()
    ids = torch.randint(0, 100, (2, 5))
    with torch.no_grad():
        m(ids)                      # before any range: kcount not recording yet, no module range
        for i in range(3):
            nv.nvtxRangePushA(b"step")  # the program's own range starts kcount's recording
            m(ids)
            nv.nvtxRangePop()
        if os.environ.get("TEST_OP_NAMES"):
            for i in range(4):
                nv.nvtxRangePushA(("aten::mm, seq = %d, op_id = %d" % (i, 100 + i)).encode())
                nv.nvtxRangePop()
    print("done")
""")


def e2e_tests(build, work, py, version):
    kcount = os.path.join(build, "bin", "kcount")
    lib = os.path.join(build, "lib", "libkcount.so")
    script = os.path.join(work, "tiny.py")
    with open(script, "w") as f:
        f.write(E2E)
    base = dict(TEST_NVTX_LIB=NVTX_LIB, KCOUNT_TORCH_NVTX_LIB=NVTX_LIB)

    def summary(log):
        rc, out, err = run([kcount, "summary", "--format", "json", log])
        if rc != 0:
            return None
        return {r["path"]: r for r in json.loads(out)["logs"][0]["ranges"]}

    # Path of each module range: step/TinyLlama/<called ancestors>/<name> (the ModuleList model.layers
    # is never called, so it is not on the path).
    called = set(llama_like_calls())
    want_paths = {"step/TinyLlama"}
    for n in called - {"TinyLlama"}:
        parts = n.split(".")
        prefixes = [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
        want_paths.add("step/TinyLlama/" + "/".join(p for p in prefixes if p in called))

    cases = [
        ("kcount run --torch-modules", [kcount, "run", "--torch-modules", "--output", "{log}", "--", py, script], {}),
        ("kcount run --torch-modules --inject cuda",
         [kcount, "run", "--torch-modules", "--inject", "cuda", "--output", "{log}", "--", py, script], {}),
        ("LD_PRELOAD + KCOUNT_TORCH_MODULES=1", [py, script], dict(LD_PRELOAD=lib, KCOUNT_TORCH_MODULES="1", KCOUNT_OUTPUT="{log}")),
    ]
    for i, (what, cmd, extra) in enumerate(cases):
        log = os.path.join(work, "e2e-%d.kcount" % i)
        env = clean_env(**base)
        env.update({k: v.replace("{log}", log) for k, v in extra.items()})
        rc, out, err = run([c.replace("{log}", log) for c in cmd], env=env)
        s = summary(log) if rc == 0 and os.path.exists(log) else None
        if s is None:
            check("e2e %s: rc=%d, log %s, stderr %s" % (what, rc, os.path.exists(log), err[-600:]), False)
            continue
        mod_paths = {p for p in s if p.startswith("step/")}
        check("e2e %s: module ranges under step, named by qualified names (%d paths)%s"
              % (what, len(want_paths), "" if mod_paths == want_paths else ": missing %s, extra %s"
                 % (sorted(want_paths - mod_paths)[:5], sorted(mod_paths - want_paths)[:5])), mod_paths == want_paths)
        norm = s.get("step/TinyLlama/model/model.layers.0/model.layers.0.norm", {})
        check("e2e %s: 3 steps, 3 root calls under step, the norm called twice per layer per step (6)" % what,
              s["step"]["instances"] == 3 and s.get("step/TinyLlama", {}).get("instances") == 3 and norm.get("instances") == 6)
        first = s.get("TinyLlama", {}).get("instances", 0)
        if "--inject cuda" in what:
            check("e2e %s: the call before the program's first range has no range (kcount is not "
                  "loaded until that range): %d" % (what, first), first == 0)
        else:
            check("e2e %s: the call before the program's first range has its ranges too (kcount armed "
                  "with KCOUNT_START=on: the module range starts recording): %d" % (what, first), first == 1)
        check("e2e %s: no warning on stderr: %s" % (what, err.strip()[-300:]), "warning" not in err)

    # Without the switch: no module range.
    log = os.path.join(work, "e2e-off.kcount")
    rc, out, err = run([kcount, "run", "--output", log, "--", py, script], env=clean_env(**base))
    s = summary(log) if rc == 0 else None
    check("e2e without --torch-modules: only the program's range: %s"
          % (sorted(s) if s else err[-300:]), s is not None and set(s) == {"(no range)", "step"})

    # KCOUNT_TORCH_OPS: PyTorch's per-call suffixes cut; a CPU PyTorch cannot emit op ranges (one warning).
    log = os.path.join(work, "e2e-ops.kcount")
    rc, out, err = run([kcount, "run", "--torch-ops", "--output", log, "--", py, script], env=clean_env(TEST_OP_NAMES="1", **base))
    s = summary(log) if rc == 0 else None
    check("e2e --torch-ops: 'aten::mm, seq = N, op_id = M' recorded as one range aten::mm (4 instances)",
          s is not None and s.get("aten::mm", {}).get("instances") == 4 and not any(", seq" in p for p in s))
    check("e2e --torch-ops on a CPU PyTorch: one warning: %s" % err.strip()[-300:],
          err.count("torch op ranges not enabled") == 1)
    log = os.path.join(work, "e2e-noops.kcount")
    rc, out, err = run([kcount, "run", "--output", log, "--", py, script], env=clean_env(TEST_OP_NAMES="1", **base))
    s = summary(log) if rc == 0 else None
    check("e2e without KCOUNT_TORCH_OPS: op names kept as pushed (4 distinct)",
          s is not None and sum(1 for p in s if p.startswith("aten::mm, seq")) == 4)

    # The switch without kcount: one warning, program unchanged.
    rc, out, err = run([py, script], env=clean_env(PYTHONPATH=os.path.join(build, "share", "kcount", "python"),
                                                  KCOUNT_TORCH_MODULES="1", **base))
    check("switch set without kcount: program runs, one warning: %s" % err.strip(),
          rc == 0 and out.strip() == "done" and "libkcount.so is not injected" in err)


NVTX_LIB = None


def main():
    global NVTX_LIB
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    build = os.path.abspath(sys.argv[1])
    NVTX_LIB = os.path.abspath(sys.argv[2])
    unit_tests()
    work = tempfile.mkdtemp(prefix="kcount-torch-")
    try:
        startup_tests(build, work)
        py, version = torch_python()
        if py is None:
            skip("no PyTorch importable (set TORCH_PYTHON; Debian: apt-get install python3-torch): real-model and end-to-end tests")
        else:
            torch_tests(py, version)
            e2e_tests(build, work, py, version)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
