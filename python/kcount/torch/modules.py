"""One NVTX range per nn.Module call, named by the module's qualified name (docs/torch-modules.md).

PyTorch's global module hooks call `ModuleRanges.pre_forward` before and `post_forward` after every
module's forward. Per thread, a stack holds the modules being called:

- A module called with the thread's stack empty is a **root**: its range is named by its class name
  (or KCOUNT_TORCH_ROOT_NAME); names below it are relative to it, as `root.named_modules()` gives
  them (`model.layers.3.mlp.up_proj`). A `torch.compile`d module (OptimizedModule) is named after the
  module it wraps, and names below it are relative to that module.
- A module called while its caller is on the stack is looked up among the caller's direct children
  (`_modules`), so a module shared between parents is named by the parent that called it, and a
  replaced child is found under its new name. The answer is cached per (parent, child) and checked
  against `parent._modules` at every use. A module that is not a direct child is looked up in the
  root's tree (first name in `named_modules()` order); one that is not in the root's tree at all is
  named `<caller>.(ClassName)`. A module called again directly inside its own forward (and the module
  a compiled wrapper wraps, when PyTorch calls it eagerly) gets no second range.
- Whether libkcount.so records is asked once per root call: a root called while kcount does not
  record pushes no range, and neither do the modules it calls.
- The hooks are registered only while kcount records or is armed (`HookSwitch`): a thread polls
  `kcount_recording()` every KCOUNT_TORCH_POLL_MS (default 20 ms) and registers the hooks when a window
  opens, removes them when it closes (once no range they opened is still open). While they are not
  registered, PyTorch calls modules on its fast path: the helper costs nothing per module call. A
  forward already running when the hooks are registered gets no module ranges (a root candidate is
  checked against the Python stack for an enclosing module call); ranges start at the next outermost
  module call.
- Inside code that torch.compile traces, the hooks return at once (`torch.compiler.is_compiling()`),
  so they add nothing to the graph and cause no graph break.

Backward (KCOUNT_TORCH_BACKWARD): global full backward pre/post hooks open and close a range named
`<name> [backward]` on the thread where autograd runs them (see the docs for the limits).
"""
import os
import sys
import threading
import weakref

_DATA_PARALLEL = ("DistributedDataParallel", "DataParallel")
_WRAPPERS = ("OptimizedModule",) + _DATA_PARALLEL
_CACHE_LIMIT = 1 << 16  # (parent, child) names cached; cleared when full (ids of dead modules)


def _never():
    return False


class ModuleRanges:
    """The hooks' state. `push(name)`/`pop()`: NVTX push/pop on the calling thread. `recording()`:
    True while kcount records. `is_compiling()`: True while torch.compile traces. `on_root()`: called
    at each root call while recording (enables op ranges on that thread). Thread-safe: per-thread
    stacks; the shared name cache is a dict written with single assignments (GIL)."""

    def __init__(self, push, pop, recording, is_compiling=_never, root_name=None, on_root=None, call_codes=()):
        self.push = push
        self.pop = pop
        self.recording = recording
        self.is_compiling = is_compiling
        self.root_name = root_name
        self.on_root = on_root
        self.call_codes = frozenset(call_codes)  # code objects of Module._call_impl (enclosing-call check)
        self.switch_lock = threading.Lock()  # root decisions vs. HookSwitch registering/removing the hooks
        self.registered = True   # the hooks are registered (HookSwitch keeps it; True without a switch)
        self.open_roots = 0      # roots whose range is open, all threads (the switch removes hooks at 0)
        self.generation = 0      # bumped at each registration: stacks of an older one are stale
        self.tls = threading.local()
        self.names = {}                       # (id(parent), id(child)) -> (attr, parent name, name)
        self.trees = weakref.WeakKeyDictionary()  # root module -> {id(module): qualified name}
        self.last_name = {}                   # id(module) -> name of its last forward range (backward)
        self.track_last = False

    # -- names ------------------------------------------------------------------------------------
    def root_label(self, module):
        """(range name, module whose tree names the children) of a root call. Wrappers are seen
        through: torch.compile's OptimizedModule (`_orig_mod`), DistributedDataParallel and
        DataParallel (`module`), repeatedly."""
        base = module
        for _ in range(4):
            inner = getattr(base, "_orig_mod", None)
            if inner is None and type(base).__name__ in _DATA_PARALLEL:
                inner = getattr(base, "module", None)
            if inner is None or not hasattr(inner, "_modules"):
                break
            base = inner
        return (self.root_name or type(base).__name__), base

    def child_name(self, parent, pname, module, root):
        """Qualified name of `module` called by `parent` (named `pname`, "" for the root)."""
        key = (id(parent), id(module))
        hit = self.names.get(key)
        if hit is not None and hit[1] == pname and parent._modules.get(hit[0]) is module:
            return hit[2]
        for attr, child in parent._modules.items():
            if child is module:
                name = pname + "." + attr if pname else attr
                if len(self.names) >= _CACHE_LIMIT:
                    self.names.clear()
                self.names[key] = (attr, pname, name)
                return name
        return self.tree_name(root, module, pname)

    def tree_name(self, root, module, pname):
        """Name of a module that is not a direct child of its caller: its name in the root's tree."""
        tree = self.trees.get(root)
        name = tree.get(id(module)) if tree is not None else None
        if name is None or not _resolves(root, name, module):
            tree = {}
            for n, m in root.named_modules():
                tree.setdefault(id(m), n)
            self.trees[root] = tree
            name = tree.get(id(module))
        if name:  # "" is the root itself, called from inside its own tree
            return name
        cls = "(" + type(module).__name__ + ")"
        return pname + "." + cls if pname else cls

    # -- switching ---------------------------------------------------------------------------------
    def begin_generation(self):
        """Called (under switch_lock) when the hooks are registered again: per-thread stacks left from
        the last registration hold only calls that pushed nothing, and are dropped at their next use."""
        self.generation += 1

    def thread_state(self):
        """The calling thread's (forward stack, backward stack), reset if left from an older registration."""
        tls = self.tls
        if getattr(tls, "generation", -1) != self.generation:
            tls.generation = self.generation
            tls.stack = []
            tls.bstack = []
            tls.verified = not self.call_codes
        return tls.stack, tls.bstack

    def open_root(self, check_enclosing):
        """Decides whether a root call opens ranges: kcount records, the hooks are registered, and (first
        roots of a thread after registration) no module call that began before the registration encloses
        it. Counts the opened root."""
        if check_enclosing and not self.tls.verified:
            if _module_calls_on_stack(self.call_codes) > 1:
                return False  # inside a forward that began without hooks: its children are not roots
            self.tls.verified = True
        with self.switch_lock:
            if not self.registered or not self.recording():
                return False
            self.open_roots += 1
            return True

    def close_root(self):
        with self.switch_lock:
            self.open_roots -= 1

    # -- forward ----------------------------------------------------------------------------------
    # Frames on a thread's stack: (module called, module naming its children, its qualified name,
    # active: kcount was recording at the root call, pushed: this call opened an NVTX range).
    def pre_forward(self, module, args):
        if self.is_compiling():
            return None
        stack = self.thread_state()[0]
        if not stack:
            if not self.open_root(True):
                stack.append((module, None, None, False, False))
                return None
            if self.on_root is not None:
                self.on_root()
            label, base = self.root_label(module)
            self.push(label)
            stack.append((module, base, "", True, True))
            if self.track_last:
                self.remember(module, label)
            return None
        top = stack[-1]
        if not top[3]:
            stack.append((module, None, None, False, False))
            return None
        if module is top[1] or (top[2] == "" and type(module).__name__ in _WRAPPERS
                                and self.root_label(module)[1] is top[1]):
            # Called again directly inside its own forward (re-entrant), or a wrapper between the root
            # and the module it wraps (DDP -> OptimizedModule -> model): no second range; the
            # children keep their names.
            stack.append((module, top[1], top[2], True, False))
            return None
        name = self.child_name(top[1], top[2], module, stack[0][1])
        self.push(name)
        stack.append((module, module, name, True, True))
        if self.track_last:
            self.remember(module, name)
        return None

    def post_forward(self, module, args, output):
        if self.is_compiling():
            return None
        stack = self.thread_state()[0]
        if not stack:
            return None
        if stack[-1][0] is module:
            if stack.pop()[4]:
                self.pop()
                if not stack:
                    self.close_root()
            return None
        # The module is lower in the stack: calls above it ended without their post hook (an exception
        # on a PyTorch without always_call). Close them with it.
        for i in range(len(stack) - 1, -1, -1):
            if stack[i][0] is module:
                for frame in reversed(stack[i:]):
                    if frame[4]:
                        self.pop()
                root_closed = i == 0 and stack[0][4]
                del stack[i:]
                if root_closed:
                    self.close_root()
                return None
        return None  # its pre hook ran before the hooks were installed

    # -- backward ---------------------------------------------------------------------------------
    def remember(self, module, name):
        """Keeps the name of the module's forward range for its backward range (bounded)."""
        if len(self.last_name) >= _CACHE_LIMIT:
            self.last_name.clear()
        self.last_name[id(module)] = name

    def pre_backward(self, module, grad_output):
        if self.is_compiling():
            return None
        stack = self.thread_state()[1]
        if not stack and not self.open_root(False):
            stack.append((module, False))
            return None
        if stack and not stack[-1][1]:
            stack.append((module, False))
            return None
        name = self.last_name.get(id(module)) or type(module).__name__
        self.push(name + " [backward]")
        stack.append((module, True))
        return None

    def post_backward(self, module, grad_input, grad_output):
        if self.is_compiling():
            return None
        stack = self.thread_state()[1]
        if not stack:
            return None
        for i in range(len(stack) - 1, -1, -1):
            if stack[i][0] is module:
                for frame in reversed(stack[i:]):
                    if frame[1]:
                        self.pop()
                root_closed = i == 0 and stack[0][1]
                del stack[i:]
                if root_closed:
                    self.close_root()
                return None
        return None


def _module_calls_on_stack(codes, limit=512):
    """Number of frames on the calling thread's Python stack running one of `codes` (Module._call_impl):
    1 inside a root call's hook, more inside a call nested in another module's forward."""
    n = 0
    f = sys._getframe(1)
    while f is not None and limit > 0:
        if f.f_code in codes:
            n += 1
        f = f.f_back
        limit -= 1
    return n


class HookSwitch:
    """Registers the global hooks while `wanted()` (kcount records or is armed) and removes them when it
    is not, once no range the hooks opened is still open (`ranges.open_roots == 0`). `register()`
    registers them and returns their handles. `sync()` makes one decision (thread-safe);
    `start(interval_s)` runs it on a daemon thread every interval (and again in a forked child)."""

    def __init__(self, ranges, register, wanted):
        self.ranges = ranges
        self.register = register
        self.wanted = wanted
        self.handles = []
        self.interval_s = None
        self.stopped = threading.Event()
        self.thread = None
        self.changes = 0  # registrations + removals, for tests and the benchmark
        ranges.registered = False

    def sync(self):
        """Registers or removes the hooks as `wanted()` says now. Returns True if they are registered."""
        r = self.ranges
        with r.switch_lock:
            want = bool(self.wanted())
            if want and not self.handles:
                r.begin_generation()
                self.handles = self.register()
                r.registered = True
                self.changes += 1
            elif not want and self.handles and r.open_roots <= 0:
                self._remove_locked()
                r.open_roots = 0
                self.changes += 1
            return bool(self.handles)

    def _remove_locked(self):
        self.ranges.registered = False
        for h in self.handles:
            try:
                h.remove()
            except Exception:
                pass
        self.handles = []

    def _loop(self):
        while not self.stopped.wait(self.interval_s):
            try:
                self.sync()
            except Exception:
                pass

    def start(self, interval_s):
        self.interval_s = interval_s
        self.stopped.clear()
        self.thread = threading.Thread(target=self._loop, name="kcount-torch-hooks", daemon=True)
        self.thread.start()

    def after_fork_in_child(self):
        self.ranges.switch_lock = threading.Lock()
        if self.interval_s is not None and not self.stopped.is_set():
            self.start(self.interval_s)

    def stop(self):
        """Stops the thread and removes the hooks."""
        self.stopped.set()
        t = self.thread
        if t is not None and t is not threading.current_thread():
            t.join(timeout=1.0)
        with self.ranges.switch_lock:
            self._remove_locked()


def _resolves(root, name, module):
    """True if `name` (dotted) still leads from `root` to `module` through `_modules`."""
    m = root
    if name:
        for part in name.split("."):
            m = m._modules.get(part) if hasattr(m, "_modules") else None
            if m is None:
                return False
    return m is module


def _is_compiling_fn(torch):
    for owner, attr in (("compiler", "is_compiling"), ("_dynamo", "is_compiling")):
        fn = getattr(getattr(torch, owner, None), attr, None)
        if fn is not None:
            return fn
    return _never


class _Installed:
    """What install() set up (for remove())."""
    ranges = None
    switch = None
    recording = None
    backend = None


installed = _Installed()


def _register(fn, hook, **kwargs):
    try:
        return fn(hook, **kwargs)
    except TypeError:  # PyTorch before 2.1: no always_call
        return fn(hook)


def install(torch, options, recording=None, backend=None):
    """Registers the global module hooks (and op ranges) per `options` into the imported `torch`.
    `recording` and `backend` replace kcount's recording state and the NVTX backend (tests).
    Returns the ModuleRanges, or None when nothing was installed (one warning says why)."""
    from kcount.torch import _kcount, warn
    if recording is None:
        recording = _kcount.RecordingState()
        if recording.mode == "absent":
            warn("KCOUNT_TORCH_MODULES/KCOUNT_TORCH_OPS are set but libkcount.so is not injected in this "
                 "process (no LD_PRELOAD, no CUDA_INJECTION64_PATH naming it): no torch ranges")
            return None
    if backend is None:
        backend = _kcount.nvtx_backend(torch, options.nvtx_lib)
        if backend is None:
            warn("this PyTorch has no NVTX (torch._C._nvtx) and KCOUNT_TORCH_NVTX_LIB is not set: no "
                 "torch ranges")
            return None
    push, pop = backend[0], backend[1]
    on_root = None
    if options.ops:
        from kcount.torch import ops
        on_root = ops.ThreadOpRanges(torch).enable_on_this_thread
    call_impl = getattr(getattr(getattr(torch, "nn", None), "Module", None), "_call_impl", None)
    codes = (call_impl.__code__,) if hasattr(call_impl, "__code__") else ()
    ranges = ModuleRanges(push, pop, recording, _is_compiling_fn(torch), options.root_name, on_root, codes)
    hooks = torch.nn.modules.module
    pre_bwd = getattr(hooks, "register_module_full_backward_pre_hook", None)
    post_bwd = getattr(hooks, "register_module_full_backward_hook", None)
    backward = options.backward and pre_bwd is not None and post_bwd is not None
    if options.backward and not backward:
        warn("this PyTorch has no global full backward pre-hook: no backward module ranges")
    ranges.track_last = backward
    ops_pre = _ops_only_pre(ranges) if options.ops and not options.modules else None

    def register():
        handles = []
        if options.modules or options.ops:
            handles.append(hooks.register_module_forward_pre_hook(ops_pre or ranges.pre_forward))
            if options.modules:
                handles.append(_register(hooks.register_module_forward_hook, ranges.post_forward, always_call=True))
        if backward:
            handles.append(pre_bwd(ranges.pre_backward))
            handles.append(post_bwd(ranges.post_backward))
        return handles

    switch = HookSwitch(ranges, register, getattr(recording, "wanted", recording))
    switch.sync()
    switch.start(options.poll_s)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=switch.after_fork_in_child)
    installed.ranges, installed.switch, installed.recording, installed.backend = ranges, switch, recording, backend
    return ranges


def _ops_only_pre(ranges):
    """Op ranges without module ranges: a pre hook that only enables op ranges on a thread whose
    outermost module call happens while kcount records (once per thread)."""
    tls = threading.local()

    def pre(module, args):
        if ranges.is_compiling() or getattr(tls, "done", False):
            return None
        if ranges.recording():
            tls.done = True
            ranges.on_root()
        return None

    return pre


def remove():
    """Stops the hook switch and removes the hooks install() registered (op ranges stay enabled on
    threads that enabled them)."""
    if installed.switch is not None:
        installed.switch.stop()
    installed.switch = None
    installed.ranges = None
