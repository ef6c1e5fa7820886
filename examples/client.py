"""Client of examples/serve.py: sends requests and prints tokens per second.

    python3 examples/client.py [--port 8000] [--requests 20] [--prompt-len 64] [--new-tokens 32]
                               [--concurrency 1] [--json]

Each request is POST /generate {"prompt_len": P, "max_new_tokens": M}; an answer counts when it is 200
and holds exactly M tokens. Prints one line: requests, tokens, wall time, tokens per second (all tokens
over the wall time of the whole run), and the medians of the request time and of the server's own
decode time per token; --json prints the same as one JSON object. Exit status 1 if any request failed.
"""
import argparse
import concurrent.futures
import json
import statistics
import sys
import time
import urllib.error
import urllib.request


def post(url, body, timeout=120):
    """(HTTP status, JSON answer) of POST url with a JSON body; an HTTP error's answer is returned too."""
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def generate(base, prompt_len, new_tokens):
    """One request; returns the answer, raises RuntimeError unless it is 200 with new_tokens tokens."""
    code, answer = post(base + "/generate", {"prompt_len": prompt_len, "max_new_tokens": new_tokens})
    if code != 200 or len(answer.get("tokens", [])) != new_tokens:
        raise RuntimeError(f"HTTP {code}: {answer}")
    return answer


def bench(base, requests, prompt_len, new_tokens, concurrency=1):
    """Sends `requests` requests from `concurrency` threads; returns a dict of the results."""
    answers, errors = [], []

    def one(_):
        t = time.perf_counter()
        try:
            a = generate(base, prompt_len, new_tokens)
            a["client_ms"] = (time.perf_counter() - t) * 1e3
            answers.append(a)
        except Exception as exc:
            errors.append(str(exc))

    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=concurrency) as pool:
        list(pool.map(one, range(requests)))
    wall = time.perf_counter() - t0
    tokens = sum(len(a["tokens"]) for a in answers)
    per_token = [a["decode_ms"] / (a["new_tokens"] - 1) for a in answers if a["new_tokens"] > 1]
    return {"requests": requests, "ok": len(answers), "failed": len(errors), "errors": errors[:3],
            "tokens": tokens, "seconds": wall, "tokens_per_s": tokens / wall if wall > 0 else 0.0,
            "median_request_ms": statistics.median(a["client_ms"] for a in answers) if answers else None,
            "median_decode_ms_per_token": statistics.median(per_token) if per_token else None}


def main():
    p = argparse.ArgumentParser(description="requests to examples/serve.py; prints tokens per second")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--requests", type=int, default=20)
    p.add_argument("--prompt-len", type=int, default=64)
    p.add_argument("--new-tokens", type=int, default=32)
    p.add_argument("--concurrency", type=int, default=1, help="requests in flight at once (the server runs one)")
    p.add_argument("--json", action="store_true", help="print the results as one JSON object")
    a = p.parse_args()
    r = bench(f"http://{a.host}:{a.port}", a.requests, a.prompt_len, a.new_tokens, a.concurrency)
    if a.json:
        print(json.dumps(r))
    else:
        fmt = lambda v: "-" if v is None else f"{v:.2f}"  # noqa: E731
        print(f"client.py: {r['ok']}/{r['requests']} requests ok, {r['tokens']} tokens "
              f"(prompt {a.prompt_len}, {a.new_tokens} new each) in {r['seconds']:.2f} s: "
              f"{r['tokens_per_s']:.1f} tokens/s; median request {fmt(r['median_request_ms'])} ms, "
              f"median server decode {fmt(r['median_decode_ms_per_token'])} ms/token")
        for e in r["errors"]:
            print(f"client.py: failed: {e}", file=sys.stderr)
    return 1 if r["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
