"""The example inference server (examples/serve.py) and its client (examples/client.py) on the CPU.

Starts `serve.py --device cpu --layers 2 --hidden 128` on a free loopback port (--port 0) with a CPU
PyTorch (Debian's python3-torch at /usr/bin/python3, or $TORCH_PYTHON) and checks:
  1. one startup line with the port and pid; GET /health answers before any request;
  2. bad requests are answered 400 (and unknown paths 404) and do not count as requests;
  3. /generate answers are well formed: exactly max_new_tokens token ids in [0, vocab), the prompt length,
     non-negative timings;
  4. the tokens equal greedy decoding recomputed without a KV cache (the prompt and the tokens so far
     through the prefill path at every step, in a separate process): the decode path's cache, rotary
     positions and mask are right; a request repeated after a longer one gives the same tokens (slots
     of the earlier request in the static cache are masked);
  5. examples/client.py sends the last request and reports it (--json);
  6. the server exits 0 by itself after --max-requests requests.
The server is killed in any case when the test ends. Exit status 77 (skipped) without a PyTorch.

    python3 tests/cli/test_example_server.py REPO_ROOT
"""
import json
import os
import re
import select
import subprocess
import sys
import time
import urllib.error
import urllib.request

REPO = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
SERVE = os.path.join(REPO, "examples", "serve.py")
CLIENT = os.path.join(REPO, "examples", "client.py")
VOCAB, MAX_SEQ = 512, 96
MODEL = ["--layers", "2", "--hidden", "128", "--vocab", str(VOCAB), "--max-seq", str(MAX_SEQ), "--seed", "3"]
MAX_REQUESTS = 4
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)
    return cond


def torch_python():
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LD_PRELOAD")}
    for py in [os.environ.get("TORCH_PYTHON"), "/usr/bin/python3", sys.executable]:
        if py and os.path.exists(py):
            r = subprocess.run([py, "-c", "import torch"], capture_output=True, env=env)
            if r.returncode == 0:
                return py
    return None


def http(method, url, body=None):
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    req = urllib.request.Request(url, data=data, method=method)
    try:
        with urllib.request.urlopen(req, timeout=300) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def startup_line(proc, timeout=300):
    deadline, buf = time.time() + timeout, b""
    while time.time() < deadline and b"\n" not in buf:
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.time()))
        chunk = os.read(proc.stdout.fileno(), 4096) if ready else b""
        if not chunk:
            break
        buf += chunk
    return buf.decode(errors="replace").split("\n")[0]


REFERENCE = r"""
import argparse, json, sys
import torch
sys.path.insert(0, sys.argv[1])
import serve
args = argparse.Namespace(**json.loads(sys.argv[2]))
model = serve.build_model(args, torch.device("cpu"), torch.float32)
attn = model.layers[0].attn
out = []
for prompt, new in json.loads(sys.argv[3]):
    seq = list(prompt)
    with torch.no_grad():
        for _ in range(new):  # no cache reuse: every step runs the whole sequence through the prefill path
            shape = (len(model.layers), 1, args.max_seq, attn.kv_heads, attn.head_dim)
            k, v = torch.zeros(shape), torch.zeros(shape)
            seq.append(int(model(torch.tensor([seq]), 0, k, v).argmax(-1)))
    out.append(seq[len(prompt):])
print(json.dumps(out))
"""


def main():
    py = torch_python()
    if py is None:
        print("SKIP: no python with torch (install python3-torch or set TORCH_PYTHON)")
        return 77
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LD_PRELOAD")}
    cmd = [py, SERVE, "--device", "cpu", *MODEL, "--port", "0", "--warmup", "1",
           "--max-requests", str(MAX_REQUESTS)]
    print("+ " + " ".join(cmd), flush=True)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0, env=env)
    try:
        run_checks(py, proc, env)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        err = proc.stderr.read().decode(errors="replace")
        if err.strip():
            print("server stderr:\n" + err[-2000:])
    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


def run_checks(py, proc, env):
    line = startup_line(proc)
    print("   " + line)
    m = re.search(r"^serve\.py: listening on http://127\.0\.0\.1:(\d+) port=\1 pid=(\d+) device=cpu .*decode=eager$", line)
    if not check(m is not None, "one startup line with port, pid, device=cpu, decode=eager"):
        return
    base = f"http://127.0.0.1:{m.group(1)}"
    check(int(m.group(2)) == proc.pid, f"startup line's pid {m.group(2)} is the server's ({proc.pid})")
    code, health = http("GET", base + "/health")
    check(code == 200 and health.get("ok") is True and health.get("requests") == 0 and health.get("decode") == "eager",
          f"GET /health before any request: {code} {health}")

    bad = [({"prompt_len": 80, "max_new_tokens": 17}, "prompt + new tokens over --max-seq"),
           ({"prompt_tokens": [1, VOCAB], "max_new_tokens": 2}, "a token id outside the vocabulary"),
           ({"prompt_tokens": [], "max_new_tokens": 2}, "an empty prompt"),
           ({"prompt_len": 4, "max_new_tokens": 0}, "max_new_tokens 0"),
           ({"max_new_tokens": 3}, "no prompt"),
           (b"{not json", "a body that is not JSON")]
    for body, what in bad:
        code, answer = http("POST", base + "/generate", body)
        check(code == 400 and isinstance(answer.get("error"), str) and answer["error"],
              f"400 with an error for {what}: {code} {answer}")
    code, _ = http("POST", base + "/nowhere", {})
    check(code == 404, f"POST /nowhere: 404 (got {code})")

    a_prompt, b_len = [5, 9, 2, 7, 300], 40
    requests = [(a_prompt, 6), ([(7 * i + 1) % VOCAB for i in range(b_len)], 20), (a_prompt, 6)]
    answers = []
    for i, (prompt, new) in enumerate(requests):
        body = {"prompt_tokens": prompt, "max_new_tokens": new} if i != 1 else {"prompt_len": b_len,
                                                                               "max_new_tokens": new}
        code, ans = http("POST", base + "/generate", body)
        answers.append(ans)
        toks = ans.get("tokens")
        check(code == 200 and isinstance(toks, list) and len(toks) == new
              and all(type(t) is int and 0 <= t < VOCAB for t in toks),
              f"request {i + 1}: 200 with {new} token ids in [0, {VOCAB}): {code} {toks}")
        check(ans.get("prompt_len") == len(prompt) and ans.get("new_tokens") == new
              and all(isinstance(ans.get(k), (int, float)) and ans[k] >= 0
                      for k in ("prefill_ms", "decode_ms", "total_ms", "tokens_per_s")),
              f"request {i + 1}: prompt_len, new_tokens and timings: {ans}")
    check(answers[0].get("tokens") == answers[2].get("tokens"),
          f"the same request after a longer one gives the same tokens: {answers[0].get('tokens')} vs "
          f"{answers[2].get('tokens')}")
    code, health = http("GET", base + "/health")
    check(code == 200 and health.get("requests") == 3, f"GET /health counts 3 requests (bad ones not): {health}")

    ref = subprocess.run([py, "-c", REFERENCE, os.path.dirname(SERVE),
                          json.dumps({"vocab": VOCAB, "hidden": 128, "layers": 2, "max_seq": MAX_SEQ, "seed": 3}),
                          json.dumps(requests[:2])], capture_output=True, text=True, env=env, timeout=600)
    want = json.loads(ref.stdout) if ref.returncode == 0 else None
    check(want is not None and [a.get("tokens") for a in answers[:2]] == want,
          f"tokens equal greedy decoding without a KV cache: server {[a.get('tokens') for a in answers[:2]]}, "
          f"recomputed {want}{'' if ref.returncode == 0 else ': ' + ref.stderr[-800:]}")

    port = base.rsplit(":", 1)[1]
    r = subprocess.run([py, CLIENT, "--port", port, "--requests", "1", "--prompt-len", "8", "--new-tokens", "5",
                        "--json"], capture_output=True, text=True, env=env, timeout=600)
    try:
        rep = json.loads(r.stdout)
    except ValueError:
        rep = {}
    check(r.returncode == 0 and rep.get("ok") == 1 and rep.get("failed") == 0 and rep.get("tokens") == 5
          and rep.get("tokens_per_s", 0) > 0, f"client.py --requests 1 --new-tokens 5 --json: exit {r.returncode}, "
          f"{r.stdout.strip()} {r.stderr.strip()[-300:]}")
    try:
        rc = proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        rc = None
    check(rc == 0, f"the server exits 0 after --max-requests {MAX_REQUESTS} (exit status {rc})")


if __name__ == "__main__":
    sys.exit(main())
