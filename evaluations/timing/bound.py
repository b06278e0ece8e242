"""Device functions every timing module uses, bound at import of ``evaluations.timing``."""

from __future__ import annotations

import torch

# Bound at import, before any candidate code runs: a candidate that replaces these cannot fake a time
# (the replacement itself is caught by the function-patching check).
_elapsed = torch.cuda.Event.elapsed_time
_synchronize = torch.cuda.synchronize
