"""Op ranges (KCOUNT_TORCH_OPS): PyTorch's own NVTX emission, torch.autograd.profiler.emit_nvtx.

PyTorch's NVTX profiler pushes one range per RecordFunction (every aten op, and record_function
blocks) on the threads where it is enabled: the thread that entered it and the autograd threads that
run that thread's backward (PyTorch propagates the profiler state to them). Its range names are
"aten::addmm, seq = N, op_id = M" with numbers unique per call; libkcount.so, when KCOUNT_TORCH_OPS is
set, cuts a range name at ", seq = " or ", op_id = ", so the log has one range per op name.

kcount enables it on a thread at that thread's first outermost nn.Module call made while kcount
records, not at import: enabling it earlier would make op ranges activate kcount in processes that
never use CUDA (torch.compile's worker processes) and write logs for them. emit_nvtx's __enter__
calls torch.cuda.synchronize(), which would initialize CUDA; that call is skipped (kcount enables it
inside a running program, where a synchronize is not wanted).
"""
import threading


class ThreadOpRanges:
    """Enables emit_nvtx once per thread. `enable_on_this_thread()` never raises (one warning)."""

    def __init__(self, torch):
        self.torch = torch
        self.tls = threading.local()
        self.lock = threading.Lock()
        self.warned = False
        self.contexts = []  # kept alive: emit_nvtx's state lives until the thread's profiler is disabled

    def enable_on_this_thread(self):
        if getattr(self.tls, "done", False):
            return
        self.tls.done = True
        torch = self.torch
        try:
            ctx = torch.autograd.profiler.emit_nvtx(record_shapes=False)
            cuda = torch.cuda
            sync = cuda.synchronize
            with self.lock:  # synchronize is replaced for this call only
                cuda.synchronize = lambda *a, **k: None
                try:
                    ctx.__enter__()
                finally:
                    cuda.synchronize = sync
                self.contexts.append(ctx)
        except Exception as e:
            with self.lock:
                if self.warned:
                    return
                self.warned = True
            from kcount.torch import warn
            warn("torch op ranges not enabled: %s: %s" % (type(e).__name__, e))
