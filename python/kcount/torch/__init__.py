"""kcount's PyTorch helper: NVTX ranges per nn.Module call and per aten op, with no change to the program.

Loaded at interpreter start by kcount's sitecustomize.py (docs/torch-modules.md). Switches (environment,
read once at start-up; any value other than "" or "0" turns a switch on):

  KCOUNT_TORCH_MODULES    one NVTX range per nn.Module forward call, named by its qualified name
  KCOUNT_TORCH_BACKWARD   also one range per module backward (implies KCOUNT_TORCH_MODULES)
  KCOUNT_TORCH_OPS        PyTorch's own NVTX ranges per aten op (torch.autograd.profiler.emit_nvtx)
  KCOUNT_TORCH_ROOT_NAME  name of the outermost module's range (default: its class name)
  KCOUNT_TORCH_NVTX_LIB   a library exporting nvtxRangePushA/nvtxRangePop, used when PyTorch has no
                          NVTX of its own (CPU-only builds); otherwise PyTorch's NVTX is used
  KCOUNT_TORCH_POLL_MS    how often the helper asks libkcount.so whether it records (default 20 ms): the
                          hooks are registered only while it records or is armed

This module never imports torch. `install_import_hook()` puts a finder first on sys.meta_path that
waits for the program's own `import torch`; once torch's module has finished executing, the hooks are
installed (`kcount.torch.modules.install`) and the finder removes itself.
"""
import os
import sys
import threading

__all__ = ["Options", "options_from_env", "install_import_hook", "install_now"]


class Options:
    """What the helper was asked to do. Plain attributes; see the module docstring for the variables."""

    def __init__(self, modules=False, backward=False, ops=False, root_name=None, nvtx_lib=None, poll_ms=20.0):
        self.poll_s = max(1.0, float(poll_ms)) / 1000.0
        self.modules = bool(modules or backward)
        self.backward = bool(backward)
        self.ops = bool(ops)
        self.root_name = root_name or None
        self.nvtx_lib = nvtx_lib or None

    def any(self):
        return self.modules or self.ops


def _on(env, name):
    return env.get(name, "") not in ("", "0")


def options_from_env(env=None):
    """Options from the KCOUNT_TORCH_* variables of `env` (default os.environ)."""
    env = os.environ if env is None else env
    poll = env.get("KCOUNT_TORCH_POLL_MS", "")
    try:
        poll_ms = float(poll) if poll else 20.0
        if not 1.0 <= poll_ms <= 60000.0:
            raise ValueError
    except ValueError:
        warn("KCOUNT_TORCH_POLL_MS=%r is not a number of milliseconds from 1 to 60000: 20 used" % poll)
        poll_ms = 20.0
    return Options(modules=_on(env, "KCOUNT_TORCH_MODULES"), backward=_on(env, "KCOUNT_TORCH_BACKWARD"),
                   ops=_on(env, "KCOUNT_TORCH_OPS"), root_name=env.get("KCOUNT_TORCH_ROOT_NAME"),
                   nvtx_lib=env.get("KCOUNT_TORCH_NVTX_LIB"), poll_ms=poll_ms)


def warn(message):
    """One line on stderr in the library's format."""
    try:
        sys.stderr.write("[kcount] warning: %s\n" % message)
    except Exception:
        pass


_installed = False
_install_lock = threading.Lock()


def install_now(torch_module, options=None):
    """Installs the hooks into an imported torch. Idempotent; never raises (prints one warning)."""
    global _installed
    options = options if options is not None else options_from_env()
    with _install_lock:
        if _installed or not options.any():
            return
        _installed = True
    try:
        from kcount.torch import modules
        modules.install(torch_module, options)
    except Exception as e:
        warn("torch module ranges not installed: %s: %s" % (type(e).__name__, e))


class _LoaderAfterTorch:
    """Wraps torch's loader: runs it, then installs the hooks, then puts the real loader back."""

    def __init__(self, loader, options):
        self._kcount_loader = loader
        self._kcount_options = options

    def __getattr__(self, name):  # everything else (get_resource_reader, is_package, ...) is torch's
        return getattr(self._kcount_loader, name)

    def create_module(self, spec):
        return self._kcount_loader.create_module(spec)

    def exec_module(self, module):
        real = self._kcount_loader
        try:
            real.exec_module(module)
        finally:
            spec = getattr(module, "__spec__", None)
            if spec is not None and spec.loader is self:
                spec.loader = real
            if getattr(module, "__loader__", None) is self:
                module.__loader__ = real
        install_now(module, self._kcount_options)


class TorchImportFinder:
    """A sys.meta_path finder that only answers for `torch`: it asks the finders after it for torch's
    spec and wraps the loader (`_LoaderAfterTorch`). It removes itself at the first `import torch`.
    Cost for every other import: one string compare."""

    def __init__(self, options):
        self.options = options

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch":
            return None
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass
        spec = None
        for finder in list(sys.meta_path):
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _LoaderAfterTorch(spec.loader, self.options)
        return spec


def install_import_hook(options=None):
    """Installs the hooks now if torch is already imported, else at the program's `import torch`.
    Does nothing if no switch is on."""
    options = options if options is not None else options_from_env()
    if not options.any():
        return
    torch = sys.modules.get("torch")
    if torch is not None:
        install_now(torch, options)
        return
    if not any(isinstance(f, TorchImportFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, TorchImportFinder(options))
