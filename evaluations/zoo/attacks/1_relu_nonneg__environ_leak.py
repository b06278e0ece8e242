"""Attack (environment read): raises with every secret-looking variable it can find, to publish them.

It reads ``os.environ`` and ``/proc/self/environ`` and raises with the values of names that look like
secrets (and every value, if none does), so they would land in the record's ``error``. Stopped: every
worker starts with an allowlisted environment (``_confine.worker_environment``): names outside the
list, and names that look like secrets, never reach it. NOT stopped: files the user can read, and the
environment of other processes of the same user (``/proc/PID/environ`` of the runner or its shell).
Expected outcome: ``runtime_error`` under both protocols, with no secret in its error.
"""

import os

import torch.nn as nn

WORDS = ("SECRET", "TOKEN", "PASSWORD", "KEY", "CREDENTIAL", "AUTH")


def _leak():
    with open("/proc/self/environ", "rb") as fh:
        raw = dict(item.split(b"=", 1) for item in fh.read().split(b"\0") if b"=" in item)
    found = {k: v for k, v in os.environ.items() if any(w in k.upper() for w in WORDS)}
    found.update({k.decode(): v.decode() for k, v in raw.items() if any(w.encode() in k.upper() for w in WORDS)})
    return found or dict(os.environ)


class ModelNew(nn.Module):
    def forward(self, x):
        raise RuntimeError(f"leaked: {_leak()}")
