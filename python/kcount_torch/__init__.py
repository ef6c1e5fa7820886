"""The former name of `kcount.torch` (the PyTorch helper), kept so that code written against it runs.

`import kcount_torch` and `from kcount_torch import modules` give the very modules of `kcount.torch`
(one copy of the helper's state: hooks installed through either name are the same hooks).
"""
import sys

import kcount.torch
from kcount.torch import _kcount, modules, ops

for _name, _module in (("_kcount", _kcount), ("modules", modules), ("ops", ops)):
    sys.modules[__name__ + "." + _name] = _module
sys.modules[__name__] = kcount.torch
