"""In-program control of libkcount.so: open and close capture windows from the profiled program itself.

The library listens on a control socket, `FOLDER/PID.sock` (docs/usage.md, `kcount ctl`), and this module
talks to its own process's socket as `kcount ctl PID start|stop|status` does: one JSON request line, one
JSON answer line (`{"ok", "error", "status"}`). FOLDER follows the library's rule
(collector/control_folder.h): KCOUNT_CONTROL_DIR if set, else $XDG_RUNTIME_DIR/kcount when that is an
absolute path, else /tmp/kcount-EUID. The socket exists once the library started (at the first CUDA call,
or at process start with KCOUNT_CONTROL=on, which `kcount run --paused` sets).

Whether the library is in the process is asked through its exported `kcount_recording()` (found as the
PyTorch helper finds it, kcount/torch/_kcount.py). In a process started without the library, `start`,
`stop` and `window` do nothing and warn once (KcountWarning); `status` returns None.
Thread-safe: each call opens its own connection; the library serves one request at a time.
"""
import contextlib
import json
import os
import socket
import sys
import threading
import warnings

from kcount._tool import KcountError

__all__ = ["KcountWarning", "ControlError", "start", "stop", "status", "window", "socket_path"]

_HERE = os.path.dirname(os.path.abspath(__file__))
_TIMEOUT_S = 60.0  # a stop waits for CUPTI's flush and the window's records to be written


class KcountWarning(UserWarning):
    """Warned once when the process was not started with libkcount.so and control calls do nothing."""


class ControlError(KcountError):
    """The library answered a control request with an error (`message`: its words, e.g. a window is
    already open), or its control socket could not be reached. `returncode` is None."""


_warned = False
_warn_lock = threading.Lock()


def _warn_once():
    global _warned
    with _warn_lock:
        if _warned:
            return
        _warned = True
    # Pointed at the program's line: the first frame outside this package and contextlib (window()).
    level, frame = 1, sys._getframe(0)
    while frame is not None and (frame.f_code.co_filename.startswith(_HERE + os.sep) or
                                 frame.f_code.co_filename == contextlib.__file__):
        frame, level = frame.f_back, level + 1
    warnings.warn("kcount: this process was not started with libkcount.so (kcount run, LD_PRELOAD or "
                  "CUDA_INJECTION64_PATH): kcount.start(), stop() and window() do nothing", KcountWarning,
                  stacklevel=level)


def _library_loaded():
    from kcount.torch._kcount import RecordingState
    return RecordingState().mode == "kcount"


def socket_path(pid=None):
    """The control socket of process `pid` (default: this one) by the library's rule; it may not exist."""
    folder = os.environ.get("KCOUNT_CONTROL_DIR", "")
    if not folder:
        xdg = os.environ.get("XDG_RUNTIME_DIR", "")
        folder = xdg + "/kcount" if xdg.startswith("/") else "/tmp/kcount-%d" % os.geteuid()
    return os.path.join(folder, "%d.sock" % (os.getpid() if pid is None else pid))


def _ask(request):
    """Sends one request to this process's control socket; returns the answer object. Raises ControlError."""
    path = socket_path()
    if not os.path.exists(path):
        raise ControlError("libkcount.so is loaded but has no control socket at %s yet: it opens at the "
                           "process's first CUDA call, or at start with KCOUNT_CONTROL=on (kcount run --paused)"
                           % path)
    line = (json.dumps(request) + "\n").encode("utf-8")
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(_TIMEOUT_S)
            s.connect(path)
            s.sendall(line)
            answer = b""
            while not answer.endswith(b"\n"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                answer += chunk
    except OSError as e:
        raise ControlError("control socket %s: %s" % (path, e)) from None
    try:
        reply = json.loads(answer.decode("utf-8", "replace"))
    except ValueError:
        raise ControlError("control socket %s: no answer (%r)" % (path, answer[:200])) from None
    if not reply.get("ok"):
        raise ControlError(reply.get("error") or "request refused")
    return reply


def _request(cmd, **fields):
    if not _library_loaded():
        _warn_once()
        return None
    request = {"cmd": cmd}
    request.update({k: v for k, v in fields.items() if v is not None})
    return _ask(request).get("status")


def start(duration=None, range=None, skip=None, count=None):
    """Opens a capture window now (as `kcount ctl PID start`), closed by `stop()` or after `duration`
    seconds. With `range` (an NVTX range name), arms a capture range instead: the window covers
    occurrences skip+1 .. skip+count of that range counted from now. Returns the library's status (a
    dict, as `kcount ctl status --format json` prints it), or None (one KcountWarning) in a process
    started without the library. Raises ControlError when the library refuses (a window already open)."""
    duration_ns = None if duration is None else int(round(float(duration) * 1e9))
    return _request("start", duration_ns=duration_ns, range=range, skip=skip, count=count)


def stop():
    """Closes the open window (or disarms an armed range); when it returns, the window's records are in
    the log. Returns the status, or None without the library (one KcountWarning). Raises ControlError
    when no window is open or armed."""
    return _request("stop")


def status():
    """The library's status (mode, open window, records so far, log path), or None in a process
    started without the library (no warning)."""
    if not _library_loaded():
        return None
    return _ask({"cmd": "status"}).get("status")


@contextlib.contextmanager
def window():
    """`with kcount.window():` records the block: a window opened at entry and closed at exit (also when
    the block raises). Without the library, runs the block unrecorded (one KcountWarning)."""
    opened = start() is not None
    try:
        yield
    finally:
        if opened:
            stop()
