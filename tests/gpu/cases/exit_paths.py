"""50 kernels in range `work`, then the process ends by: _exit (os._exit(0)), sigterm (SIGTERM to itself),
finalizer (normal exit; an atexit function launches 5 more kernels in `work` during interpreter
shutdown), or sigkill (prints READY and sleeps; the parent sends it SIGKILL, or SIGHUP, 2 s later)."""
import atexit
import os
import signal
import sys
import time

import torch

from common import nvtx

how = sys.argv[1]
x = torch.zeros(16, device="cuda")
torch.cuda.synchronize()
with nvtx("work"):
    for _ in range(50):
        x.add_(1)
if how == "_exit":
    os._exit(0)
elif how == "sigterm":
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(5)
elif how == "finalizer":
    def finalizer():
        with nvtx("work"):
            for _ in range(5):
                x.add_(1)
    atexit.register(finalizer)
elif how == "sigkill":
    torch.cuda.synchronize()
    print(f"READY {os.getpid()}", flush=True)
    time.sleep(30)
