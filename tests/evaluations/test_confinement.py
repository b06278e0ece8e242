"""Hostile candidates against the runner itself (the zoo's attack entries), and the honest kernel beside them.

One scenario runs ``kverdict eval`` three times into one records folder and one build folder, each in
a session of its own (a candidate signals the runner's process group): an honest kernel, then every
attack entry with secrets in the runner's environment, then the honest kernel again (a resume).
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import schemas
from evaluations.run import load_module, worker_environment
from evaluations.worker import scopes_signals, unavailable
from evaluations.zoo import ZOO_DIR, load_attacks

REPO = Path(__file__).resolve().parents[2]
ATTACKS = load_attacks()
HONEST = ZOO_DIR / "honest" / "1_relu_nonneg__torch.py"
SECRETS = {"KVERDICT_TEST_SECRET": "kv-secret-4f1c9a", "GITHUB_TOKEN": "ghp_notarealtoken7d2e",
           "DEPLOY_NOTE": "unlisted-value-93b1"}
"""Values that must never reach a worker: an allowed prefix with a secret's name, a token, an unlisted name."""


def _eval(out: Path, build: Path, candidates: Path, model: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    args = [sys.executable, "-m", "evaluations.cli", "eval", "--problems", str(ZOO_DIR / "problems"),
            "--candidates", str(candidates), "--model", model, "--provider", "kernelverdict", "--out", str(out),
            "--build-dir", str(build), "--protocol", "standard", "--timed-calls", "5", "--warmup-calls", "1",
            "--no-progress", "--device", "cpu", "--timeout", "120"]
    return subprocess.run(args, env=env, cwd=REPO, capture_output=True, text=True, timeout=900,
                          start_new_session=True)


def _records(out: Path, model: str) -> dict[str, schemas.Record]:
    found = {}
    for path in out.rglob("*.json"):
        record = schemas.load_record(path)
        if isinstance(record, schemas.Record) and record.model.name == model:
            found[Path(record.kernel.path).name] = record
    return found


def _manifest_findings(out: Path) -> list[str]:
    from schemas import validate

    return [str(f) for f in validate([out], root=out) if f.field == "(manifest)"]


def _tamper_from_outside(out: Path) -> None:
    """What the tampering attack tries, done by a process outside the run (the user, or a worker where the kernel
    has no Landlock): a baseline made 100x slower, the honest record deleted."""
    for path in out.rglob("*.json"):
        data = json.loads(path.read_text())
        if "_baselines" in path.parts:
            data["timing"]["mean_ms"] *= 100
            path.write_text(json.dumps(data, indent=2))
        elif data.get("model", {}).get("name") == "honest-kernels":
            path.unlink()


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    base = tmp_path_factory.mktemp("attacks")
    out, build, pids = base / "out", base / "build", base / "pids"
    pids.mkdir()
    honest = base / "honest"
    honest.mkdir()
    shutil.copy(HONEST, honest / HONEST.name)
    env = dict(os.environ, PYTHONPATH=str(REPO), KVERDICT_ZOO_PIDS=str(pids), KVERDICT_WORKER_WRITABLE=str(pids))
    first = _eval(out, build, honest, "honest-kernels", env)
    assert first.returncode == 0, first.stderr[-3000:]
    attacked = _eval(out, build, ZOO_DIR / "attacks", "exploit-zoo", {**env, **SECRETS})
    after_attacks = {"records": _records(out, "exploit-zoo"), "findings": _manifest_findings(out),
                     "files": {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}}
    _tamper_from_outside(out)
    tampered = {"tampered_findings": _manifest_findings(out),
                "tampered_files": {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}}
    resumed = _eval(out, build, honest, "honest-kernels", env)
    return {"out": out, "pids": pids, "attacked": attacked, "resumed": resumed, **after_attacks, **tampered,
            "honest_after": _records(out, "honest-kernels")}


def test_a_run_under_attack_finishes_and_evaluates_every_candidate(scenario):
    assert scenario["attacked"].returncode == 0, scenario["attacked"].stderr[-3000:]
    assert sorted(scenario["records"]) == sorted(e.path.name for e in ATTACKS)


@pytest.mark.parametrize("entry", ATTACKS, ids=lambda e: e.path.stem)
def test_attack_gets_its_declared_status(entry, scenario):
    record = scenario["records"][entry.path.name]
    assert record.status == entry.expected_status["standard"], record.error


@pytest.mark.parametrize(("name", "signal_name"), [("signal_parent", "SIGINT"), ("signal_group", "SIGTERM")])
def test_a_signal_to_the_runner_fails_only_its_candidate(scenario, name, signal_name):
    record = scenario["records"][f"1_relu_nonneg__{name}.py"]
    assert record.status == "runtime_error"
    if scopes_signals():  # the kernel refuses the signal: the runner never receives it
        assert "PermissionError: [Errno 1] Operation not permitted" in record.error, record.error
    else:
        assert f"the candidate sent {signal_name} to the runner" in record.error


def test_no_escaped_process_survives_the_run(scenario):
    pid_files = sorted(scenario["pids"].glob("*.pid"))
    assert [p.name.split("-")[1] for p in pid_files] == ["fork", "session"]  # both escapes did start
    for path in pid_files:
        stat = Path(f"/proc/{path.read_text()}/stat")
        assert not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z", path.name


def test_no_environment_value_reaches_a_record(scenario):
    record = scenario["records"]["1_relu_nonneg__environ_leak.py"]
    assert "leaked: {" in record.error  # it did raise with what it found
    for path, data in scenario["files"].items():
        for value in SECRETS.values():
            assert value.encode() not in data, (value, path)


def test_a_poisoned_bytecode_cache_poisons_nothing(scenario):
    assert scenario["records"]["1_relu_nonneg__poison_pyc.py"].status == "correct"
    honest = scenario["honest_after"][HONEST.name]
    assert honest.status == "correct", honest.error  # judged against the real problem, not zeros


@pytest.mark.skipif(unavailable() is not None, reason="this kernel has no Landlock")
def test_a_candidate_cannot_change_the_records_folder(scenario):
    assert scenario["findings"] == []  # the attack's rewrite and deletions were all refused
    record = scenario["records"]["1_relu_nonneg__tamper_records.py"]
    assert record.status == "correct"  # it carried on quietly, as an attacker would


def test_tampered_and_deleted_records_are_reported_and_redone(scenario):
    findings = scenario["tampered_findings"]
    assert any("_baselines" in f and "changed after it was written" in f for f in findings), findings
    assert any("honest-kernels" in f and "deleted after it was written" in f for f in findings), findings
    resumed = scenario["resumed"]
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "changed since its run wrote it (digest differs from the manifest), redone" in resumed.stdout
    assert "1 records written" in resumed.stdout  # the deleted honest record, evaluated again
    assert _manifest_findings(scenario["out"]) == []  # the redone baseline and record match their lines again
    baseline = next(p for p in scenario["out"].rglob("*.json") if "_baselines" in p.parts)
    tampered = json.loads(scenario["tampered_files"][baseline])["timing"]["mean_ms"]
    assert schemas.load_record(baseline).timing.mean_ms < tampered / 10  # measured anew, not the 100x copy


def test_every_attack_file_is_listed_with_a_docstring_saying_what_stops_it():
    assert {e.file for e in ATTACKS} == {f"attacks/{p.name}" for p in (ZOO_DIR / "attacks").glob("*.py")}
    for entry in ATTACKS:
        doc = entry.path.read_text().split('"""')[1]
        assert "Expected outcome:" in doc and entry.expected_status["standard"] in doc, entry.file
        assert ("NOT stopped" in doc) == (entry.stopped != "yes"), entry.file


def test_a_module_is_compiled_from_its_text_and_its_source_stays_readable(tmp_path):
    source = "def kernel(x):\n    return x + 1\n"
    first = load_module(source, "t")
    assert inspect.getsource(first.kernel) == source  # what Triton's @jit reads
    path = Path(first.__file__)
    pyc = path.parent / "__pycache__" / f"{path.stem}.cpython-{sys.version_info[0]}{sys.version_info[1]}.pyc"
    pyc.parent.mkdir(exist_ok=True)
    pyc.write_bytes(b"poisoned")
    path.write_text("def kernel(x):\n    return 0\n")
    second = load_module(source, "t")
    assert second.kernel(1) == 2 and inspect.getsource(second.kernel) == source


def test_the_worker_environment_keeps_what_torch_needs_and_drops_secrets():
    env = {"PATH": "/usr/bin", "HOME": "/root", "LC_ALL": "C", "CUDA_VISIBLE_DEVICES": "0", "TORCH_LOGS": "x",
           "KVERDICT_GPU_LOCK": "/tmp/l", "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True", **SECRETS,
           "AWS_SECRET_ACCESS_KEY": "a", "HF_TOKEN": "b", "SSH_AUTH_SOCK": "c", "CUDA_API_KEY": "d"}
    assert set(worker_environment(env)) == {"PATH", "HOME", "LC_ALL", "CUDA_VISIBLE_DEVICES", "TORCH_LOGS",
                                            "KVERDICT_GPU_LOCK", "PYTORCH_CUDA_ALLOC_CONF"}
