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
- Inside code that torch.compile traces, the hooks return at once (`torch.compiler.is_compiling()`),
  so they add nothing to the graph and cause no graph break.

Backward (KCOUNT_TORCH_BACKWARD): global full backward pre/post hooks open and close a range named
`<name> [backward]` on the thread where autograd runs them (see the docs for the limits).
"""
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

    def __init__(self, push, pop, recording, is_compiling=_never, root_name=None, on_root=None):
        self.push = push
        self.pop = pop
        self.recording = recording
        self.is_compiling = is_compiling
        self.root_name = root_name
        self.on_root = on_root
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

    # -- forward ----------------------------------------------------------------------------------
    # Frames on a thread's stack: (module called, module naming its children, its qualified name,
    # active: kcount was recording at the root call, pushed: this call opened an NVTX range).
    def pre_forward(self, module, args):
        if self.is_compiling():
            return None
        try:
            stack = self.tls.stack
        except AttributeError:
            stack = self.tls.stack = []
        if not stack:
            if not self.recording():
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
        stack = getattr(self.tls, "stack", None)
        if not stack:
            return None
        if stack[-1][0] is module:
            if stack.pop()[4]:
                self.pop()
            return None
        # The module is lower in the stack: calls above it ended without their post hook (an exception
        # on a PyTorch without always_call). Close them with it.
        for i in range(len(stack) - 1, -1, -1):
            if stack[i][0] is module:
                for frame in reversed(stack[i:]):
                    if frame[4]:
                        self.pop()
                del stack[i:]
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
        try:
            stack = self.tls.bstack
        except AttributeError:
            stack = self.tls.bstack = []
        if not stack and not self.recording():
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
        stack = getattr(self.tls, "bstack", None)
        if not stack:
            return None
        for i in range(len(stack) - 1, -1, -1):
            if stack[i][0] is module:
                for frame in reversed(stack[i:]):
                    if frame[1]:
                        self.pop()
                del stack[i:]
                return None
        return None


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
    """What install() registered (handles, for remove())."""
    ranges = None
    handles = []
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
    from kcount_torch import _kcount, warn
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
        from kcount_torch import ops
        on_root = ops.ThreadOpRanges(torch).enable_on_this_thread
    ranges = ModuleRanges(push, pop, recording, _is_compiling_fn(torch), options.root_name, on_root)
    hooks = torch.nn.modules.module
    handles = []
    if options.modules or options.ops:
        handles.append(hooks.register_module_forward_pre_hook(ranges.pre_forward if options.modules
                                                              else _ops_only_pre(ranges)))
        if options.modules:
            handles.append(_register(hooks.register_module_forward_hook, ranges.post_forward, always_call=True))
    if options.backward:
        pre = getattr(hooks, "register_module_full_backward_pre_hook", None)
        post = getattr(hooks, "register_module_full_backward_hook", None)
        if pre is None or post is None:
            warn("this PyTorch has no global full backward pre-hook: no backward module ranges")
        else:
            ranges.track_last = True
            handles.append(pre(ranges.pre_backward))
            handles.append(post(ranges.post_backward))
    installed.ranges, installed.handles, installed.recording, installed.backend = ranges, handles, recording, backend
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
    """Removes the hooks install() registered (op ranges stay enabled on threads that enabled them)."""
    for h in installed.handles:
        try:
            h.remove()
        except Exception:
            pass
    installed.handles = []
    installed.ranges = None
