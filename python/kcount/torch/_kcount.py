"""Reaching libkcount.so from Python: its recording state, and an NVTX range backend.

`kcount_recording()` (inject/preload.cpp) returns 1 while the library records, 2 while it is armed (it
starts recording at the next NVTX range or CUDA initialization with KCOUNT_START=on, or a capture range
is armed), 0 otherwise (paused, or the log already closed). It is found:

1. in the process's global symbol scope (the library was preloaded: `kcount run`, LD_PRELOAD);
2. else through `dlopen(RTLD_NOLOAD)` of the library named by CUDA_INJECTION64_PATH or
   NVTX_INJECTION64_PATH when that file's name contains "kcount" (`kcount run --inject cuda`: CUDA or
   NVTX loads it privately, and only once CUDA initializes, so this is retried at each call until found).

`RecordingState.mode` is "kcount" once the function is found, "pending" while the injection variables
name kcount but it is not loaded yet (answers: not recording), "absent" when kcount is not injected at
all (the helper then installs nothing).
"""
import ctypes
import os


def _injected_path(env):
    for var in ("CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH"):
        p = env.get(var, "")
        if p and "kcount" in os.path.basename(p):
            return p
    return None


class RecordingState:
    """Callable: `state()` -> bool, True while libkcount.so records or is armed (ranges pushed now are
    recorded). Cheap once found (one ctypes call)."""

    def __init__(self, env=None):
        env = os.environ if env is None else env
        self._fn = None
        self._path = _injected_path(env)
        self._fn = self._global()
        if self._fn is None and self._path is not None:
            self._fn = self._noload()
        self.mode = "kcount" if self._fn is not None else ("pending" if self._path is not None else "absent")

    @staticmethod
    def _bind(lib):
        try:
            fn = lib.kcount_recording
        except AttributeError:
            return None
        fn.restype = ctypes.c_int
        fn.argtypes = []
        return fn

    def _global(self):
        try:
            return self._bind(ctypes.CDLL(None))
        except OSError:
            return None

    def _noload(self):
        mode = getattr(os, "RTLD_NOLOAD", 4) | getattr(os, "RTLD_LAZY", 1)
        try:
            return self._bind(ctypes.CDLL(self._path, mode=mode))
        except OSError:
            return None

    def wanted(self):
        """True while the helper's hooks should stay registered: kcount records or is armed
        (`kcount_recording()` != 0), or is named by the injection variables but not loaded yet (then each
        root call asks again, and pushes nothing until it is found)."""
        if self._fn is None and self._path is not None:
            return self.mode == "pending" and (self() or self._fn is None)
        return self()

    def __call__(self):
        fn = self._fn
        if fn is None:
            if self._path is None:
                return False
            fn = self._fn = self._noload()
            if fn is None:
                return False
            self.mode = "kcount"
        return fn() != 0


def nvtx_backend(torch, nvtx_lib=None):
    """(push, pop, description): push(name: str) opens an NVTX push range on the calling thread, pop()
    closes the innermost. PyTorch's own NVTX (torch._C._nvtx, the copy kcount is the injection tool of)
    when PyTorch has it; else `nvtx_lib` (a library exporting nvtxRangePushA/nvtxRangePop); else None."""
    nv = getattr(getattr(torch, "_C", None), "_nvtx", None)
    if nv is not None and hasattr(nv, "rangePushA") and hasattr(nv, "rangePop"):
        return nv.rangePushA, nv.rangePop, "torch._C._nvtx"
    if nvtx_lib:
        lib = ctypes.CDLL(nvtx_lib)
        c_push, c_pop = lib.nvtxRangePushA, lib.nvtxRangePop
        c_push.argtypes, c_push.restype = [ctypes.c_char_p], ctypes.c_int
        c_pop.argtypes, c_pop.restype = [], ctypes.c_int

        def push(name):
            c_push(name.encode("utf-8", "replace"))

        def pop():
            c_pop()

        return push, pop, nvtx_lib
    return None
