#!/usr/bin/env python3
"""Capture windows and the control socket, end to end, without a GPU: libkcount.so preloaded into an
NVTX-only program (tests/programs/nvtx_server.cpp) with KCOUNT_CONTROL=on, driven by `kcount ctl`.
Also: KCOUNT_CAPTURE_RANGE/SKIP/COUNT, KCOUNT_CAPTURE_DURATION, summary mode (ctl flush appends a
snapshot; snapshots keep to start + k x KCOUNT_INTERVAL), kcount ctl's errors and exit codes, another
user refused (needs root to create the user; skipped with a message otherwise), log rotation.
Usage: test_control.py BUILD_DIR"""
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from checks import check, exit_status

BUILD = os.path.abspath(sys.argv[1])
KCOUNT = os.path.join(BUILD, "bin", "kcount")
LIB = os.path.join(BUILD, "lib", "libkcount.so")
SERVER = os.path.join(BUILD, "bin", "nvtx_server")


class Server:
    """nvtx_server with the library preloaded; send() waits for its answer line."""

    def __init__(self, out, user=None, **env):
        e = dict(os.environ, LD_PRELOAD=LIB, KCOUNT_OUTPUT=out, KCOUNT_CONTROL="on", KCOUNT_LOG_LEVEL="warn")
        e.update({k: str(v) for k, v in env.items()})
        if user is not None:
            e.pop("XDG_RUNTIME_DIR", None)  # this user's own folder, not the test's (/tmp/kcount-UID)
        self.p = subprocess.Popen([SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=e, text=True, user=user)
        self.pid = self.p.pid

    def send(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        return self.p.stdout.readline().strip()

    def quit(self):
        self.p.stdin.write("quit\n")
        self.p.stdin.flush()
        out, err = self.p.communicate(timeout=30)
        return self.p.returncode, err


def ctl(*args, user=None):
    r = subprocess.run([KCOUNT, "ctl", *[str(a) for a in args]], capture_output=True, text=True, timeout=60, user=user)
    return r.returncode, r.stdout, r.stderr


def wait_socket(pid):
    for _ in range(200):
        rc, out, err = ctl(pid, "status", "--format", "json")
        if rc == 0:
            return json.loads(out)
        time.sleep(0.02)
    return None


def summary(path, *extra):
    r = subprocess.run([KCOUNT, "summary", path, "--format", "json", *extra], capture_output=True, text=True)
    return r.returncode, (json.loads(r.stdout)["logs"][0] if r.returncode == 0 else r.stderr)


def instances(log_json, path):
    for r in log_json["ranges"]:
        if r["path"] == path:
            return r["instances"]
    return 0


tmp = tempfile.mkdtemp(prefix="kcount-control-test.")
os.chmod(tmp, 0o755)
try:
    # ---- ctl start of a process before its first CUDA or NVTX call: started, with a warning.
    log = os.path.join(tmp, "dormant.kcount")
    s = Server(log, KCOUNT_START="paused")
    st = wait_socket(s.pid)
    check("status before any NVTX call: dormant", st is not None and st["status"]["mode"] == "dormant", st)
    rc, out, err = ctl(s.pid, "status")
    check("status text of a dormant process says why", rc == 0 and "dormant (no CUDA or NVTX call yet)" in out,
          (rc, out, err))
    rc, out, err = ctl(s.pid, "start")
    check("ctl start of a dormant process: recording, and a warning naming it",
          rc == 0 and "recording" in out and f"process {s.pid} (nvtx_server) has made no CUDA or NVTX call yet" in err,
          (rc, out, err))
    check("ctl start of a dormant process: its ranges are recorded", s.send("4") == "done 4")
    rc, err = s.quit()
    lrc, lj = summary(log)
    check("ctl start of a dormant process: the log has the ranges after the start",
          rc == 0 and lrc == 0 and instances(lj, "request") == 4, (rc, err, lj))

    # ---- ctl start/stop/status round trip, capture range armed from ctl, a window opened inside a range.
    log = os.path.join(tmp, "ctl.kcount")
    s = Server(log, KCOUNT_START="paused")
    check("nvtx_server answers", s.send("3") == "done 3")
    st = wait_socket(s.pid)
    check("status of a paused process", st is not None and st["status"]["mode"] == "paused", st)
    check("status of a process without CUDA: CUPTI not loaded", st is not None and st["status"].get("cupti") == "not loaded", st)
    check("status says what the process records: trace mode, every launch call timed",
          st is not None and st["status"].get("record_mode") == "trace" and st["status"].get("launch_timing_sample") == 1, st)
    check("status JSON: memcpy/memset calls counted apart (records.mem_calls)",
          st is not None and st["status"]["records"].get("mem_calls") == 0, st)
    rc, out, err = ctl(s.pid, "start")
    check("ctl start", rc == 0 and "recording" in out, (rc, out, err))
    check("ctl start of a process that made NVTX calls: no warning", "no CUDA or NVTX call" not in err, err)
    rc, out, err = ctl(s.pid, "start")
    check("ctl start twice: exit 1, already open", rc == 1 and "already open" in err, (rc, out, err))
    s.send("5")
    rc, out, err = ctl(s.pid, "stop")
    check("ctl stop", rc == 0 and "paused" in out, (rc, out, err))
    rc, out, err = ctl(s.pid, "stop")
    check("ctl stop without a window: exit 1", rc == 1 and "no capture window" in err, (rc, out, err))
    s.send("2")
    rc, out, err = ctl(s.pid, "start", "--range", "")
    check("ctl start --range '': exit 2, no window", rc == 2 and "empty" in err, (rc, out, err))
    rc, out, err = ctl(s.pid, "status", "--format", "json")
    check("ctl start --range '': still paused", rc == 0 and json.loads(out)["status"]["mode"] == "paused", (rc, out))
    rc, out, err = ctl(s.pid, "start", "--range", "r" * 4096)
    check("ctl start --range <4096 chars>: exit 2 naming the limit", rc == 2 and "4096" in err
          and "no request line" not in err, (rc, out, err))
    # The longest name the message allows is accepted by the library (and disarmed again by a stop).
    longest = int(err.split("at most ")[1].split(" ")[0]) if "at most " in err else 0
    rc, out, err = ctl(s.pid, "start", "--range", "r" * longest)
    check("ctl start --range <longest name>: armed", longest > 4000 and rc == 0 and "armed" in out, (longest, rc, out, err))
    rc, out, err = ctl(s.pid, "start", "--range", "r" * (longest + 1))
    check("ctl start --range <longest + 1>: exit 2", rc == 2, (rc, out, err))
    rc, out, err = ctl(s.pid, "stop")
    check("ctl stop disarms the long capture range", rc in (0, 1), (rc, out, err))
    rc, out, err = ctl(s.pid, "status", "--format", "json")
    check("long capture range disarmed", rc == 0 and "capture_range" not in json.loads(out)["status"], (rc, out))
    rc, out, err = ctl(s.pid, "start", "--range", "request", "--skip", "2", "--count", "3")
    check("ctl start --range arms", rc == 0 and "armed" in out, (rc, out, err))
    s.send("10")
    st = json.loads(ctl(s.pid, "status", "--format", "json")[1])["status"]
    check("capture range window closed by its last occurrence", st["mode"] == "paused" and st["windows_closed"] == 2
          and "capture_range" not in st, st)
    s.send("open outer")  # while paused: the stack is still tracked
    rc, out, err = ctl(s.pid, "start", "--duration", "30s")
    check("ctl start --duration", rc == 0 and "left" in out, (rc, out, err))
    s.send("4")
    s.send("close")
    rc, out, err = ctl(s.pid, "flush")
    check("ctl flush", rc == 0, (rc, out, err))
    rc, out, err = ctl(s.pid, "stop")
    check("ctl stop (third window)", rc == 0, (rc, out, err))
    code, err = s.quit()
    check("program exit code unchanged", code == 0, (code, err))
    check("socket removed at exit", not any(f.startswith(f"{s.pid}.") for d in ["/tmp/kcount-%d" % os.geteuid()]
                                             if os.path.isdir(d) for f in os.listdir(d)))
    rc, j = summary(log)
    ok = rc == 0
    check("log readable", ok, j)
    if ok:
        segs = j["segments"]
        check("three segments", len(segs) == 3, segs)
        if len(segs) == 3:
            check("segment 0: ctl -> ctl, 5 requests", segs[0]["reason"] == "ctl" and segs[0]["end_reason"] == "ctl"
                  and segs[0]["ranges"] == 10, segs[0])
            check("segment 1: capture range 3-5", segs[1]["reason"] == "capture-range request 3-5"
                  and segs[1]["end_reason"] == "range end" and segs[1]["ranges"] == 6, segs[1])
            check("segment 2: 4 requests inside outer, outer closed in it", segs[2]["ranges"] == 9, segs[2])
        rc1, j1 = summary(log, "--segment", "1")
        check("--segment 1: exactly occurrences 3-5", rc1 == 0 and instances(j1, "request") == 3
              and instances(j1, "request/inner") == 3, j1 if rc1 else "")
        rc2, j2 = summary(log, "--segment", "2")
        check("--segment 2: requests credited under the range open before the window",
              rc2 == 0 and instances(j2, "outer/request") == 4 and instances(j2, "request") == 0, j2 if rc2 else "")
        rc3, _ = summary(log, "--segment", "7")
        check("--segment of a window that does not exist: exit 2", rc3 == 2)
        check("only windowed ranges in the log", instances(j, "request") == 5 + 3 and instances(j, "outer/request") == 4,
              [(r["path"], r["instances"]) for r in j["ranges"]])

    # ---- KCOUNT_CAPTURE_RANGE / SKIP / COUNT without an operator.
    log = os.path.join(tmp, "range.kcount")
    s = Server(log, KCOUNT_CAPTURE_RANGE="request", KCOUNT_CAPTURE_SKIP=5, KCOUNT_CAPTURE_COUNT=10)
    s.send("30")
    code, _ = s.quit()
    rc, j = summary(log)
    check("capture range: occurrences 6-15 only", rc == 0 and instances(j, "request") == 10
          and len(j["segments"]) == 1 and j["segments"][0]["reason"] == "capture-range request 6-15",
          j if rc else "")

    # ---- KCOUNT_CAPTURE_DURATION: the window closes by itself.
    log = os.path.join(tmp, "duration.kcount")
    s = Server(log, KCOUNT_CAPTURE_DURATION="400ms")
    s.send("5")
    time.sleep(1.0)
    s.send("7")
    s.quit()
    rc, j = summary(log)
    check("duration window: first 5 requests only, end reason duration", rc == 0 and instances(j, "request") == 5
          and j["segments"][0]["end_reason"] == "duration", j if rc else "")
    # The table's footer says the log covers a window, not the whole run.
    r = subprocess.run([KCOUNT, "summary", log], capture_output=True, text=True)
    check("duration window: the table's footer lists the window (start -> duration)",
          r.returncode == 0 and "capture windows: 1" in r.stdout and "segment 0: start -> duration" in r.stdout,
          r.stdout[-600:])

    # ---- Summary mode: ctl flush appends a snapshot of everything tallied so far, long before the interval.
    log = os.path.join(tmp, "summary-flush.kcount")
    s = Server(log, KCOUNT_MODE="summary", KCOUNT_INTERVAL="1h", KCOUNT_LAUNCH_TIMING="16")
    check("summary mode: nvtx_server answers", s.send("6") == "done 6")
    st = wait_socket(s.pid)
    check("status in summary mode with KCOUNT_LAUNCH_TIMING=16: both shown (JSON)",
          st is not None and st["status"].get("record_mode") == "summary" and st["status"].get("launch_timing_sample") == 16, st)
    rc, out, err = ctl(s.pid, "status", "--format", "text")
    check("status in summary mode with KCOUNT_LAUNCH_TIMING=16: both shown (text)",
          rc == 0 and "record mode: summary, one launch call in 16 timed (KCOUNT_LAUNCH_TIMING)" in out, (rc, out, err))
    rc, out, err = ctl(s.pid, "flush")
    lrc, lj = summary(log)
    check("summary mode: ctl flush writes a snapshot of the ranges so far (interval 1h)",
          rc == 0 and lrc == 0 and instances(lj, "request") == 6 and instances(lj, "request/inner") == 6
          and lj.get("snapshot") and not lj["snapshot"]["final"], (rc, err, lj))
    size = os.path.getsize(log)
    rc, out, err = ctl(s.pid, "flush")
    check("summary mode: ctl flush with nothing changed adds no snapshot", rc == 0 and os.path.getsize(log) == size,
          (rc, err, size, os.path.getsize(log)))
    s.send("4")
    rc, out, err = ctl(s.pid, "flush")
    lrc, lj2 = summary(log)
    check("summary mode: a second ctl flush appends a later snapshot, cumulative",
          rc == 0 and lrc == 0 and instances(lj2, "request") == 10
          and lj2.get("snapshot") and lj.get("snapshot")
          and lj2["snapshot"]["sequence"] > lj["snapshot"]["sequence"], (rc, err, lj2))
    code, err = s.quit()
    lrc, lj = summary(log)
    check("summary mode: the final snapshot after flushes holds the whole run",
          code == 0 and lrc == 0 and instances(lj, "request") == 10 and lj.get("snapshot") and lj["snapshot"]["final"],
          (code, err, lj))

    # ---- A control folder kcount refuses (writable by others) in a paused process: nothing can start it,
    # and the library says so.
    bad_dir = os.path.join(tmp, "open-to-all")
    os.mkdir(bad_dir)
    os.chmod(bad_dir, 0o777)
    s = Server(os.path.join(tmp, "refused-dir.kcount"), KCOUNT_START="paused", KCOUNT_CONTROL_DIR=bad_dir)
    check("paused, control folder refused: nvtx_server answers", s.send("1") == "done 1")
    # kcount ctl names that cause (exit 5), not causes that do not apply to it.
    rc, out, cerr = ctl(s.pid, "status")
    check("control folder refused: kcount ctl status exits 5 and names the refused folder",
          rc == 5 and f"kcount refuses its control folder {bad_dir} (open to group or others (mode 777))" in cerr
          and "not a kcount process" not in cerr and "KCOUNT_CONTROL=off" not in cerr
          and "initialized CUDA" not in cerr, (rc, cerr))
    code, err = s.quit()
    check("paused, control folder refused: one warning that nothing can start recording",
          code == 0 and "no control socket" in err and err.count("nothing can start recording in this process") == 1,
          (code, err))

    # ---- Summary mode: a window that closes by itself (--duration) writes its snapshot then, not at the
    # next interval (1h here): the capture survives a kill right after it.
    log = os.path.join(tmp, "summary-window.kcount")
    s = Server(log, KCOUNT_MODE="summary", KCOUNT_INTERVAL="1h", KCOUNT_START="paused")
    check("summary mode, paused: nvtx_server answers", s.send("2") == "done 2")
    wait_socket(s.pid)
    rc, out, err = ctl(s.pid, "start", "--duration", "2s")
    check("summary mode: ctl start --duration 2s", rc == 0, (rc, out, err))
    check("summary mode: requests inside the window", s.send("5") == "done 5")
    closed = None
    for _ in range(100):  # the window closes 2 s after its start
        time.sleep(0.1)
        st = ctl(s.pid, "status", "--format", "json")
        if st[0] == 0 and json.loads(st[1].strip().splitlines()[-1])["status"].get("windows_closed") == 1:
            closed = True
            break
    lrc, lj = summary(log)
    check("summary mode: the window closed by --duration wrote its snapshot (5 requests, not final)",
          closed and lrc == 0 and instances(lj, "request") == 5 and lj.get("snapshot") and not lj["snapshot"]["final"],
          (closed, lrc, lj))
    s.quit()

    # ---- Summary mode: snapshots on a fixed schedule, start_ns + k x KCOUNT_INTERVAL, each taken at the
    # writer's first wake at or after its due time. The writer wakes every 100 ms plus its work, so at 150 ms
    # a schedule counted from the last snapshot would take one every second wake (~200 ms apart, 50 ms more
    # per snapshot, 400 ms late by the 8th); on the fixed one each is at most a wake (~100 ms) late.
    interval = 150_000_000
    log = os.path.join(tmp, "summary-schedule.kcount")
    s = Server(log, KCOUNT_MODE="summary", KCOUNT_INTERVAL="150ms")
    t0 = time.time()
    while time.time() - t0 < 2.0:  # ranges all along: every interval has a change, so every due time a snapshot
        s.send("20")
        time.sleep(0.01)
    s.quit()
    r = subprocess.run([KCOUNT, "summary", "--series", "--format", "json", log], capture_output=True, text=True)
    offsets = []
    if r.returncode == 0:
        ivs = sorted(json.loads(r.stdout)["logs"][0]["intervals"], key=lambda i: i["sequence"])
        offsets = [i["offset_ns"] for i in ivs if not i["final"]]
    # The k-th snapshot comes at or after k x 150 ms after start_ns, and less than 150 ms after that.
    late = [(k, o / 1e6) for k, o in enumerate(offsets[:8], 1) if not (k * interval <= o < k * interval + 150_000_000)]
    check("summary mode: 8 snapshots at start + k x 150 ms (+0 to 150 ms each)",
          r.returncode == 0 and len(offsets) >= 8 and not late,
          (r.returncode, r.stderr[-300:], [round(o / 1e6) for o in offsets], late))

    # ---- Errors and exit codes.
    dead = subprocess.Popen(["true"])
    dead.wait()
    rc, out, err = ctl(dead.pid, "status")
    check("no such process: exit 3", rc == 3 and "no such process" in err, (rc, err))
    sleeper = subprocess.Popen(["sleep", "30"])
    rc, out, err = ctl(sleeper.pid, "status")
    check("not a kcount process: exit 5", rc == 5 and "not a kcount process" in err, (rc, err))
    rc, out, err = ctl(sleeper.pid, "status", "--format", "json")
    try:
        j = json.loads(out)
    except ValueError:
        j = {}
    check("--format json: a process that could not be asked is a JSON line too (ok false, error, exit 5)",
          rc == 5 and j.get("pid") == sleeper.pid and j.get("ok") is False and j.get("exit") == 5
          and "not a kcount process" in j.get("error", "") and "not a kcount process" in err, (rc, out, err))
    # A stale socket of a dead process: --all removes it.
    d = "/tmp/kcount-%d" % os.geteuid()
    os.makedirs(d, mode=0o700, exist_ok=True)
    stale = os.path.join(d, f"{dead.pid}.sock")
    sk = socket.socket(socket.AF_UNIX)
    sk.bind(stale)
    sk.close()
    ctl("--all", "status")
    check("stale socket of a dead process removed by --all", not os.path.exists(stale))
    # A stale socket at the name of a live process that is not a kcount process (its pid reused): removed,
    # and the cause named from /proc as for a process without socket.
    stale_live = os.path.join(d, f"{sleeper.pid}.sock")
    sk = socket.socket(socket.AF_UNIX)
    sk.bind(stale_live)
    sk.close()
    rc, out, err = ctl(sleeper.pid, "status")
    check("stale socket of a live process: removed, exit 5, the cause /proc shows",
          rc == 5 and not os.path.exists(stale_live) and f"stale control socket {stale_live} (nobody listens); "
          "not a kcount process (no control socket: libkcount.so is not loaded in it)" in err, (rc, err))
    # A process whose /proc/PID/maps cannot be read (not dumpable; root without CAP_SYS_PTRACE, as in a
    # container, cannot read it either): whether libkcount.so is loaded is not known, so the message does
    # not call it "not a kcount process" and names every cause left.
    hidden = subprocess.Popen([sys.executable, "-c", "import ctypes, time\n"
                               "ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0\n"
                               "print('ready', flush=True); time.sleep(30)"], stdout=subprocess.PIPE, text=True)
    hidden.stdout.readline()

    def unreadable_maps(pid):  # maps not readable, and /proc/PID ours to ask (as ctl's permission check)
        try:
            open(f"/proc/{pid}/maps").read()
            return False
        except OSError:
            return os.geteuid() == 0 or os.stat(f"/proc/{pid}").st_uid == os.geteuid()

    # Else pid 1, when this machine hides its maps (a container's init).
    target = next((pid for pid in (hidden.pid, 1) if unreadable_maps(pid)), None)
    if target is None:
        print("INFO skipped: no process here whose /proc/PID/maps cannot be read (CAP_SYS_PTRACE)")
    else:
        rc, out, err = ctl(target, "status")
        check(f"maps of pid {target} not readable: exit 5, says it cannot tell, never 'not a kcount process'",
              rc == 5 and f"pid {target}: no control socket, and whether libkcount.so is loaded in it cannot be "
              f"told (/proc/{target}/maps cannot be read): libkcount.so not loaded, kcount disabled "
              "(KCOUNT_DISABLE), KCOUNT_CONTROL=off, or the process has not initialized CUDA" in err
              and "not a kcount process" not in err, (rc, err))
    hidden.kill()
    hidden.wait()
    rc, out, err = ctl(sleeper.pid, "bogus")
    check("unknown command: exit 2", rc == 2, (rc, err))
    rc, out, err = ctl(sleeper.pid, "stop", "--duration", "3s")
    check("--duration without start: exit 2", rc == 2, (rc, err))
    sleeper.kill()

    # ---- --timeout bounds the whole command: a start asks for the status first, and both questions
    # together wait at most --timeout for a stopped process (each waited the full --timeout: 2 s for 1).
    log = os.path.join(tmp, "stopped.kcount")
    s = Server(log, KCOUNT_START="paused")
    s.send("1")
    wait_socket(s.pid)
    os.kill(s.pid, signal.SIGSTOP)
    # The stop takes effect when the kernel next handles the process's threads: under load its control
    # thread could still answer a request sent at once. Wait until every thread shows state T.
    for _ in range(200):
        states = []
        for tid in os.listdir(f"/proc/{s.pid}/task"):
            try:
                with open(f"/proc/{s.pid}/task/{tid}/stat") as f:
                    states.append(f.read().rsplit(")", 1)[1].split()[0])
            except OSError:
                pass
        if states and all(st == "T" for st in states):
            break
        time.sleep(0.01)
    t0 = time.monotonic()
    rc, out, err = ctl(s.pid, "start", "--timeout", "1")
    took = time.monotonic() - t0
    os.kill(s.pid, signal.SIGCONT)
    check("start to a stopped process with --timeout 1: exit 6 within about 1 s, the limit named",
          rc == 6 and took < 1.7 and "within 1 s" in err, (rc, round(took, 2), err))
    s.quit()

    # ---- kcount run --paused with a control folder kcount refuses: no `kcount ctl ... start` hint that
    # cannot work, but why and what can start recording.
    open_dir = os.path.join(tmp, "open-ctl")
    os.mkdir(open_dir)
    os.chmod(open_dir, 0o777)
    r = subprocess.run([KCOUNT, "run", "--paused", "--output", os.path.join(tmp, "refused.kcount"), "--", SERVER],
                       input="quit\n", capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, KCOUNT_CONTROL_DIR=open_dir))
    check("kcount run --paused, refused control folder: says so instead of the ctl hint",
          r.returncode == 0 and f"refuses its control folder {open_dir} (open to group or others" in r.stderr
          and "start recording with `kcount ctl" not in r.stderr, r.stderr)

    # ---- Another user is refused (SO_PEERCRED), and the refusal is counted.
    if os.geteuid() != 0:
        print("SKIP permission test: needs root to create a second user (CI runs as root)")
    else:
        user = "kcountctl"
        try:
            pwd.getpwnam(user)
        except KeyError:
            subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", user], check=True)
        pw = pwd.getpwnam(user)
        log = os.path.join(tmp, "perm.kcount")
        s = Server(log, KCOUNT_START="paused")
        s.send("1")
        st = wait_socket(s.pid)
        rc, out, err = ctl(s.pid, "status", user=user)
        check("other user: kcount ctl exits 4 (permission refused)", rc == 4 and "permission refused" in err, (rc, err))
        # Make the socket reachable through the file system, so that only the library's peer check stands.
        sock = os.path.join("/tmp/kcount-0", f"{s.pid}.sock")
        os.chmod("/tmp/kcount-0", 0o711)
        os.chmod(sock, 0o777)
        try:
          r = subprocess.run([shutil.which("python3", path="/usr/bin:/bin") or sys.executable, "-c", (
            "import socket,sys;c=socket.socket(socket.AF_UNIX);c.settimeout(10);c.connect(sys.argv[1]);\n"
            "try: c.sendall(b'{\"cmd\":\"start\"}\\n')\nexcept OSError: pass\n"
            "print(c.recv(4096).decode())"), sock],
            capture_output=True, text=True, user=user, timeout=30)
        finally:
          os.chmod("/tmp/kcount-0", 0o700)
          os.chmod(sock, 0o600)
        check("other user: the library refuses the connection", '"ok":false' in r.stdout
              and "permission refused" in r.stdout, (r.stdout, r.stderr))
        st = json.loads(ctl(s.pid, "status", "--format", "json")[1])["status"]
        check("refusal counted, command not run", st["refused_connections"] == 1 and st["mode"] == "paused", st)
        code, err = s.quit()
        check("refusal logged once", err.count("refused a connection from uid %d" % pw.pw_uid) == 1, err)

        # A process that is not dumpable (prctl PR_SET_DUMPABLE 0, a set-user-ID program): the files in
        # /proc/PID belong to root (its environ cannot be read by its own user), the folder keeps the
        # process's effective uid (proc(5); task_dump_owner in the kernel), which kcount ctl goes by.
        own = os.path.join(tmp, "nodump")
        os.mkdir(own)
        os.chown(own, pw.pw_uid, pw.pw_gid)
        os.chmod(tmp, 0o711)
        s = Server(os.path.join(own, "nodump.kcount"), user=user, KCOUNT_START="paused")
        s.send("1")
        for _ in range(200):
            if ctl(s.pid, "status", user=user)[0] == 0:
                break
            time.sleep(0.02)
        check("not dumpable: the server made itself so", s.send("nodump") == "nodump")
        check("not dumpable: /proc/PID/environ belongs to root, /proc/PID to the user",
              os.stat(f"/proc/{s.pid}/environ").st_uid == 0 and os.stat(f"/proc/{s.pid}").st_uid == pw.pw_uid)
        rc, out, err = ctl(s.pid, "status", user=user)
        check("not dumpable: its own user's kcount ctl reaches it", rc == 0 and f"pid {s.pid}: paused" in out,
              (rc, out, err))
        rc, out, err = ctl(s.pid, "start", user=user)
        check("not dumpable: and starts a window", rc == 0, (rc, out, err))
        code, err = s.quit()
        check("not dumpable: server exits 0", code == 0, err)
        os.chmod(tmp, 0o700)

    # ---- cuptiSubscribe of the program goes through kcount's interposer and gets the real answer.
    sub = os.path.join(BUILD, "bin", "cupti_subscriber")
    if not os.path.exists(sub):
        print("SKIP cuptiSubscribe interposer: no libcupti found at build time (tests/programs/cupti_subscriber)")
    else:
        plain = subprocess.run([sub], capture_output=True, text=True, timeout=60)
        pre = subprocess.run([sub], capture_output=True, text=True, timeout=60,
                             env=dict(os.environ, LD_PRELOAD=LIB, KCOUNT_LOG_LEVEL="debug", KCOUNT_YIELD="1"))
        check("cuptiSubscribe forwarded: same results with kcount preloaded",
              plain.returncode == pre.returncode == 0 and plain.stdout == pre.stdout and plain.stdout.startswith("subscribe"),
              (plain.stdout, pre.stdout, pre.stderr[-300:]))
        check("cuptiSubscribe interposer reached", "cuptiSubscribe goes through kcount to" in pre.stderr
              and "libcupti" in pre.stderr, pre.stderr[-300:])

    # ---- Rotation: KCOUNT_MAX_BYTES per file, KCOUNT_MAX_FILES files, each readable alone; never
    # overwrites an existing file.
    rot = os.path.join(tmp, "rot")
    os.makedirs(rot)
    base = os.path.join(rot, "r.kcount")
    with open(os.path.join(rot, "r.1.kcount"), "w") as f:
        f.write("not ours\n")
    # Packed chunks are small (about 0.3-0.5 byte per range here, depending on the host clock's timestamps)
    # and are written once a second. 40,000 bytes per file keeps the three files well below the 200,000
    # requests the check below allows (with TSC timestamps, 60,000-byte files held up to 215,000).
    cap = 40000
    s = Server(base, KCOUNT_MAX_BYTES=cap, KCOUNT_MAX_FILES=3)
    # Requests until the third file is full, then 2 s more so that it overflows too: the loop waits for the
    # files, not for a time. Requests of 1,000 ranges (the writer seals chunks to fit the cap whatever their
    # size; tests/cli/test_rotation.sh checks the fill and the counts).
    # The writer fills each file up to the cap less a 512-byte reserve: requests go on until the third file
    # is that full, then 2 s more, which cannot fit.
    deadline, after, sent = time.time() + 90, 0, 0
    third = os.path.join(rot, "r.2.kcount")
    while time.time() < deadline and after < 20:
        s.send("1000")
        sent += 1000
        time.sleep(0.1)
        if os.path.exists(third) and os.path.getsize(third) >= cap - 2048:
            after += 1
    code, err = s.quit()
    files = sorted(os.listdir(rot))
    check("rotation: three files, the existing one untouched", files == ["r.1-1.kcount", "r.1.kcount", "r.2.kcount", "r.kcount"]
          and open(os.path.join(rot, "r.1.kcount")).read() == "not ours\n", files)
    total = 0
    for name in ["r.kcount", "r.1-1.kcount", "r.2.kcount"]:
        p = os.path.join(rot, name)
        size = os.path.getsize(p)
        rc, j = summary(p)
        errs = [i for i in j["issues"] if i["severity"] == "error"] if rc == 0 else j
        # The last file may hold only its preamble: the chunk after it did not fit under the cap (how
        # much goes into each chunk depends on the machine's speed, e.g. under ASan).
        last = name == "r.2.kcount"
        check(f"rotation: {name} <= {cap} bytes and self-contained", rc == 0 and size <= cap and not errs
              and j["metadata"].get("pid") == str(s.pid) and (last or instances(j, "request/inner") > 0),
              (size, errs))
        if rc == 0:
            total += instances(j, "request")
    check("rotation: records stop after the last file, the drop is said", 0 < total < 200000 and total < sent
          and "KCOUNT_MAX_FILES=3" in err, (total, sent, err[-500:]))

    # ---- kcount run --paused on an NVTX-only program (no KCOUNT_CONTROL set): it gets a control socket, and
    #      `kcount ctl` given kcount run's own pid talks to the profiled process.
    log = os.path.join(tmp, "wrapped.kcount")
    e = {k: v for k, v in os.environ.items() if k not in ("KCOUNT_CONTROL", "LD_PRELOAD")}
    e["KCOUNT_LOG_LEVEL"] = "warn"
    w = subprocess.Popen([KCOUNT, "run", "--paused", "--output", log, "--", SERVER], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e, text=True)
    w.stdin.write("2\n")
    w.stdin.flush()
    check("kcount run --paused: the program answers", w.stdout.readline().strip() == "done 2")
    st = wait_socket(w.pid)
    check("kcount ctl RUNPID status reaches the profiled process of kcount run --paused",
          st is not None and st["status"]["mode"] == "paused" and st["pid"] != w.pid, st)
    rc, out, err = ctl(w.pid, "start")
    check("kcount ctl RUNPID start: names the profiled process", rc == 0 and "is kcount run; its profiled process is"
          in err, (rc, out, err))
    w.stdin.write("3\nquit\n")
    w.stdin.flush()
    out, err = w.communicate(timeout=30)
    check("kcount run --paused: started paused note, log after ctl start", w.returncode == 0 and "started paused" in err
          and "kcount: log: " + log in err, (w.returncode, err))

    # ---- ctl status: memcpy/memset calls apart from launches, as `kcount summary` and `check` count them.
    # A socket answering as the library does for a process that made 9660 launches and 6 memcpy/memset calls
    # (no GPU here to make them): the text kcount ctl prints.
    fake_dir = os.path.join(tmp, "fake-ctl")
    os.mkdir(fake_dir, 0o700)
    fake = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    fake.bind(os.path.join(fake_dir, "%d.sock" % os.getpid()))
    fake.listen(4)
    fake.settimeout(30)  # kcount ctl not connecting fails the check below instead of hanging the test
    status = {"pid": os.getpid(), "mode": "recording", "window_open": False, "window": 0, "windows_closed": 0,
              "records": {"launches": 9660, "mem_calls": 6, "kernels": 9700, "ranges": 12},
              "drops": {"host_records": 0, "activity_records": 0, "activity_buffers_refused": 0, "bytes": 0},
              "activity_outside_windows": 0, "log": "x.kcount", "log_files": ["x.kcount"], "bytes_written": 4096,
              "refused_connections": 0, "cupti": "libcupti.so.13 (API version 130001)"}

    def answer_once():
        try:
            conn, _ = fake.accept()
        except OSError:
            return
        conn.recv(4096)
        conn.sendall((json.dumps({"ok": True, "status": status}) + "\n").encode())
        conn.close()

    t = threading.Thread(target=answer_once, daemon=True)
    t.start()
    r = subprocess.run([KCOUNT, "ctl", str(os.getpid()), "status"], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, KCOUNT_CONTROL_DIR=fake_dir))
    t.join(timeout=10)
    fake.close()
    check("ctl status text: '9660 launches (+6 memcpy/memset calls)', as summary and check say it",
          r.returncode == 0 and "  records: 9660 launches (+6 memcpy/memset calls), 9700 kernels, 12 ranges;" in r.stdout,
          (r.returncode, r.stdout, r.stderr))

finally:
    shutil.rmtree(tmp, ignore_errors=True)

sys.exit(exit_status())
