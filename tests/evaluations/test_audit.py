"""``kverdict audit`` flags planted degenerate problems, passes sound ones, and survives crashing references."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluations.cli import main
from schemas import AuditReport

PLANTED = {
    "1_sound_gemm.py": """
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, n)

    def forward(self, a, b):
        return torch.softmax(self.fc(a @ b), dim=-1) * 10

def get_inputs():
    return [torch.randn(16, 24), torch.randn(24, 32)]

def get_init_inputs():
    return [32]
""",
    "2_sound_relu.py": """
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)

def get_inputs():
    return [torch.randn(64, 64)]

def get_init_inputs():
    return []
""",
    "3_always_zero_clamp.py": """
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.clamp(torch.clamp(x, max=-1.0), min=0.0)

def get_inputs():
    return [torch.randn(64, 64)]

def get_init_inputs():
    return []
""",
    "4_ignores_second_input.py": """
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x, y):
        return x * 2.0

def get_inputs():
    return [torch.randn(64, 64), torch.randn(64, 64)]

def get_init_inputs():
    return []
""",
    "5_call_counter.py": """
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return x * self.calls

def get_inputs():
    return [torch.randn(64, 64)]

def get_init_inputs():
    return []
""",
    "6_near_zero.py": """
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.tanh(x) * 1e-4

def get_inputs():
    return [torch.randn(64, 64)]

def get_init_inputs():
    return []
""",
    "7_ignores_weights.py": """
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 64)

    def forward(self, x):
        return x + 0.0 * self.fc(x)

def get_inputs():
    return [torch.randn(64, 64)]

def get_init_inputs():
    return []
""",
    "8_dropout_training.py": """
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(x)

def get_inputs():
    return [torch.randn(64, 64)]

def get_init_inputs():
    return []
""",
    "9_crashes.py": """
import os
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        os._exit(3)

def get_inputs():
    return [torch.randn(4)]

def get_init_inputs():
    return []
""",
    "10_hangs.py": """
import time
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        time.sleep(600)
        return x

def get_inputs():
    return [torch.randn(4)]

def get_init_inputs():
    return []
""",
    "11_raises.py": """
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        raise ValueError("shape mismatch in the reference")

def get_inputs():
    return [torch.randn(4)]

def get_init_inputs():
    return []
""",
    "12_sound_after_failures.py": """
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.cumsum(x, dim=1)

def get_inputs():
    return [torch.randn(32, 48)]

def get_init_inputs():
    return []
""",
}


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> AuditReport:
    """One audit run over every planted problem, through the command line."""
    root = tmp_path_factory.mktemp("audit")
    suite = root / "planted"
    suite.mkdir()
    for name, source in PLANTED.items():
        (suite / name).write_text(source.lstrip())
    out = root / "report.json"
    rc = main(["audit", "--problems", str(suite), "--device", "cpu", "--out", str(out), "--timeout", "8",
               "--log", str(root / "worker.log"), "--no-progress"])
    assert rc == 0
    return AuditReport.model_validate(json.loads(out.read_text()))


def _entry(report: AuditReport, name: str):
    return next(p for p in report.problems if p.name.split("_", 1)[1] == name)


def _codes(report: AuditReport, name: str, severity: str = "exclude") -> set[str]:
    return {f.code for f in _entry(report, name).findings if f.severity == severity}


def test_every_problem_gets_an_entry_in_order(report: AuditReport) -> None:
    assert sorted(p.id for p in report.problems) == list(range(1, len(PLANTED) + 1))
    assert report.hardware == "cpu" and report.timing_checked is False
    assert any("launch-overhead" in n for n in report.notes)


@pytest.mark.parametrize("name", ["sound_gemm", "sound_relu", "sound_after_failures"])
def test_sound_problems_pass(report: AuditReport, name: str) -> None:
    entry = _entry(report, name)
    assert entry.findings == [] and not entry.excluded and entry.reason is None
    assert entry.output_shapes


@pytest.mark.parametrize(("name", "code"), [
    ("always_zero_clamp", "zero-output"),
    ("ignores_second_input", "ignores-input"),
    ("call_counter", "nondeterministic"),
    ("near_zero", "near-zero-output"),
    ("ignores_weights", "ignores-weights"),
    ("dropout_training", "nondeterministic"),
    ("crashes", "reference-error"),
    ("hangs", "reference-timeout"),
    ("raises", "reference-error"),
])
def test_degenerate_problems_are_excluded_with_the_right_finding(report: AuditReport, name: str, code: str) -> None:
    entry = _entry(report, name)
    assert entry.excluded
    assert code in _codes(report, name)
    assert entry.reason


def test_findings_name_their_evidence(report: AuditReport) -> None:
    ignored = next(f for f in _entry(report, "ignores_second_input").findings if f.code == "ignores-input")
    assert "input 1" in ignored.message  # the second input, not the first
    assert "ValueError: shape mismatch" in next(f.evidence for f in _entry(report, "raises").findings)
    assert "exit code 3" in next(f.evidence for f in _entry(report, "crashes").findings)
    near = next(f for f in _entry(report, "near_zero").findings if f.code == "near-zero-output")
    assert "max |out|" in near.evidence


def test_default_report_path_and_only_filter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    suite = tmp_path / "mini"
    suite.mkdir()
    for name in ("2_sound_relu.py", "3_always_zero_clamp.py"):
        (suite / name).write_text(PLANTED[name].lstrip())
    monkeypatch.chdir(tmp_path)
    assert main(["audit", "--problems", str(suite), "--device", "cpu", "--only", "*zero*", "--no-progress"]) == 0
    report = AuditReport.model_validate_json((tmp_path / "records/_audits/cpu/mini.json").read_text())
    assert [p.name for p in report.problems] == ["3_always_zero_clamp"] and report.problems[0].excluded


def test_user_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "--problems", str(tmp_path / "missing"), "--device", "cpu"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("kverdict audit: error:") and "\n" not in err


def test_timing_findings_need_a_gpu_and_name_the_cause() -> None:
    from evaluations.audit import Probe, findings_for

    def probe(device: str, eager_ms: float, doubled_ms: float | None) -> Probe:
        return Probe(draw_max_abs=[1.0, 1.0], draw_all_zero=[False, False], draw_finite=[True, True],
                     timed_on=device, eager_ms=eager_ms, doubled_ms=doubled_ms)

    assert [f.code for f in findings_for(probe("cuda", 0.008, 0.009), 1e-2)] == ["launch-bound"]
    assert [f.severity for f in findings_for(probe("cuda", 0.008, 0.009), 1e-2)] == ["exclude"]
    flat = findings_for(probe("cuda", 0.5, 0.55), 1e-2)
    assert [(f.code, f.severity) for f in flat] == [("time-not-scaling", "warn")]
    assert findings_for(probe("cuda", 0.5, 1.0), 1e-2) == []  # time doubles with the work: sound
    assert findings_for(probe("cpu", 0.008, None), 1e-2) == []  # no launch overhead to judge on a CPU


KERNELBENCH_V0 = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "cuda-l1-h100" / "h100.jsonl"


@pytest.mark.slow
@pytest.mark.skipif(not KERNELBENCH_V0.is_file(), reason="the public CUDA-L1 bundle is not on this machine")
def test_kernelbench_always_zero_problems_are_excluded(tmp_path: Path) -> None:
    """KernelBench-Verified excluded level-2 problems 23, 80 and 83; the audit finds them at real size."""
    out = tmp_path / "kb.json"
    only = "kernelbench-v0/2/23,kernelbench-v0/2/80,kernelbench-v0/2/83,kernelbench-v0/1/19"
    assert main(["audit", "--problems", str(KERNELBENCH_V0), "--device", "cpu", "--only", only, "--out", str(out),
                 "--log", str(tmp_path / "worker.log"), "--draws", "2", "--no-progress"]) == 0
    report = AuditReport.model_validate_json(out.read_text())
    excluded = {p.key: p for p in report.problems if p.excluded}
    assert set(excluded) == {"kernelbench-v0/2/23", "kernelbench-v0/2/80", "kernelbench-v0/2/83"}
    assert "near-zero-output" in {f.code for f in excluded["kernelbench-v0/2/23"].findings}
    assert {"zero-output"} <= {f.code for f in excluded["kernelbench-v0/2/80"].findings}


def test_own_suite_is_sound_at_reduced_size(tmp_path: Path) -> None:
    """No KernelVerdict problem is excluded (the real sizes are audited on the GPU)."""
    from dataclasses import replace

    from evaluations import load_problems
    from evaluations.audit import AuditOptions, audit_problems
    from evaluations.suite import SUITE_DIR, suite_files

    reduced = {f.path.name: f.spec.reduced for f in suite_files()}
    problems = []
    for p in load_problems(SUITE_DIR):
        shrink = "".join(f"\n{k} = {v!r}" for k, v in reduced[p.file_name].items())
        problems.append(replace(p, source=p.source + shrink))  # get_inputs() reads the constants when called
    entries = audit_problems(problems, AuditOptions(device="cpu", draws=2, timeout_s=60, log_path=str(tmp_path / "w.log")))
    assert len(entries) == len(problems) >= 60
    assert [(e.name, e.reason) for e in entries if e.excluded] == []
