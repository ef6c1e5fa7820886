#!/usr/bin/env python3
"""The library's messages go only to the stderr the process had when libkcount.so loaded (inject/log.h).

A Python program preloaded with the library records one NVTX range (through the NVTX export library, as
PyTorch's NVTX does), so the library prints its `[kcount] info: log: ...` line at exit. Cases:
  closed   the program closes fd 2 and opens a data file, which becomes fd 2: the file holds only the
           program's bytes; kcount's line goes to the original stderr.
  dup2     the program dup2()s a log file of its own onto fd 2 and writes to it: the file holds only the
           program's lines; kcount's line goes to the original stderr.
  started-closed  the process starts with fd 2 closed; the data file it opens (fd 2) holds only its bytes
           and kcount prints nothing.
  exec     a program exec'd by the preloaded process (LD_PRELOAD removed, descriptors not closed) holds no
           descriptor of the library's (the duplicate is close-on-exec).
Usage: test_library_stderr.py BUILD_DIR NVTX_EXPORT_LIB
"""
import os
import subprocess
import sys
import tempfile

from checks import check, exit_status

build, nvtx_lib = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
lib = os.path.join(build, "lib", "libkcount.so")


PROGRAM = r'''
import ctypes, os, subprocess, sys
mode, data = sys.argv[1], sys.argv[2]
n = ctypes.CDLL(sys.argv[3])
n.nvtxRangePushA(b"step"); n.nvtxRangePop()
if mode == "closed":
    os.close(2)
    fd = os.open(data, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    assert fd == 2, fd
    os.write(fd, b"DATA")
elif mode == "dup2":
    fd = os.open(data, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 2)
    os.close(fd)
    os.write(2, b"APP line\n")
elif mode == "started-closed":
    fd = os.open(data, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    assert fd == 2, fd
    os.write(fd, b"DATA")
elif mode == "exec":
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    child = ("import os\n"
             "for e in sorted(os.listdir('/proc/self/fd'), key=int):\n"
             "    try: print(e, os.readlink('/proc/self/fd/' + e))\n"
             "    except OSError: pass\n")
    out = subprocess.run([sys.executable, "-c", child], close_fds=False, env=env, capture_output=True, text=True)
    mine = subprocess.run([sys.executable, "-c", child.replace("/proc/self/fd", "/proc/%d/fd" % os.getpid())],
                          env=env, capture_output=True, text=True)
    open(data, "w").write(out.stdout + "parent\n" + mine.stdout)
'''

with tempfile.TemporaryDirectory() as work:
    prog = os.path.join(work, "prog.py")
    open(prog, "w").write(PROGRAM)

    def run(mode, stderr_closed=False):
        data = os.path.join(work, mode + ".data")
        log = os.path.join(work, mode + ".kcount")
        env = dict(os.environ, LD_PRELOAD=lib, KCOUNT_OUTPUT=log)
        env.pop("NVTX_INJECTION64_PATH", None)
        err = os.path.join(work, mode + ".err")
        with open(err, "wb") as e:
            # The child's own stderr is `e`, or closed (pass_fds cannot close 2: a shell does it).
            argv = [sys.executable, prog, mode, data, nvtx_lib]
            if stderr_closed:
                argv = ["sh", "-c", 'exec "$@" 2>&-', "sh"] + argv
            r = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=e)
        return r.returncode, open(data, "rb").read() if os.path.exists(data) else None, open(err, "rb").read(), log

    rc, data, err, log = run("closed")
    check("closed: program exit 0", rc == 0, f"rc {rc}, stderr {err[:300]!r}")
    check("closed: data file holds only the program's bytes", data == b"DATA", repr(data[:300] if data else data))
    check("closed: kcount's log line on the original stderr", b"[kcount] info: log: " in err and os.path.exists(log),
          repr(err[:300]))

    rc, data, err, log = run("dup2")
    check("dup2: program's log file holds only its lines", rc == 0 and data == b"APP line\n",
          f"rc {rc}, {data[:300] if data else data!r}")
    check("dup2: kcount's log line on the stderr the process started with", b"[kcount] info: log: " in err,
          repr(err[:300]))

    rc, data, err, log = run("started-closed", stderr_closed=True)
    check("started-closed: data file holds only the program's bytes", rc == 0 and data == b"DATA",
          f"rc {rc}, {data[:300] if data else data!r}")
    check("started-closed: log written, nothing printed", os.path.exists(log) and err == b"", repr(err[:300]))

    rc, data, err, log = run("exec")
    fds, parent = {}, {}
    into = fds
    for line in (data or b"").decode().splitlines():
        if line == "parent":
            into = parent
            continue
        num, target = line.split(" ", 1)
        into[int(num)] = target
    stderr_target = fds.get(2)
    extra = {n: t for n, t in fds.items() if n > 2 and t == stderr_target}
    high = {n: t for n, t in fds.items() if n >= 512}
    check("exec: the preloaded process holds its stderr's duplicate at fd >= 512",
          any(n >= 512 and t == parent.get(2) for n, t in parent.items()), f"parent fds {parent}")
    check("exec: the exec'd program has fds 0-2", rc == 0 and {0, 1, 2} <= set(fds), f"rc {rc}, fds {fds}")
    check("exec: no descriptor of the library's in the exec'd program", not extra and not high,
          f"fds {fds}")

sys.exit(exit_status())
