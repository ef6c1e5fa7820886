"""A small LLM inference server: HTTP in front of a Llama-style model with random weights, a static KV
cache, an eager prefill and a decode step captured once as a CUDA graph and replayed for every token.

    python3 examples/serve.py [--port 8000] [--layers 8] [--hidden 1024] [--warmup 2]
    kcount run --paused -- python3 examples/serve.py --port 8000      # then: kcount ctl PID start / stop
    python3 examples/client.py --port 8000 --requests 20              # tokens per second

POST /generate {"prompt_tokens": [1, 2, ...] | "prompt_len": N, "max_new_tokens": M}
  -> {"tokens": [M token ids], "prompt_len", "new_tokens", "prefill_ms", "decode_ms", "total_ms",
      "tokens_per_s"}; 400 with {"error"} for a bad request. GET /health -> {"ok", "requests", ...}.

A request of M new tokens makes one prefill (the prompt, eagerly; its logits give token 1) and M - 1
decode steps (one token each, the graph replayed once), and samples M times (greedy). NVTX ranges, on
the thread that serves the request:

    request                 one per request
      prefill               the prompt's forward pass
      sample                one per new token: argmax, and the next decode step's token and position
      decode                one per decode step: graph.replay() and nothing else (M - 1 per request)

The --warmup requests at start run inside a range `warmup`. At start the server prints one line: the
port, the process id, the model and, with a graph, its node counts read back from the captured graph
(cuGraphGetNodes on CUDAGraph.raw_cuda_graph(): kernel nodes = kernels per decode step).
--device cpu runs the same model eagerly in float32 (no graph, no NVTX ranges); --eager keeps the decode
step eager on CUDA (one launch per kernel instead of one graph launch).
"""
import argparse
import contextlib
import json
import math
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import torch
import torch.nn.functional as F
from torch import nn

from _common import graph_node_counts


# ------------------------------------------------------------------------------------------------ model
class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype) * self.weight


def rotary_tables(head_dim, max_seq, theta=10000.0):
    """cos and sin of position * frequency, [max_seq, head_dim / 2] each (float32)."""
    inv_freq = 1.0 / theta ** (torch.arange(0, head_dim, 2).float() / head_dim)
    angles = torch.outer(torch.arange(max_seq).float(), inv_freq)
    return angles.cos(), angles.sin()


def apply_rotary(x, cos, sin):  # x [B, T, heads, head_dim]; cos, sin [T, head_dim / 2]
    x1, x2 = x.float().chunk(2, dim=-1)
    c, s = cos[:, None, :], sin[:, None, :]
    return torch.cat([x1 * c - x2 * s, x1 * s + x2 * c], dim=-1).to(x.dtype)


def repeat_kv(x, n):  # [B, S, kv_heads, head_dim] -> [B, S, kv_heads * n, head_dim]
    b, s, h, d = x.shape
    return x[:, :, :, None, :].expand(b, s, h, n, d).reshape(b, s, h * n, d)


class Attention(nn.Module):
    """Grouped-query attention: `heads` query heads share `kv_heads` key/value heads."""

    def __init__(self, hidden, heads, kv_heads):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, hidden // heads
        self.wq = nn.Linear(hidden, heads * self.head_dim, bias=False)
        self.wk = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(heads * self.head_dim, hidden, bias=False)

    def forward(self, x, cos, sin, k_cache, v_cache, pos, mask):
        b, t, _ = x.shape
        q = apply_rotary(self.wq(x).view(b, t, self.heads, self.head_dim), cos, sin)
        k = apply_rotary(self.wk(x).view(b, t, self.kv_heads, self.head_dim), cos, sin)
        v = self.wv(x).view(b, t, self.kv_heads, self.head_dim)
        if isinstance(pos, int):  # prefill of positions pos .. pos + t - 1
            k_cache[:, pos:pos + t] = k
            v_cache[:, pos:pos + t] = v
            keys, values = k_cache[:, :pos + t], v_cache[:, :pos + t]
        else:  # one decode token at the position held by tensor `pos`: static shapes, all max_seq slots
            k_cache.index_copy_(1, pos, k)
            v_cache.index_copy_(1, pos, v)
            keys, values = k_cache, v_cache  # the mask hides the slots after pos
        group = self.heads // self.kv_heads
        q, keys, values = (y.transpose(1, 2) for y in (q, repeat_kv(keys, group), repeat_kv(values, group)))
        scores = q @ keys.transpose(2, 3) / math.sqrt(self.head_dim) + mask
        out = scores.float().softmax(dim=-1).to(q.dtype) @ values
        return self.wo(out.transpose(1, 2).reshape(b, t, -1))


class Block(nn.Module):
    def __init__(self, hidden, heads, kv_heads, ffn):
        super().__init__()
        self.attn_norm, self.mlp_norm = RMSNorm(hidden), RMSNorm(hidden)
        self.attn = Attention(hidden, heads, kv_heads)
        self.w1 = nn.Linear(hidden, ffn, bias=False)  # gate
        self.w3 = nn.Linear(hidden, ffn, bias=False)  # up
        self.w2 = nn.Linear(ffn, hidden, bias=False)  # down

    def forward(self, x, cos, sin, k_cache, v_cache, pos, mask):
        x = x + self.attn(self.attn_norm(x), cos, sin, k_cache, v_cache, pos, mask)
        h = self.mlp_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))  # SwiGLU


class Llama(nn.Module):
    def __init__(self, vocab, hidden, layers, heads, kv_heads, max_seq):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        ffn = 64 * math.ceil(8 * hidden / 3 / 64)
        self.layers = nn.ModuleList(Block(hidden, heads, kv_heads, ffn) for _ in range(layers))
        self.norm = RMSNorm(hidden)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)
        self.max_seq = max_seq

    def forward(self, tokens, pos, k_cache, v_cache):
        """Logits [B, vocab] of the last position. tokens [B, T]; pos: an int (prefill, eager) or an int64
        tensor [1] (one decode token; no host sync, so it can be captured). Writes K and V to the caches."""
        x = self.embed(tokens)
        if isinstance(pos, int):
            t = tokens.shape[1]
            cos, sin = self.cos[pos:pos + t], self.sin[pos:pos + t]
            mask = torch.full((t, pos + t), float("-inf"), device=x.device).triu(pos + 1)
        else:
            cos, sin = self.cos[pos], self.sin[pos]
            mask = torch.zeros(1, self.max_seq, device=x.device).masked_fill(self.positions > pos, float("-inf"))
        for i, layer in enumerate(self.layers):
            x = layer(x, cos, sin, k_cache[i], v_cache[i], pos, mask)
        return self.lm_head(self.norm(x[:, -1]))


def build_model(args, device, dtype):
    """Random weights from --seed (the same on every device); heads of 64, a quarter as many KV heads."""
    torch.manual_seed(args.seed)
    heads = args.hidden // 64
    model = Llama(args.vocab, args.hidden, args.layers, heads, max(1, heads // 4), args.max_seq)
    for p in model.parameters():
        if p.dim() > 1:
            nn.init.normal_(p, std=0.02)
    model = model.to(device=device, dtype=dtype).eval().requires_grad_(False)
    model.cos, model.sin = (t.to(device) for t in rotary_tables(64, args.max_seq))
    model.positions = torch.arange(args.max_seq, device=device)
    return model


# ------------------------------------------------------------------------------------------------ engine
class Engine:
    """The model, its static KV cache [layers, batch, max_seq, kv_heads, head_dim] and the decode graph.
    generate() serves one request at a time (a lock): the cache and the graph's tensors are shared."""

    def __init__(self, model, device, dtype, use_graph):
        self.model, self.device = model, device
        # NVTX push/pop on the calling thread (torch.cuda.nvtx.range); none on the CPU
        self.range = torch.cuda.nvtx.range if device.type == "cuda" else lambda name: contextlib.nullcontext()
        attn = model.layers[0].attn
        shape = (len(model.layers), 1, model.max_seq, attn.kv_heads, attn.head_dim)
        self.k_cache = torch.zeros(shape, device=device, dtype=dtype)
        self.v_cache = torch.zeros(shape, device=device, dtype=dtype)
        self.tok = torch.zeros(1, 1, dtype=torch.long, device=device)  # the decode step's input token
        self.pos = torch.zeros(1, dtype=torch.long, device=device)  # ... and its position
        self.out = torch.zeros(1, model.max_seq, dtype=torch.long, device=device)  # generated tokens
        self.lock = threading.Lock()
        self.graph, self.graph_nodes = None, None
        if use_graph:
            self.capture()

    def decode_step(self):
        return self.model(self.tok, self.pos, self.k_cache, self.v_cache)

    def capture(self):
        """Capture decode_step() once (PyTorch's recipe: warm up on a side stream, then capture)."""
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                self.decode_step()
        torch.cuda.current_stream().wait_stream(side)
        try:
            self.graph, kept = torch.cuda.CUDAGraph(keep_graph=True), True  # PyTorch >= 2.8: keeps the cudaGraph_t
        except TypeError:
            self.graph, kept = torch.cuda.CUDAGraph(), False
        with torch.cuda.graph(self.graph):
            self.graph_logits = self.decode_step()
        if kept:
            self.graph.instantiate()  # now rather than at the first replay
            try:
                self.graph_nodes = graph_node_counts(self.graph.raw_cuda_graph())
            except Exception as exc:  # the count is informative; serving does not depend on it
                print(f"serve.py: warning: cannot read the graph's nodes: {exc}", file=sys.stderr)
        torch.cuda.synchronize()

    def sample(self, logits, i, prompt_len):
        """Greedy token i from logits [1, vocab]; it becomes the next decode step's input at position
        prompt_len + i."""
        token = logits.argmax(dim=-1)
        self.out[:, i] = token
        self.tok[:, 0] = token
        self.pos.fill_(prompt_len + i)

    def sync(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize()

    def generate(self, prompt, new_tokens):
        r = self.range
        with self.lock, torch.no_grad(), r("request"):
            t0 = time.perf_counter()
            with r("prefill"):
                logits = self.model(torch.tensor([prompt], device=self.device), 0, self.k_cache, self.v_cache)
            with r("sample"):
                self.sample(logits, 0, len(prompt))
            self.sync()
            t1 = time.perf_counter()
            for i in range(1, new_tokens):
                with r("decode"):
                    if self.graph is not None:
                        self.graph.replay()
                        logits = self.graph_logits
                    else:
                        logits = self.decode_step()
                with r("sample"):
                    self.sample(logits, i, len(prompt))
            tokens = self.out[0, :new_tokens].tolist()  # waits for the GPU
            t2 = time.perf_counter()
        return {"tokens": tokens, "prompt_len": len(prompt), "new_tokens": new_tokens,
                "prefill_ms": (t1 - t0) * 1e3, "decode_ms": (t2 - t1) * 1e3, "total_ms": (t2 - t0) * 1e3,
                "tokens_per_s": new_tokens / (t2 - t0)}


# ------------------------------------------------------------------------------------------------ HTTP
def parse_request(body, vocab, max_seq):
    """(prompt token ids, new tokens) from a /generate body; ValueError says what is wrong."""
    req = json.loads(body or b"{}")
    req = req if isinstance(req, dict) else {}
    prompt, new = req.get("prompt_tokens"), req.get("max_new_tokens", 16)
    if prompt is None and type(req.get("prompt_len")) is int:
        prompt = [(7 * i + 1) % vocab for i in range(req["prompt_len"])]  # a made-up prompt of that length
    if not isinstance(prompt, list) or not all(type(t) is int and 0 <= t < vocab for t in prompt):
        raise ValueError(f"give prompt_tokens (token ids in [0, {vocab})) or prompt_len (an integer)")
    if type(new) is not int or new < 1 or not prompt or len(prompt) + new > max_seq:
        raise ValueError(f"need max_new_tokens >= 1, a prompt of 1 token or more, and both together <= {max_seq} "
                         f"tokens (--max-seq)")
    return prompt, new


def serve(engine, args):
    served = {"requests": 0}
    count_lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def answer(self, code, obj):
            body = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path == "/health":
                self.answer(200, {"ok": True, "requests": served["requests"], "pid": os.getpid(),
                                  "decode": "graph" if engine.graph is not None else "eager"})
            else:
                self.answer(404, {"error": "GET /health or POST /generate"})

        def do_POST(self):
            if self.path != "/generate":
                return self.answer(404, {"error": "GET /health or POST /generate"})
            try:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                prompt, new = parse_request(body, args.vocab, args.max_seq)
            except ValueError as exc:  # json.JSONDecodeError is a ValueError
                return self.answer(400, {"error": str(exc)})
            try:
                self.answer(200, engine.generate(prompt, new))
            except Exception as exc:  # a failed request is answered, the server goes on
                return self.answer(500, {"error": f"{type(exc).__name__}: {exc}"})
            with count_lock:
                served["requests"] += 1
                done = args.max_requests and served["requests"] == args.max_requests
            if done:
                threading.Thread(target=server.shutdown).start()

    class Server(ThreadingHTTPServer):
        daemon_threads = False  # server_close() waits for the requests being answered

    server = Server(("127.0.0.1", args.port), Handler)
    return server


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (0: any free port)")
    p.add_argument("--device", default="cuda", help="cuda (default) or cpu")
    p.add_argument("--eager", action="store_true", help="on CUDA, run the decode step eagerly (no graph)")
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--hidden", type=int, default=1024, help="a multiple of 64 (heads of 64), at least 128")
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--max-seq", type=int, default=1024, help="KV cache length: prompt + new tokens")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--warmup", type=int, default=2, help="requests run at start (range 'warmup')")
    p.add_argument("--max-requests", type=int, default=0, help="exit after this many requests (0: never)")
    args = p.parse_args()
    if args.hidden % 64 or args.hidden < 128:
        p.error("--hidden must be a multiple of 64, at least 128")
    device = torch.device(args.device)
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    engine = Engine(build_model(args, device, dtype), device, dtype, device.type == "cuda" and not args.eager)
    warm_len = min(32, args.max_seq // 2)
    with engine.range("warmup"):
        for _ in range(args.warmup):
            engine.generate([(7 * i + 1) % args.vocab for i in range(warm_len)], min(8, args.max_seq - warm_len))
    server = serve(engine, args)
    nodes = engine.graph_nodes or {}
    decode = ("decode=eager" if engine.graph is None else
              "decode=graph " + " ".join(f"graph_{k}_nodes={v}" for k, v in sorted(nodes.items())) +
              (" (cuGraphGetNodes)" if nodes else "graph_kernel_nodes=unknown (no CUDAGraph.raw_cuda_graph)"))
    port = server.server_address[1]
    print(f"serve.py: listening on http://127.0.0.1:{port} port={port} pid={os.getpid()} device={device.type} "
          f"layers={args.layers} hidden={args.hidden} vocab={args.vocab} max_seq={args.max_seq} {decode}", flush=True)
    server.serve_forever()
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
