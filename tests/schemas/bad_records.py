"""The bad record files of the validator's corpus (``test_validate_corpus``): each a way to plant one fault under a
records folder, from a good record of the factory (``_record_factory``) or as raw text."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _record_factory import as_data, make_baseline, make_record, place, sha

from schemas import MAX_RECORD_BYTES, Record, record_relpath


@dataclass(frozen=True)
class Bad:
    """One bad file: how to plant it, and the finding it must produce (field, words in the reason)."""

    name: str
    plant: Callable[[Path], Path]
    field: str
    reason: str


def mutated(change: Callable[[dict[str, Any]], None], **kw: Any) -> Callable[[Path], Path]:
    def plant(root: Path) -> Path:
        record = make_record(**kw)
        data = as_data(record)
        change(data)
        try:  # place the file where its changed content belongs, so only the planted fault shows
            rel = record_relpath(Record.model_validate(data))
        except (ValueError, TypeError):
            rel = None
        return place(root, record, data, rel)
    return plant


def text_file(text: str) -> Callable[[Path], Path]:
    def plant(root: Path) -> Path:
        path = root / record_relpath(make_record())
        path.parent.mkdir(parents=True)
        path.write_text(text, encoding="utf-8")
        return path
    return plant


def set_field(where: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        *parents, last = where.split(".")
        for p in parents:
            data = data[p]
        data[last] = value
    return change


def delete_field(where: str) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        *parents, last = where.split(".")
        for p in parents:
            data = data[p]
        del data[last]
    return change


CANDIDATE_ROUNDS, BASELINE_ROUNDS = [1.0, 1.0, 1.0], [2.0, 2.2, 2.1]
"""Round medians of a candidate and its baselines timed in turns: per-round ratios 2.0, 2.2, 2.1, so the
speedup is 2.1 while the ratio of the medians (the factory's 2.0 / 1.0) is 2.0."""


def in_turns(data: dict[str, Any], speedup: float | None = None) -> None:
    """Candidate and baselines of a verified record timed in turns; the speedups set to ``speedup`` if given."""
    data["timing"]["round_medians_ms"] = CANDIDATE_ROUNDS
    for b in data["baselines"]:
        b["timing"]["round_medians_ms"] = BASELINE_ROUNDS
        b["baseline_id"] = None
    if speedup is not None:
        data["speedup"].update(vs_eager=speedup, vs_compile=speedup)


def wrong_folder(root: Path) -> Path:
    return place(root, make_record(), rel="h200/another-model/standard/kernelbench-v0/level-1/0019-19_relu__s0.json")


def duplicate(root: Path) -> Path:
    place(root, make_record())
    return place(root, make_record(), rel="h200/cuda-l1/standard/kernelbench-v0/level-1/0019-relu-copy__s0.json")


def conflicting_problem(root: Path) -> Path:
    place(root, make_record())
    rec = make_record(model="Other")
    data = as_data(rec)
    data["problem"]["source_sha256"] = sha("a different problem text")
    return place(root, rec, data)


ORIGINAL_REF = "records/h200/cuda-l1/standard/kernelbench-v0/level-1/0019-19_relu__s0.json"


def repro_of_another_kernel(root: Path) -> Path:
    place(root, make_record())
    rec = make_record(reproduces=ORIGINAL_REF)
    data = as_data(rec)
    data["kernel"]["sha256"] = sha("a different kernel")
    return place(root, rec, data)


def oversized(root: Path) -> Path:
    rec = make_record()
    data = as_data(rec)
    data["notes"] = ["x" * 1000] * (MAX_RECORD_BYTES // 1000 + 10)
    return place(root, rec, data)


def symlink(root: Path) -> Path:
    target = place(root, make_record())
    link = target.with_name("0020-linked__s0.json")
    link.symlink_to(target)
    return link


def linked_folder(root: Path) -> Path:
    outside = root.parent / "outside"
    outside.mkdir()
    link = root / "h200"
    root.mkdir(exist_ok=True)
    link.symlink_to(outside, target_is_directory=True)
    return link


def not_json(root: Path) -> Path:
    path = root / "h200" / "notes.txt"
    path.parent.mkdir(parents=True)
    path.write_text("hello", encoding="utf-8")
    return path


def missing_kernel_file(root: Path) -> Path:
    rec = make_record()
    data = as_data(rec)
    data["kernel"] = {"sha256": sha("x"), "language": "cuda", "path": "kernels/missing.py"}
    return place(root, rec, data)


def kernel_sha_mismatch(root: Path) -> Path:
    (root.parent / "kernels").mkdir()
    (root.parent / "kernels" / "relu.py").write_text("class ModelNew: pass\n", encoding="utf-8")
    rec = make_record()
    data = as_data(rec)
    data["kernel"] = {"sha256": sha("something else"), "language": "cuda", "path": "kernels/relu.py"}
    return place(root, rec, data)


def bad_audit(root: Path) -> Path:
    path = root / "_audits" / "h200" / "kernelbench-v0.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"suite": "kernelbench-v0"', encoding="utf-8")
    return path


def correct_without_timing(data: dict[str, Any]) -> None:
    data["timing"] = None
    data["speedup"] = {"vs_eager": None, "vs_eager_fp32": None, "vs_compile": None}


def failed_trial(data: dict[str, Any]) -> None:
    data["correctness"][0]["passed"] = False


def incorrect_no_failure(data: dict[str, Any]) -> None:
    data["status"] = "incorrect"


def error_without_text(data: dict[str, Any]) -> None:
    data.update(status="runtime_error", error=None, timing=None, correctness=[],
                speedup={"vs_eager": None, "vs_eager_fp32": None, "vs_compile": None})


def raw(edit: Callable[[str], str], **kw: Any) -> Callable[[Path], Path]:
    """A good record whose JSON text is edited as text (what a dict cannot hold: duplicate keys, 1e999)."""
    def plant(root: Path) -> Path:
        path = place(root, make_record(**kw))
        path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8")
        return path
    return plant


def deep(levels: int) -> Callable[[Path], Path]:
    def plant(root: Path) -> Path:
        path = place(root, make_record())
        text = path.read_text().replace('"notes": []', '"notes": ' + "[" * levels + "]" * levels)
        path.write_text(text, encoding="utf-8")
        return path
    return plant


def impersonation(root: Path) -> Path:
    place(root, make_record())  # the real model
    return place(root, make_record(model="cuda-l1", pid=20, name="20_LeakyReLU"))


def baseline_id(value: str) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        data["baselines"][0]["baseline_id"] = value
    return change


def baseline_of_another_timing(root: Path) -> Path:
    base = make_baseline(ms=2.5)
    place(root, base)
    data = as_data(make_record())
    data["baselines"][0]["baseline_id"] = "h200/_baselines/standard/kernelbench-v0/level-1/0019-19_relu__eager_fp32.json"
    return place(root, make_record(), data)


def kernel_through_linked_folder(root: Path) -> Path:
    outside = root.parent.parent / "secret"
    outside.mkdir()
    (outside / "key.py").write_text("TOKEN = 'x'\n", encoding="utf-8")
    (root.parent / "kernels").symlink_to(outside, target_is_directory=True)
    data = as_data(make_record())
    data["kernel"] = {"sha256": sha("anything"), "language": "cuda", "path": "kernels/key.py"}
    return place(root, make_record(), data)


def hidden_audit(root: Path) -> Path:
    path = root / "_audits" / ".hidden" / "kernelbench-v0.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"suite": "kernelbench-v0"}', encoding="utf-8")
    return path


def audit_in_the_future(root: Path) -> Path:
    path = root / "_audits" / "h200" / "kernelbench-v0.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(AUDIT | {"timestamp": "2099-01-01T00:00:00Z"}), encoding="utf-8")
    return path


def audit_lax_type(root: Path) -> Path:
    path = root / "_audits" / "h200" / "kernelbench-v0.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(AUDIT | {"draws": "4"}), encoding="utf-8")
    return path


def all_zero_times(data: dict[str, Any]) -> None:
    for key in ("mean_ms", "median_ms", "min_ms", "max_ms", "std_ms", "q1_ms", "q3_ms", "ci95_low_ms", "ci95_high_ms"):
        data["timing"][key] = 0.0
    data["speedup"] = {"vs_eager": None, "vs_eager_fp32": None, "vs_compile": None}


def one_distribution_one_trial(data: dict[str, Any]) -> None:
    data["protocol"]["distributions"] = ["D1 x1"]
    data["correctness"] = data["correctness"][:1]


def one_trial(data: dict[str, Any]) -> None:
    data["correctness"] = data["correctness"][:1]


def standard_seed_in_verified(data: dict[str, Any]) -> None:
    data["correctness"][0]["seed"] = 42


AUDIT = {"suite": "kernelbench-v0", "source": "KernelBench", "hardware": "h200", "device_name": "NVIDIA H200",
         "torch": "2.11.0", "harness_version": "0.1.0", "timestamp": "2026-11-01T12:00:00Z", "atol": 1e-5,
         "draws": 4, "timing_checked": True, "problems": []}
"""A valid audit report of no problems."""
