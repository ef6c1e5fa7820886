"""Four threads, each pushing its own range t0..t3 and launching 5,000 kernels on its own stream, while
the main thread synchronizes in a loop."""
import threading

import torch

from common import nvtx

N = 5000
done = []


def work(i):
    s = torch.cuda.Stream()
    x = torch.zeros(16, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(s):
        with nvtx(f"t{i}"):
            for _ in range(N):
                x.add_(1)
    s.synchronize()
    done.append(int(x[0].item()))


torch.cuda.init()
threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
for t in threads:
    t.start()
while any(t.is_alive() for t in threads):
    torch.cuda.synchronize()
for t in threads:
    t.join()
print(f"threads: {sorted(done)}")
assert done == [N] * 4, done
