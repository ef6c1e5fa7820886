"""kcount's interpreter-start hook (docs/torch-modules.md).

`kcount run --torch-modules` / `--torch-ops` (or libkcount.so preloaded with KCOUNT_TORCH_MODULES=1 or
KCOUNT_TORCH_OPS=1) put this folder first on PYTHONPATH, so Python's `site` module imports this file at
start-up. It:

1. installs kcount.torch's import hook, but only if one of the switches is set (otherwise it does
   nothing, and never imports torch: the hook acts once the program itself has imported torch);
2. then runs the `sitecustomize` that Python would have imported without this folder (the next one on
   sys.path, e.g. Debian's /usr/lib/python3.X/sitecustomize.py or the user's own), under the name
   `sitecustomize`, so it is not shadowed. Its errors propagate to `site`, which reports them as it
   always does ("Error in sitecustomize; ...").
"""
import os as _os
import sys as _sys


def _kcount_boot():
    if any(_os.environ.get(v, "") not in ("", "0") for v in ("KCOUNT_TORCH_MODULES", "KCOUNT_TORCH_OPS",
                                                              "KCOUNT_TORCH_BACKWARD")):
        try:
            import kcount.torch
            kcount.torch.install_import_hook()
        except Exception as e:  # never break the program's start-up
            _sys.stderr.write("[kcount] warning: torch module ranges not installed: %s: %s\n" % (type(e).__name__, e))
            return
        # `kcount run` learns that a Python process of its command started the helper (tools/run.cpp):
        # one note in its report file, appended, never created here.
        report = _os.environ.get("KCOUNT_RUN_REPORT", "")
        if report:
            try:
                fd = _os.open(report, _os.O_WRONLY | _os.O_APPEND)
                try:
                    _os.write(fd, b"\0torchhelper %d\n" % _os.getpid())
                finally:
                    _os.close(fd)
            except OSError:
                pass


def _kcount_chain():
    """Imports the next `sitecustomize` on sys.path (after this file's folder) in place of this one."""
    import importlib.machinery
    import importlib.util
    here = _os.path.dirname(_os.path.abspath(__file__))
    rest = []
    for p in _sys.path:
        try:
            same = _os.path.abspath(p or _os.getcwd()) == here
        except Exception:
            same = False
        if not same:
            rest.append(p)
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    _sys.modules["sitecustomize"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        _sys.modules.pop("sitecustomize", None)
        raise


_kcount_boot()
_kcount_chain()
