"""Attack (cache poisoning): plants bytecode for the problem's module so later workers load a zeros reference.

It finds the problem's module in its own process, compiles a version whose ``Model`` returns zeros, and
writes it as the ``.pyc`` beside the module's ``__file__``, stamped with the source file's own time and
size so an import through the import system takes it. Stopped: workers compile problems and candidates
from the source text the runner hands them (``load_module``) and never read a file or a bytecode cache,
and ``__file__`` names a copy in a folder private to the worker. The candidate itself computes ReLU.
Expected outcome: ``correct`` under both protocols, and every later evaluation unaffected.
"""

import importlib._bootstrap_external as external
import importlib.util
import inspect
import os
import sys

import torch
import torch.nn as nn

POISON = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.zeros_like(x)


def get_inputs():
    return [torch.rand(64, 256)]


def get_init_inputs():
    return []
'''


def _poison():
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if name.startswith("kv_problem_") and path and os.path.exists(path):
            stat = os.stat(path)
            code = compile(POISON, path, "exec")
            pyc = importlib.util.cache_from_source(path)
            os.makedirs(os.path.dirname(pyc), exist_ok=True)
            with open(pyc, "wb") as fh:
                fh.write(external._code_to_timestamp_pyc(code, stat.st_mtime, stat.st_size))
            inspect.getsource(module)  # what it found is the problem's text


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        _poison()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)
