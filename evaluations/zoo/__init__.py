"""The exploit zoo and the honest kernels: candidates that prove the verified protocol's checks.

``manifest.json`` lists every entry: its file, kind (``exploit`` or ``honest``), problem file in
``problems/``, the hack's short name, the integrity check that must catch it (``null`` for honest
kernels), and whether it needs CUDA. Records of the zoo use the model names ``exploit-zoo`` and
``honest-kernels`` (provider ``kernelverdict``).
"""

from ._attacks import load_attacks
from ._check import BothOutcomes, evaluate_both, evaluate_verified
from ._manifest import ZOO_DIR, ZooEntry, load_manifest, zoo_job

__all__ = ["ZOO_DIR", "BothOutcomes", "ZooEntry", "evaluate_both", "evaluate_verified", "load_attacks", "load_manifest",
           "zoo_job"]
