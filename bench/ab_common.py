"""What the same-process comparisons (bench/ab_same_process.py, bench/ab_floor.py) share: a private
control-socket folder for one process, running it with its output in files, and reading its JSON lines."""
import json
import os
import subprocess
import tempfile


def control_dir(work):
    """A new folder under `work` for one process's kcount control socket (mode 0700, as kcount requires)."""
    d = tempfile.mkdtemp(prefix="ctl-", dir=work)
    os.chmod(d, 0o700)
    return d


def run_child(argv, env, out_path, err_path, timeout_s):
    """Runs argv with stdout into out_path and stderr into err_path. Returns the exit status (124 when
    it ran past timeout_s seconds and was killed)."""
    with open(out_path, "w") as so, open(err_path, "w") as se:
        try:
            return subprocess.run(argv, env=env, stdout=so, stderr=se, timeout=timeout_s).returncode
        except subprocess.TimeoutExpired:
            return 124


def json_lines(path):
    """The JSON objects of a file, one per line; other lines are skipped."""
    out = []
    with open(path) as f:
        for line in f:
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict):
                out.append(obj)
    return out
