"""What the same-process comparisons (bench/ab_same_process.py, bench/ab_floor.py) share: a private
control-socket folder for one process, running it with its output in files, and reading its JSON lines."""
import os
import subprocess
import tempfile

import run_bench


def control_dir(work):
    """A new folder under `work` for one process's kcount control socket (mode 0700, as kcount requires)."""
    d = tempfile.mkdtemp(prefix="ctl-", dir=work)
    os.chmod(d, 0o700)
    return d


def run_child(argv, env, out_path, err_path, timeout_s, cpus=None):
    """Runs argv with stdout into out_path and stderr into err_path; `cpus` (a list of CPU numbers): the
    child's CPU affinity (sched_setaffinity before exec), None: inherited. Returns the exit status (124
    when it ran past timeout_s seconds and was killed)."""
    setup = None if cpus is None else (lambda: os.sched_setaffinity(0, cpus))
    with open(out_path, "w") as so, open(err_path, "w") as se:
        try:
            return subprocess.run(argv, env=env, stdout=so, stderr=se, timeout=timeout_s,
                                  preexec_fn=setup).returncode
        except subprocess.TimeoutExpired:
            return 124


def json_lines(path):
    """The JSON objects printed one per line, in order; other lines are skipped (run_bench.parse_json_lines)."""
    return run_bench.parse_json_lines(path)
