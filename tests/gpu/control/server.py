"""A small HTTP inference service for tests/gpu/check_control.py: a PyTorch MLP behind Python's standard
http.server (one request at a time, on the serving thread).

POST /infer  -> runs the model on a [64, 1024] fp16 input filled with the request's value and answers
                {"ok": true, "sum": S} (the .item() makes each request wait for its GPU work)
POST /quit   -> answers, then the server shuts down and the process exits 0
Prints "PORT N" on stdout once it listens (port 0 picks a free port).

    python3 server.py [--port 0]
"""
import argparse
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import torch
from torch import nn


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, default=0)
    args = p.parse_args()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024)).cuda().half().eval()

    def infer(value):
        with torch.inference_mode():
            x = torch.full((64, 1024), value, device="cuda", dtype=torch.float16)
            return model(x).float().sum().item()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def _answer(self, code, obj):
            body = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            n = int(self.headers.get("Content-Length", "0"))
            req = json.loads(self.rfile.read(n) or b"{}")
            if self.path == "/infer":
                self._answer(200, {"ok": True, "sum": infer(float(req.get("value", 0.01)))})
            elif self.path == "/quit":
                self._answer(200, {"ok": True})
                threading.Thread(target=server.shutdown).start()
            else:
                self._answer(404, {"ok": False})

    server = HTTPServer(("127.0.0.1", args.port), Handler)
    print("PORT", server.server_address[1], flush=True)
    server.serve_forever()
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
