#!/usr/bin/env python3
"""`kcount run` and the library at the edges of a process's life, without a GPU (tests/programs/
nvtx_ranges.cpp and Python through ctypes, libkcount.so preloaded):
- why no log was written, as the library reports it: KCOUNT_DISABLE, a capture range never pushed or
  pushed too few times, a paused start never started; a nested `kcount run` names its logs to the outer;
- exec: the log is closed (all ranges, End record) before the image is replaced; a failed exec keeps
  recording;
- --paused: the control socket exists before the first CUDA or NVTX call, `kcount ctl start` starts a
  dormant process, a fork child has no socket;
- SIGINT from outside to a program at SIGINT's default action: complete log, still ended by SIGINT
  (130); KCOUNT_SIGINT=0 leaves it alone; a Python program keeps its KeyboardInterrupt.
Usage: test_run_reasons.py BUILD_DIR"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

from checks import check, exit_status

BUILD = os.path.abspath(sys.argv[1])
KCOUNT = os.path.join(BUILD, "bin", "kcount")
PROG = os.path.join(BUILD, "bin", "nvtx_ranges")
NVTX_LIB = os.path.join(BUILD, "lib", "libkc_nvtx_export.so")


def default_sigint():
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # as a shell's foreground job (ctest may ignore it)


def run(args, **env):
    e = dict(os.environ, **{k: str(v) for k, v in env.items()})
    return subprocess.run([KCOUNT, "run", *args], capture_output=True, text=True, env=e, timeout=120,
                          preexec_fn=default_sigint)


def kcheck(path):
    r = subprocess.run([KCOUNT, "check", path], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def instances(path, name):
    r = subprocess.run([KCOUNT, "summary", path, "--format", "json"], capture_output=True, text=True)
    if r.returncode != 0:
        return None
    return sum(x["instances"] for x in json.loads(r.stdout)["logs"][0]["ranges"] if x["path"] == name)


def ctl(*args):
    r = subprocess.run([KCOUNT, "ctl", *[str(a) for a in args]], capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout, r.stderr


# How long a check waits for something that happens at once on an idle machine (a fork, a socket): long,
# so that a machine loaded by parallel tests or sanitizers does not fail a check that is not about time.
PATIENCE_S = 30


def child_of(pid):
    deadline = time.monotonic() + PATIENCE_S
    while time.monotonic() < deadline:
        try:
            kids = [int(k) for t in os.listdir(f"/proc/{pid}/task")
                    for k in open(f"/proc/{pid}/task/{t}/children").read().split()]
        except OSError:
            kids = []
        if kids:
            return kids[0]
        time.sleep(0.01)
    return None


tmp = tempfile.mkdtemp(prefix="kcount-run-reasons.")
os.environ["KCOUNT_CONTROL_DIR"] = os.path.join(tmp, "ctl")
os.environ.pop("KCOUNT_RUN_REPORT", None)
os.environ.pop("KCOUNT_DISABLE", None)

# ---- Why no log was written.
r = run(["--output", f"{tmp}/d.kcount", "--", PROG, "5"], KCOUNT_DISABLE=1, KCOUNT_MAX_FILES=0, KCOUNT_INTERVAL="5s",
        KCOUNT_LOG_LEVEL="loud", KCOUNT_MDOE="summary")
check("KCOUNT_DISABLE=1: the reason names it",
      "no log written: kcount was disabled: KCOUNT_DISABLE=1 is set (pid " in r.stderr, r.stderr)
check("KCOUNT_DISABLE=1: the library prints nothing, no warning about other KCOUNT_* settings either",
      "[kcount]" not in r.stderr and r.stderr.count("\n") == 1, r.stderr)

# KCOUNT_DISABLE takes the switch words: 0/off/no/false keep kcount on; any other value disables it, silently,
# and kcount run shows the value as the warnings do (quoted and escaped unless a plain word: one line).
for value, shown in (("1\n", '"1\\n"'), ("00", "00"), (" 0", '" 0"'), ("on", "on")):
    r = run(["--output", f"{tmp}/dis.kcount", "--", PROG, "5"], KCOUNT_DISABLE=value)
    check(f"KCOUNT_DISABLE={value!r}: disabled, the reason shows the value as {shown}, on one line",
          f"kcount: no log written: kcount was disabled: KCOUNT_DISABLE={shown} is set (pid " in r.stderr
          and r.stderr.count("\n") == 1 and "[kcount]" not in r.stderr and not os.path.exists(f"{tmp}/dis.kcount"),
          r.stderr)
for value in ("0", "off", "no", "false"):
    out = f"{tmp}/on-{value}.kcount"
    r = run(["--output", out, "--", PROG, "5"], KCOUNT_DISABLE=value)
    check(f"KCOUNT_DISABLE={value}: not disabled, the log is written",
          r.returncode == 0 and os.path.exists(out) and "disabled" not in r.stderr, r.stderr)
# kcount ctl reads KCOUNT_DISABLE the same way from /proc/PID/environ, and shows its value the same way.
p = subprocess.Popen([KCOUNT, "run", "--paused", "--", "sleep", "30"], env=dict(os.environ, KCOUNT_DISABLE=" 0"),
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
kid = child_of(p.pid)
deadline = time.monotonic() + PATIENCE_S
while kid is not None and time.monotonic() < deadline:
    try:
        if "libkcount" in open(f"/proc/{kid}/maps").read():
            break
    except OSError:
        pass
    time.sleep(0.01)
rc, _, err = ctl(p.pid, "status")
check("kcount ctl, KCOUNT_DISABLE=' 0': disabled in it, the value quoted (exit 5)",
      rc == 5 and 'no control socket: kcount is disabled in it (KCOUNT_DISABLE=" 0")' in err, (rc, err))
if kid is not None:
    os.kill(kid, signal.SIGKILL)
p.wait()

r = run(["--output", f"{tmp}/r.kcount", "--", PROG, "5"], KCOUNT_CAPTURE_RANGE="never")
check("capture range never pushed: the reason names it",
      "no log written: the capture range 'never' was never pushed" in r.stderr and r.returncode == 0, r.stderr)

r = run(["--output", f"{tmp}/s.kcount", "--", PROG, "5"], KCOUNT_CAPTURE_RANGE="step", KCOUNT_CAPTURE_SKIP="50")
check("capture range pushed too few times: the reason counts the pushes",
      "the capture range 'step' was pushed 5 times, and recording starts at push 51" in r.stderr, r.stderr)

r = run(["--paused", "--", PROG, "5"])
check("--paused, never started: the library's reason",
      "no log written: the process started paused (KCOUNT_START=paused) and recording was never started" in r.stderr,
      r.stderr)

r = run(["--", KCOUNT, "run", "--output", f"{tmp}/nested.kcount", "--", PROG, "5"])
lines = [l for l in r.stderr.splitlines() if l.startswith("kcount: ")]
check("nested kcount run: the outer names the inner's log",
      lines.count(f"kcount: log: {tmp}/nested.kcount") == 2 and not any("no log" in l for l in lines), r.stderr)

def no_log_line(stderr):
    return next((l for l in stderr.splitlines() if l.startswith("kcount: no log written: ")), "")


# A command that never initializes CUDA nor calls NVTX: each process the library was loaded into says so
# at its end (exit(), return from main, _exit()), and kcount run says there was nothing to record.
idle = "kcount: no log written: the command made no CUDA or NVTX call"
for prog in (["/bin/true"], [sys.executable, "-c", "print(1)"], [sys.executable, "-c", "import os; os._exit(3)"]):
    r = run(["--output", f"{tmp}/idle.kcount", "--", *prog])
    line = no_log_line(r.stderr)
    check(f"{' '.join(prog)}: no CUDA or NVTX call, said as such",
          line.startswith(idle + " (pid ") and line.endswith("), so there was nothing to record")
          and r.returncode == (3 if "_exit" in prog[-1] else 0) and not os.path.exists(f"{tmp}/idle.kcount"),
          (r.returncode, r.stderr))
r = run(["--output", f"{tmp}/idle.kcount", "--", "sh", "-c", "/bin/true; /bin/true"])
check("sh -c '/bin/true; /bin/true': three processes, none made a CUDA or NVTX call",
      re.fullmatch(re.escape(idle) + r" in any of its 3 processes \(pids \d+, \d+, \d+\), so there was nothing to record",
                   no_log_line(r.stderr)),
      r.stderr)
# A shell that runs no CUDA, killed: no log was due from it, so none is said to have been cut off.
r = run(["--output", f"{tmp}/killed.kcount", "--", "sh", "-c", "kill -KILL $$"])
check("sh killed by SIGKILL before any CUDA or NVTX call: said killed, no log said to be due",
      r.returncode == 137 and no_log_line(r.stderr) == "kcount: no log written: the command was killed by signal 9 "
      "(Killed); it may have made no CUDA or NVTX call (nothing to record), or been killed before kcount's first write",
      (r.returncode, r.stderr))
# One process of the command recorded NVTX ranges: its log is written, the idle shell does not matter.
r = run(["--output", f"{tmp}/idle-nvtx.kcount", "--", "sh", "-c", f"/bin/true; {PROG} 5"])
check("sh -c '/bin/true; nvtx_ranges 5': the NVTX program's log is written",
      f"kcount: log: {tmp}/idle-nvtx.kcount" in r.stderr and not no_log_line(r.stderr), r.stderr)

# --lib naming a shared library that is not libkcount.so (the test NVTX library): said as such, not blamed
# on the program.
r = run(["--lib", NVTX_LIB, "--output", f"{tmp}/otherlib.kcount", "--", "/bin/true"])
check("--lib naming another shared library: 'is it libkcount.so?'",
      no_log_line(r.stderr) == f"kcount: no log written: no process reported loading {NVTX_LIB} (given with --lib): "
      "is it libkcount.so? (else: a statically linked program, or one that clears LD_PRELOAD)", r.stderr)

# --lib naming a folder or a missing file: said what it is, exit 2, the command not run.
for lib, said in ((tmp, "a folder, not the library (give the path of libkcount.so itself)"),
                  (f"{tmp}/none.so", "cannot use it: No such file or directory")):
    r = run(["--lib", lib, "--", "/bin/true"])
    check(f"--lib {os.path.basename(lib)}: '{said[:30]}...', exit 2",
          r.returncode == 2 and r.stderr.strip() == f"kcount run: --lib {lib}: {said}", (r.returncode, r.stderr))

r = run(["--", KCOUNT, "run", "--", f"{tmp}/nonexist"])
check("nested kcount run of a missing command: exit 127, the outer passes 'command not found' on",
      r.returncode == 127 and no_log_line(r.stderr).startswith(
          "kcount: no log written: the command of a nested kcount run did not run: "
          f"{tmp}/nonexist: command not found (pid ") and "recorded no" not in r.stderr, (r.returncode, r.stderr))

# A program started with LD_PRELOAD cleared (by env; the library in env notes the exec). (NVTX_INJECTION64_PATH,
# which the preloaded library set, would still load it into an NVTX program: cleared too.)
for how, prog in ((["env", "-u", "LD_PRELOAD", "-u", "NVTX_INJECTION64_PATH"], [PROG, "5"]),
                  (["env", "LD_PRELOAD="], ["/bin/true"])):
    r = run(["--output", f"{tmp}/cleared.kcount", "--", *how, *prog])
    check(f"{' '.join(how)} {prog[0]}: libkcount.so was not loaded by it, LD_PRELOAD cleared",
          r.returncode == 0 and no_log_line(r.stderr).startswith(
              f"kcount: no log written: libkcount.so was not loaded by {prog[0]} (pid ")
          and no_log_line(r.stderr).endswith("it was started with LD_PRELOAD cleared"), r.stderr)
r = run(["--output", f"{tmp}/kept.kcount", "--", "env", PROG, "5"])
check("env PROG (LD_PRELOAD kept): the program's log is written", f"kcount: log: {tmp}/kept.kcount" in r.stderr,
      r.stderr)

# KCOUNT_START=paused where `kcount ctl` cannot reach the process: the advice says what can start it.
r = run(["--output", f"{tmp}/p1.kcount", "--", PROG, "5"], KCOUNT_START="paused")
line = no_log_line(r.stderr)
check("KCOUNT_START=paused, NVTX only (no control socket without CUDA): no `kcount ctl` advice",
      "recording was never started: it had no control socket, as it made no CUDA call (KCOUNT_CONTROL=on" in line
      and "kcount ctl" not in line, r.stderr)
r = run(["--output", f"{tmp}/p2.kcount", "--", PROG, "5"], KCOUNT_START="paused", KCOUNT_CONTROL="off")
line = no_log_line(r.stderr)
check("KCOUNT_START=paused, KCOUNT_CONTROL=off: says the socket was off, advises a capture range",
      "its control socket was off (KCOUNT_CONTROL=off); start with KCOUNT_CAPTURE_RANGE" in line
      and "kcount ctl" not in line, r.stderr)
r = run(["--paused", "--output", f"{tmp}/p3.kcount", "--", "true"], KCOUNT_CONTROL="off")
line = no_log_line(r.stderr)
check("--paused with KCOUNT_CONTROL=off: neither of kcount run's lines advises `kcount ctl`",
      "started paused with its control socket off (KCOUNT_CONTROL=off)" in r.stderr and line.startswith(idle) and
      not any("kcount ctl" in l for l in r.stderr.splitlines() if l.startswith("kcount: ")), r.stderr)

# ---- exec: the log is closed before the image is replaced.
r = run(["--output", f"{tmp}/exec.kcount", "--", PROG, "100", "exec"])
rc, out = kcheck(f"{tmp}/exec.kcount")
check("exec after 100 steps: exit 0, log listed", r.returncode == 0 and f"kcount: log: {tmp}/exec.kcount" in r.stderr,
      (r.returncode, r.stderr))
check("exec: the log is complete (End record) with all 100 step and inner ranges",
      rc == 0 and instances(f"{tmp}/exec.kcount", "step") == 100 and instances(f"{tmp}/exec.kcount", "step/inner") == 100,
      (rc, out[-300:]))
r = run(["--output", f"{tmp}/execfail.kcount", "--", PROG, "5", "execfail"])
rc, out = kcheck(f"{tmp}/execfail.kcount")
check("an exec that fails at once: recording goes on (ranges after it recorded, one log)",
      r.returncode == 0 and rc == 0 and instances(f"{tmp}/execfail.kcount", "open_at_exit/after_exec") == 10
      and r.stderr.count("kcount: log:") == 1, (r.returncode, rc, r.stderr))

# ---- --paused: the control socket before the first NVTX call; ctl start on a dormant process.
script = f"""
import ctypes, os, sys, time
go = sys.argv[1]
pid = os.fork()
if pid == 0:  # a fork child before any NVTX call: no control socket of its own
    open(go + ".child", "w").write(str(os.getpid()))
    while not os.path.exists(go + ".child-done"): time.sleep(0.01)
    os._exit(0)
while not os.path.exists(go): time.sleep(0.01)
os.waitpid(pid, 0)
nv = ctypes.CDLL({NVTX_LIB!r}); nv.nvtxRangePushA.argtypes = [ctypes.c_char_p]
for i in range(20):
    nv.nvtxRangePushA(b"late"); nv.nvtxRangePop()
"""
with open(f"{tmp}/paused.py", "w") as f:
    f.write(script)
go = f"{tmp}/go"
e = dict(os.environ, KCOUNT_LOG_LEVEL="warn")
# Through a shell that forks it: the shell (a wrapper that never records) has a socket too.
p = subprocess.Popen([KCOUNT, "run", "--paused", "--output", f"{tmp}/paused.kcount", "--", "sh", "-c",
                      f'"{sys.executable}" "{tmp}/paused.py" "{go}"; exit $?'], stderr=subprocess.PIPE, text=True,
                     env=e)
child = child_of(p.pid)
start = time.monotonic()
st = None
while time.monotonic() - start < PATIENCE_S:
    rc, out, err = ctl(child, "status", "--format", "json")
    if rc == 0:
        st = json.loads(out)["status"]
        break
    time.sleep(0.02)
check("--paused: `kcount ctl CHILD status` answers at once, before any CUDA or NVTX call (dormant)",
      st is not None and st["mode"] == "dormant", (rc, out, err))
while not os.path.exists(go + ".child") and time.monotonic() - start < PATIENCE_S:
    time.sleep(0.01)
time.sleep(0.05)
fork_child = int(open(go + ".child").read() or 0) if os.path.exists(go + ".child") else 0
rc, out, err = ctl(fork_child, "status")
check("--paused: a fork child has no control socket (exit 5)", fork_child > 0 and rc == 5, (fork_child, rc, err))
open(go + ".child-done", "w").close()
time.sleep(0.2)
rc, out, err = ctl(p.pid, "start")
check("ctl start through kcount run's pid starts the dormant process (the program, not the shell before it)",
      rc == 0 and "recording" in out and f"its profiled process is {child}" not in err, (rc, out, err))
open(go, "w").close()
_, err = p.communicate(timeout=60)
check("--paused then started: the ranges pushed after the start are in the log",
      p.returncode == 0 and instances(f"{tmp}/paused.kcount", "late") == 20 and kcheck(f"{tmp}/paused.kcount")[0] == 0,
      (p.returncode, err))
check("--paused: the socket is removed at exit",
      not os.path.exists(os.path.join(tmp, "ctl", f"{child}.sock")), os.listdir(os.path.join(tmp, "ctl")))


# ctl start through kcount run's pid while only a wrapper runs (the program starts later): started, with a
# warning that names the process; the program itself then starts paused. The wrapper (`cat` reading a
# FIFO) waits until the check is done, however slow the machine.
fifo = f"{tmp}/later.fifo"
os.mkfifo(fifo)
p = subprocess.Popen([KCOUNT, "run", "--paused", "--output", f"{tmp}/later.kcount", "--", "sh", "-c",
                      f'cat "{fifo}" >/dev/null; "{PROG}" 5'], stderr=subprocess.PIPE, text=True, env=e)
waiter = None
start = time.monotonic()
while waiter is None and time.monotonic() - start < PATIENCE_S:
    sh = child_of(p.pid)
    kids = open(f"/proc/{sh}/task/{sh}/children").read().split() if sh else []
    if kids and open(f"/proc/{kids[0]}/comm").read().strip() == "cat" and ctl(kids[0], "status")[0] == 0:
        waiter = int(kids[0])
    time.sleep(0.02)
rc, out, err = ctl(p.pid, "start")
check("ctl start while only `cat` runs: started, with a warning naming it",
      waiter is not None and rc == 0 and
      f"process {waiter} (cat) has made no CUDA or NVTX call yet: recording starts there when it does; "
      "a program it starts later begins paused" in err, (waiter, rc, out, err))
try:
    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # cat reads end-of-file: the program runs
except OSError:
    pass  # no reader (cat never started): the check above has failed already
_, err = p.communicate(timeout=60)
check("... and the program started after it stayed paused (as warned)",
      "recording was never started" in no_log_line(err), err)


# ---- SIGINT from outside.
def interrupted(log, **env):
    e = dict(os.environ, **{k: str(v) for k, v in env.items()})
    kp = subprocess.Popen([KCOUNT, "run", "--output", log, "--", PROG, "50", "wait"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=e, preexec_fn=default_sigint)
    kp.stdout.readline()  # "nvtx_ranges done": every range is pushed
    time.sleep(1.5)  # past the first periodic flush (about every second)
    os.kill(child_of(kp.pid), signal.SIGINT)
    out, err = kp.communicate(timeout=60)
    return kp.returncode, err


rc, err = interrupted(f"{tmp}/int.kcount")
crc, cout = kcheck(f"{tmp}/int.kcount")
check("SIGINT from outside (default action): exit 130, complete log with all 50 steps",
      rc == 130 and crc == 0 and instances(f"{tmp}/int.kcount", "step") == 50, (rc, err, cout[-300:]))
plain = subprocess.Popen([PROG, "50", "wait"], stdout=subprocess.PIPE, text=True, preexec_fn=default_sigint)
plain.stdout.readline()
plain.send_signal(signal.SIGINT)
plain.wait(timeout=30)
check("SIGINT without kcount: the same end (killed by SIGINT)", plain.returncode == -signal.SIGINT, plain.returncode)
rc, err = interrupted(f"{tmp}/int0.kcount", KCOUNT_SIGINT=0)
crc, cout = kcheck(f"{tmp}/int0.kcount")
check("KCOUNT_SIGINT=0: no handler (exit 130, no End record: only the periodic flush)",
      rc == 130 and crc != 0, (rc, crc, cout[-300:]))

py = f"""
import ctypes, sys, time
nv = ctypes.CDLL({NVTX_LIB!r}); nv.nvtxRangePushA.argtypes = [ctypes.c_char_p]
for i in range(30):
    nv.nvtxRangePushA(b"py"); nv.nvtxRangePop()
try:
    print("ready", flush=True)
    time.sleep(60)
except KeyboardInterrupt:
    print("caught", flush=True)
    sys.exit(7)
"""
with open(f"{tmp}/kbi.py", "w") as f:
    f.write(py)
kp = subprocess.Popen([KCOUNT, "run", "--output", f"{tmp}/py.kcount", "--", sys.executable, f"{tmp}/kbi.py"],
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
kp.stdout.readline()
os.kill(child_of(kp.pid), signal.SIGINT)
out, err = kp.communicate(timeout=60)
check("Python's own SIGINT handling is kept (KeyboardInterrupt caught, exit 7, complete log)",
      kp.returncode == 7 and "caught" in out and kcheck(f"{tmp}/py.kcount")[0] == 0
      and instances(f"{tmp}/py.kcount", "py") == 30, (kp.returncode, out, err))

subprocess.run(["rm", "-rf", tmp])
sys.exit(exit_status())
