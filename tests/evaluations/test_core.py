"""The floor every stage shares: torch-free to import, what a protocol is, and the classes a worker may send."""

from __future__ import annotations

import io
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from evaluations import core
from evaluations.worker import _isolation

ROOT = Path(__file__).resolve().parents[2]


def test_the_floor_imports_without_torch_and_gives_its_torch_parts_on_first_use() -> None:
    code = ("import sys; sys.modules['torch'] = None; import evaluations.core as c; "
            "print(c.median([3.0, 1.0, 2.0]), c.Job.__module__, c.gpulock.__name__)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2.0", "evaluations.core._types", "evaluations.core._gpulock"]


@pytest.mark.parametrize("name", sorted(core.PROTOCOLS))
def test_every_registered_protocol_implements_the_protocol_type(name: str) -> None:
    module = core.get_protocol(name)
    assert isinstance(module, core.EvaluationProtocol)
    assert set(module.SPEEDUP_BASELINE.values()) <= set(module.BASELINE_KINDS)


def test_a_module_missing_an_entry_point_is_not_a_protocol() -> None:
    class Half:
        INFO = None
        BASELINE_KINDS = ("eager",)
        SPEEDUP_BASELINE = {"eager": "eager"}

        @staticmethod
        def run_candidate(job):  # no run_baseline, no judge
            return None

    assert not isinstance(Half(), core.EvaluationProtocol)


def test_an_unknown_protocol_is_refused_by_name() -> None:
    with pytest.raises(core.ProtocolUnavailable, match="unknown protocol 'fastest'"):
        core.get_protocol("fastest")


@pytest.mark.parametrize("value", [
    core.CandidateOutcome(status="correct"),
    core.BaselineOutcome(kind="eager", timing=core.summarize([1.0, 2.0], "host_clock")),
    core.Judgement(rulings=[core.Ruling("D1 x1 seed 1", True, 0.5)]),
])
def test_a_worker_may_send_what_the_floor_defines_and_the_runner_reads_it_back(value) -> None:
    assert _isolation._Unpickler(io.BytesIO(pickle.dumps(("ok", value)))).load() == ("ok", value)


def test_the_runner_refuses_a_class_of_the_floor_that_is_no_message() -> None:
    with pytest.raises(pickle.UnpicklingError, match="may not hold evaluations.core._types.Job"):
        _isolation._Unpickler(io.BytesIO(pickle.dumps(core.Job(
            problem=core.Problem("s", 1, 1, "p", "", core.Origin("p.py")), protocol="standard", device="cpu")))).load()
