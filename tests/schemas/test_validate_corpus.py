"""A corpus of bad record files, each refused by ``schemas.validate`` with the right one-line reason."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _record_factory import as_data, make_baseline, make_record, place, sha

from schemas import MAX_RECORD_BYTES, MAX_STRING_CHARS, Record, Roofline, record_relpath, validate


@dataclass(frozen=True)
class Bad:
    """One bad file: how to plant it, and the finding it must produce (field, words in the reason)."""

    name: str
    plant: Callable[[Path], Path]
    field: str
    reason: str


def _mutated(change: Callable[[dict[str, Any]], None], **kw: Any) -> Callable[[Path], Path]:
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


def _text(text: str) -> Callable[[Path], Path]:
    def plant(root: Path) -> Path:
        path = root / record_relpath(make_record())
        path.parent.mkdir(parents=True)
        path.write_text(text, encoding="utf-8")
        return path
    return plant


def _set(where: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        *parents, last = where.split(".")
        for p in parents:
            data = data[p]
        data[last] = value
    return change


def _delete(where: str) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        *parents, last = where.split(".")
        for p in parents:
            data = data[p]
        del data[last]
    return change


CANDIDATE_ROUNDS, BASELINE_ROUNDS = [1.0, 1.0, 1.0], [2.0, 2.2, 2.1]
"""Round medians of a candidate and its baselines timed in turns: per-round ratios 2.0, 2.2, 2.1, so the
speedup is 2.1 while the ratio of the medians (the factory's 2.0 / 1.0) is 2.0."""


def _in_turns(data: dict[str, Any], speedup: float | None = None) -> None:
    """Candidate and baselines of a verified record timed in turns; the speedups set to ``speedup`` if given."""
    data["timing"]["round_medians_ms"] = CANDIDATE_ROUNDS
    for b in data["baselines"]:
        b["timing"]["round_medians_ms"] = BASELINE_ROUNDS
        b["baseline_id"] = None
    if speedup is not None:
        data["speedup"].update(vs_eager=speedup, vs_compile=speedup)


def _wrong_folder(root: Path) -> Path:
    return place(root, make_record(), rel="h200/another-model/standard/kernelbench-v0/level-1/0019-19_relu__s0.json")


def _duplicate(root: Path) -> Path:
    place(root, make_record())
    return place(root, make_record(), rel="h200/cuda-l1/standard/kernelbench-v0/level-1/0019-relu-copy__s0.json")


def _conflicting_problem(root: Path) -> Path:
    place(root, make_record())
    rec = make_record(model="Other")
    data = as_data(rec)
    data["problem"]["source_sha256"] = sha("a different problem text")
    return place(root, rec, data)


ORIGINAL_REF = "records/h200/cuda-l1/standard/kernelbench-v0/level-1/0019-19_relu__s0.json"


def _repro_of_another_kernel(root: Path) -> Path:
    place(root, make_record())
    rec = make_record(reproduces=ORIGINAL_REF)
    data = as_data(rec)
    data["kernel"]["sha256"] = sha("a different kernel")
    return place(root, rec, data)


def _oversized(root: Path) -> Path:
    rec = make_record()
    data = as_data(rec)
    data["notes"] = ["x" * 1000] * (MAX_RECORD_BYTES // 1000 + 10)
    return place(root, rec, data)


def _symlink(root: Path) -> Path:
    target = place(root, make_record())
    link = target.with_name("0020-linked__s0.json")
    link.symlink_to(target)
    return link


def _linked_folder(root: Path) -> Path:
    outside = root.parent / "outside"
    outside.mkdir()
    link = root / "h200"
    root.mkdir(exist_ok=True)
    link.symlink_to(outside, target_is_directory=True)
    return link


def _not_json(root: Path) -> Path:
    path = root / "h200" / "notes.txt"
    path.parent.mkdir(parents=True)
    path.write_text("hello", encoding="utf-8")
    return path


def _missing_kernel_file(root: Path) -> Path:
    rec = make_record()
    data = as_data(rec)
    data["kernel"] = {"sha256": sha("x"), "language": "cuda", "path": "kernels/missing.py"}
    return place(root, rec, data)


def _kernel_sha_mismatch(root: Path) -> Path:
    (root.parent / "kernels").mkdir()
    (root.parent / "kernels" / "relu.py").write_text("class ModelNew: pass\n", encoding="utf-8")
    rec = make_record()
    data = as_data(rec)
    data["kernel"] = {"sha256": sha("something else"), "language": "cuda", "path": "kernels/relu.py"}
    return place(root, rec, data)


def _bad_audit(root: Path) -> Path:
    path = root / "_audits" / "h200" / "kernelbench-v0.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"suite": "kernelbench-v0"', encoding="utf-8")
    return path


def _correct_without_timing(data: dict[str, Any]) -> None:
    data["timing"] = None
    data["speedup"] = {"vs_eager": None, "vs_eager_fp32": None, "vs_compile": None}


def _failed_trial(data: dict[str, Any]) -> None:
    data["correctness"][0]["passed"] = False


def _incorrect_no_failure(data: dict[str, Any]) -> None:
    data["status"] = "incorrect"


def _error_without_text(data: dict[str, Any]) -> None:
    data.update(status="runtime_error", error=None, timing=None, correctness=[],
                speedup={"vs_eager": None, "vs_eager_fp32": None, "vs_compile": None})


def _raw(edit: Callable[[str], str], **kw: Any) -> Callable[[Path], Path]:
    """A good record whose JSON text is edited as text (what a dict cannot hold: duplicate keys, 1e999)."""
    def plant(root: Path) -> Path:
        path = place(root, make_record(**kw))
        path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8")
        return path
    return plant


def _deep(levels: int) -> Callable[[Path], Path]:
    def plant(root: Path) -> Path:
        path = place(root, make_record())
        text = path.read_text().replace('"notes": []', '"notes": ' + "[" * levels + "]" * levels)
        path.write_text(text, encoding="utf-8")
        return path
    return plant


def _impersonation(root: Path) -> Path:
    place(root, make_record())  # the real model
    return place(root, make_record(model="cuda-l1", pid=20, name="20_LeakyReLU"))


def _baseline_id(value: str) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        data["baselines"][0]["baseline_id"] = value
    return change


def _baseline_of_another_timing(root: Path) -> Path:
    base = make_baseline(ms=2.5)
    place(root, base)
    data = as_data(make_record())
    data["baselines"][0]["baseline_id"] = "h200/_baselines/standard/kernelbench-v0/level-1/0019-19_relu__eager_fp32.json"
    return place(root, make_record(), data)


def _kernel_through_linked_folder(root: Path) -> Path:
    outside = root.parent.parent / "secret"
    outside.mkdir()
    (outside / "key.py").write_text("TOKEN = 'x'\n", encoding="utf-8")
    (root.parent / "kernels").symlink_to(outside, target_is_directory=True)
    data = as_data(make_record())
    data["kernel"] = {"sha256": sha("anything"), "language": "cuda", "path": "kernels/key.py"}
    return place(root, make_record(), data)


def _hidden_audit(root: Path) -> Path:
    path = root / "_audits" / ".hidden" / "kernelbench-v0.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"suite": "kernelbench-v0"}', encoding="utf-8")
    return path


def _audit_in_the_future(root: Path) -> Path:
    path = root / "_audits" / "h200" / "kernelbench-v0.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(AUDIT | {"timestamp": "2099-01-01T00:00:00Z"}), encoding="utf-8")
    return path


def _audit_lax_type(root: Path) -> Path:
    path = root / "_audits" / "h200" / "kernelbench-v0.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(AUDIT | {"draws": "4"}), encoding="utf-8")
    return path


def _all_zero_times(data: dict[str, Any]) -> None:
    for key in ("mean_ms", "median_ms", "min_ms", "max_ms", "std_ms", "q1_ms", "q3_ms", "ci95_low_ms", "ci95_high_ms"):
        data["timing"][key] = 0.0
    data["speedup"] = {"vs_eager": None, "vs_eager_fp32": None, "vs_compile": None}


def _one_distribution_one_trial(data: dict[str, Any]) -> None:
    data["protocol"]["distributions"] = ["D1 x1"]
    data["correctness"] = data["correctness"][:1]


def _one_trial(data: dict[str, Any]) -> None:
    data["correctness"] = data["correctness"][:1]


def _standard_seed_in_verified(data: dict[str, Any]) -> None:
    data["correctness"][0]["seed"] = 42


AUDIT = {"suite": "kernelbench-v0", "source": "KernelBench", "hardware": "h200", "device_name": "NVIDIA H200",
         "torch": "2.11.0", "harness_version": "0.1.0", "timestamp": "2026-11-01T12:00:00Z", "atol": 1e-5,
         "draws": 4, "timing_checked": True, "problems": []}
"""A valid audit report of no problems."""


CORPUS = [
    Bad("malformed JSON", _text('{"schema_version": "1.0", "model": '), "(file)", "malformed JSON at line 1"),
    Bad("not an object", _text("[1, 2, 3]"), "(file)", "expected a JSON object, got list"),
    Bad("NaN time", _text('{"schema_version": "1.0", "timing": {"mean_ms": NaN}}'), "(file)", "NaN is not a valid number"),
    Bad("Infinity time", _text('{"schema_version": "1.0", "x": Infinity}'), "(file)", "Infinity is not a valid number"),
    Bad("wrong type", _mutated(_set("timing.mean_ms", "fast")), "timing.mean_ms", "valid number"),
    Bad("wrong type in list", _mutated(_set("correctness", {"trial": 1})), "correctness", "valid array"),
    Bad("missing field", _mutated(_delete("model")), "model", "Field required"),
    Bad("missing nested field", _mutated(_delete("environment.torch")), "environment.torch", "Field required"),
    Bad("negative time", _mutated(_set("timing.min_ms", -0.5)), "timing", "min_ms must not be negative"),
    Bad("negative speedup", _mutated(_set("speedup.vs_eager", -2.0)), "speedup", "positive finite"),
    Bad("unknown status", _mutated(_set("status", "fast")), "status", "Input should be 'correct'"),
    Bad("unknown field", _mutated(_set("claimed_speedup", 10.0)), "claimed_speedup", "Extra inputs are not permitted"),
    Bad("unknown schema version", _mutated(_set("schema_version", "2.0")), "schema_version", "unknown schema version '2.0'"),
    Bad("unknown protocol version", _mutated(_set("protocol.version", "9.9")), "protocol.version", "unknown version '9.9'"),
    Bad("unknown protocol", _mutated(_set("protocol.name", "quick")), "protocol.name", "Input should be 'standard'"),
    Bad("protocol statistic", _mutated(_set("protocol.timing.statistic", "mean"), protocol_name="verified"),
        "protocol.timing.statistic", "uses the median"),
    Bad("speedup inconsistent", _mutated(_set("speedup.vs_eager", 3.0)), "speedup.vs_eager",
        "3.0 disagrees with eager_fp32 mean_ms / candidate mean_ms = 2.0 / 1.0 = 2"),
    Bad("speedup of the wrong statistic", _mutated(_set("timing.mean_ms", 1.09)), "speedup.vs_eager", "disagrees"),
    Bad("speedup in turns from the medians", _mutated(_in_turns, protocol_name="verified"), "speedup.vs_eager",
        "disagrees with the median of the per-round ratios eager_tf32 / candidate of their round_medians_ms = 2.1"),
    Bad("round median outside the samples", _mutated(lambda d: (_in_turns(d, 2.1),
                                                                _set("timing.round_medians_ms", [1.0, 1.0, 9.0])(d)),
                                                     protocol_name="verified"),
        "timing.round_medians_ms", "round 2's median 9.0 lies outside [min_ms, max_ms]"),
    Bad("round median not positive", _mutated(lambda d: (_in_turns(d, 2.1),
                                                         _set("timing.round_medians_ms", [1.0, 0.0, 1.0])(d)),
                                              protocol_name="verified"),
        "timing", "round_medians_ms[1] must be finite and positive"),
    Bad("speedup column not in protocol", _mutated(_set("speedup.vs_compile", 2.0)), "speedup.vs_compile",
        "protocol 'standard' has no vs_compile speedup"),
    Bad("speedup without its baseline", _mutated(_set("baselines", [])), "speedup.vs_eager",
        "needs the eager_fp32 baseline"),
    Bad("baseline kind of another protocol",
        _mutated(lambda d: d["baselines"].append({**d["baselines"][0], "kind": "compile"})),
        "baselines", "'compile' is not part of protocol 'standard'"),
    Bad("mean outside min and max", _mutated(_set("timing.mean_ms", 0.5)), "timing.mean_ms", "outside [min_ms, max_ms]"),
    Bad("correct without timing", _mutated(_correct_without_timing), "status", "'correct' needs the candidate's timing"),
    Bad("correct with a failed trial", _mutated(_failed_trial), "(record)", "status 'correct' but a correctness trial failed"),
    Bad("incorrect without a failed trial", _mutated(_incorrect_no_failure), "status",
        "'incorrect' needs a failed correctness trial"),
    Bad("hacked without a failed check", _mutated(_set("status", "hacked"), protocol_name="verified"), "(record)",
        "'hacked' needs at least one failed integrity check"),
    Bad("error without text", _mutated(_error_without_text), "error", "'runtime_error' needs the error text"),
    Bad("GPU environment incomplete", _mutated(_set("environment.driver", None)), "environment.driver",
        "required for GPU hardware 'h200'"),
    Bad("empty torch version", _mutated(_set("environment.torch", " ")), "environment.torch", "must not be empty"),
    Bad("path/field mismatch", _wrong_folder, "(layout)",
        "expected records/h200/cuda-l1/standard/kernelbench-v0/level-1/0019-19_relu__s0.json"),
    Bad("duplicate", _duplicate, "(duplicate)", "same evaluation as"),
    Bad("conflicting problem", _conflicting_problem, "problem", "has a different name or source_sha256"),
    Bad("absolute source path", _mutated(_set("kernel.path", "/home/me/relu.py")), "kernel.path",
        "must be a relative path, not an absolute one"),
    Bad("windows source path", _mutated(_set("kernel.path", "C:\\kernels\\relu.py")), "kernel.path", "absolute"),
    Bad("dot-dot source path", _mutated(_set("kernel.path", "kernels/../../etc/passwd")), "kernel.path",
        "must not contain '..'"),
    Bad("url without https", _mutated(_set("kernel.url", "http://example.org/repo")), "kernel.url", "https://"),
    Bad("commit not a hash", _mutated(_set("kernel.commit", "main")), "kernel.commit", "commit hash"),
    Bad("kernel sha256 missing", _mutated(_delete("kernel.sha256")), "kernel.sha256", "Field required"),
    Bad("kernel sha256 malformed", _mutated(_set("kernel.sha256", "abc")), "kernel.sha256", "64 lowercase hex"),
    Bad("kernel file missing", _missing_kernel_file, "kernel.path", "kernels/missing.py is not a file in the repository"),
    Bad("kernel sha256 mismatch", _kernel_sha_mismatch, "kernel.sha256", "does not match kernels/relu.py"),
    Bad("reproduces escapes", _mutated(_set("reproduces", "../outside.json")), "reproduces", "without '..'"),
    Bad("reproduction without its original", _mutated(_set("reproduces", ORIGINAL_REF)), "reproduces",
        "is not a record in the repository"),
    Bad("reproduction of another kernel", _repro_of_another_kernel, "kernel.sha256", "differs from the original"),
    Bad("oversized file", _oversized, "(file)", f"over the {MAX_RECORD_BYTES}-byte limit"),
    Bad("oversized string", _mutated(_set("notes", ["y" * (MAX_STRING_CHARS + 1)])), "notes[0]",
        f"over the {MAX_STRING_CHARS} limit"),
    Bad("overlong name", _mutated(_set("model.name", "m" * 121)), "model.name", "at most 120 characters"),
    Bad("control character in model name", _mutated(_set("model.name", "evil\x1b[31m")), "model.name",
        "control character U+001B"),
    Bad("newline in problem name", _mutated(_set("problem.name", "relu\nInjected: line")), "problem.name",
        "control character U+000A"),
    Bad("bidi override in a label", _mutated(_set("labels", ["ok\u202etxt.exe"])), "labels[0]", "U+202E"),
    Bad("timing out of order", _mutated(_set("timing.median_ms", 5.0)), "timing.median_ms", "outside [min_ms, max_ms]"),
    Bad("symbolic link", _symlink, "(file)", "symbolic links are not accepted"),
    Bad("symbolic link to a folder", _linked_folder, "(file)", "symbolic links are not accepted"),
    Bad("stray file", _not_json, "(file)", "not a record"),
    Bad("malformed audit report", _bad_audit, "(file)", "malformed JSON"),
    # issue 24: a hostile record cannot break, mislead or take over the site
    Bad("NBSP impersonation", _mutated(_set("model.name", "CUDA-L1\u00a0")), "model.name", "not in Unicode NFKC form"),
    Bad("full-width impersonation", _mutated(_set("model.name", "ＣＵＤＡ-L1")), "model.name", "write it as 'CUDA-L1'"),
    Bad("doubled space in a name", _mutated(_set("model.name", "CUDA  L1")), "model.name", "repeated spaces"),
    Bad("name colliding with an existing model's page", _impersonation, "model.name",
        "'cuda-l1' collides with 'CUDA-L1'"),
    Bad("hidden audit folder", _hidden_audit, "(file)", "hidden name '.hidden'"),
    Bad("audit from the future", _audit_in_the_future, "timestamp", "lies in the future"),
    Bad("audit with a lax type", _audit_lax_type, "draws", "valid integer"),
    Bad("1e999 in an unbounded field", _raw(lambda t: t.replace('"flops": 1000000.0', '"flops": 1e999'),
                                            roofline=Roofline(flops=1e6, min_bytes=8e6, t_sol_ms=0.002)),
        "roofline.flops", "1e999 is out of range"),
    Bad("infinite absolute error", _raw(lambda t: t.replace('"max_abs_error": 1e-06', '"max_abs_error": 1e999', 1)),
        "correctness[0].max_abs_error", "out of range"),
    Bad("huge finite number", _mutated(_set("memory.candidate_peak_bytes", 10**17)), "memory.candidate_peak_bytes",
        "out of range"),
    Bad("lone surrogate", _mutated(_set("model.provider", "\ud800")), "model.provider", "lone surrogate U+D800"),
    Bad("deep nesting", _deep(40), "notes[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]",
        "nested more than 16 levels deep"),
    Bad("nesting past the parser's stack", _deep(100_000), "(file)", "nested more than 16 levels deep"),
    Bad("standard with loose tolerances", _mutated(lambda d: d["protocol"].update(atol=10.0, rtol=10.0)),
        "protocol.atol", "standard 1.0 pins atol = 0.01"),
    Bad("standard with its own seeds", _mutated(_set("protocol.seeds", [1, 2, 3, 4, 5])), "protocol.seeds",
        "pins seeds"),
    Bad("standard with few timed calls", _mutated(_set("protocol.timing.timed_calls", 10)),
        "protocol.timing.timed_calls", "pins timing.timed_calls = 100"),
    Bad("verified with one distribution and one trial", _mutated(_one_distribution_one_trial, protocol_name="verified"),
        "protocol.distributions", "verified 1.1 pins distributions"),
    Bad("verified correct with one trial", _mutated(_one_trial, protocol_name="verified"), "correctness",
        "'correct' needs 3 trials of 'D1 x1'"),
    Bad("verified 1.2 without its L2 flush", _mutated(lambda d: (_set("protocol.version", "1.2")(d),
                                                                 _set("protocol.timing.l2_flush", False)(d)),
                                                      protocol_name="verified"),
        "protocol.timing.l2_flush", "verified 1.2 pins timing.l2_flush = True"),
    Bad("verified with a standard seed", _mutated(_standard_seed_in_verified, protocol_name="verified"),
        "correctness[0]", "not a fresh seed"),
    Bad("standard trial with another seed", _mutated(_set("correctness", [])) if False else
        _mutated(lambda d: d["correctness"][1].update(seed=7)), "correctness[1]", "must use the protocol's seed"),
    Bad("all-zero times on a correct record", _mutated(_all_zero_times), "timing", "a time of zero is not a measurement"),
    Bad("int field as a string", _raw(lambda t: t.replace('"sample": 0', '"sample": "0"')), "model.sample",
        "valid integer"),
    Bad("bool field as a string", _raw(lambda t: t.replace('"passed": true', '"passed": "true"', 1)),
        "correctness[0].passed", "valid boolean"),
    Bad("float field as a string", _raw(lambda t: t.replace('"atol": 0.01', '"atol": "0.01"')), "protocol.atol",
        "valid number"),
    Bad("int field as a float", _raw(lambda t: t.replace('"level": 1', '"level": 1.0')), "problem.level",
        "valid integer"),
    Bad("duplicate key", _raw(lambda t: t.replace('"status": "correct"', '"status": "correct", "status": "hacked"')),
        "status", "key 'status' is given more than once"),
    Bad("duplicate nested key", _raw(lambda t: t.replace('"mean_ms": 1.0', '"mean_ms": 1.0, "mean_ms": 0.01', 1)),
        "timing.mean_ms", "key 'mean_ms' is given more than once"),
    Bad("negative error", _mutated(lambda d: d["correctness"][0].update(max_abs_error=-1.0)),
        "correctness[0].max_abs_error", "never negative"),
    Bad("kernel url with credentials", _mutated(_set("kernel.url", "https://user:token@github.com/org/repo")),
        "kernel.url", "must not hold credentials"),
    Bad("kernel url with a token", _mutated(_set("kernel.url", "https://ghp_abc@github.com/org/repo")),
        "kernel.url", "must not hold credentials"),
    Bad("timestamp in 2099", _mutated(_set("environment.timestamp", "2099-01-01T00:00:00Z")),
        "environment.timestamp", "lies in the future"),
    Bad("timestamp without a time zone", _mutated(_set("environment.timestamp", "2026-11-01T12:00:00")),
        "environment.timestamp", "must name its time zone"),
    Bad("dangling baseline id", _mutated(_baseline_id("h200/_baselines/standard/kernelbench-v0/level-1/0019-x.json")),
        "baselines[0].baseline_id", "is not a baseline record"),
    Bad("baseline id escaping the records", _mutated(_baseline_id("../../etc/passwd")), "baselines[0].baseline_id",
        "without '..'"),
    Bad("baseline id of another timing", _baseline_of_another_timing, "baselines[0].baseline_id",
        "the timing differs"),
    Bad("kernel through a linked folder", _kernel_through_linked_folder, "kernel.path",
        "passes through a symbolic link (kernels)"),
    Bad("problem id over 32 bits", _mutated(_set("problem.id", 2**40)), "problem.id", "must be at most 2147483647"),
]


def test_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 54 + 30
    assert len({b.name for b in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize("bad", CORPUS, ids=[b.name for b in CORPUS])
def test_bad_record_is_refused_with_its_reason(tmp_path: Path, bad: Bad) -> None:
    root = tmp_path / "records"
    root.mkdir()
    path = bad.plant(root)
    findings = validate(root=root)
    mine = [f for f in findings if Path(f.path).resolve() == path.resolve() or f.path == str(path)]
    assert mine, f"no finding for {path}; all findings: {findings}"
    assert any(f.field == bad.field and bad.reason in f.reason for f in mine), [str(f) for f in mine]
    for f in findings:
        line = str(f)
        assert "\n" not in line and line.startswith(f"{f.path}: {f.field}: ")


def test_good_records_pass(tmp_path: Path) -> None:
    root = tmp_path / "records"
    (tmp_path / "kernels").mkdir()
    kernel_text = "class ModelNew:\n    pass\n"
    (tmp_path / "kernels" / "relu.py").write_text(kernel_text, encoding="utf-8")
    in_repo = make_record(model="Own Kernels", pid=20, name="20_LeakyReLU")
    in_repo_data = as_data(in_repo)
    in_repo_data["kernel"] = {"sha256": sha(kernel_text), "language": "pytorch", "path": "kernels/relu.py"}
    good = [make_record(), make_record(sample=1), make_record(protocol_name="verified"),
            make_record(hardware="cpu"), make_baseline(), make_baseline(kind="eager_tf32", protocol_name="verified"),
            make_record(reproduces="records/h200/cuda-l1/standard/kernelbench-v0/level-1/0019-19_relu__s0.json")]
    for rec in good:
        place(root, rec)
    place(root, in_repo, in_repo_data)
    turns = make_record(protocol_name="verified", pid=23, name="23_Softmax")
    turns_data = as_data(turns)
    _in_turns(turns_data, 2.1)  # timed in turns: the speedup is the median of per-round ratios
    place(root, turns, turns_data)
    (root / "README.md").write_text("Contributed records.\n", encoding="utf-8")
    assert validate(root=root) == []


def test_html_in_names_is_accepted(tmp_path: Path) -> None:
    root = tmp_path / "records"
    rec = make_record(model="<script>alert(1)</script>", name="<img src=x onerror=alert(1)>")
    path = place(root, rec)
    assert "script-alert-1-script" in path.as_posix()
    assert validate(root=root) == []
    assert json.loads(path.read_text())["model"]["name"] == "<script>alert(1)</script>"


def test_failed_statuses_with_their_evidence_pass(tmp_path: Path) -> None:
    root = tmp_path / "records"
    failed = as_data(make_record())
    failed["correctness"][2]["passed"] = False
    none = {"vs_eager": None, "vs_eager_fp32": None, "vs_compile": None}
    place(root, make_record(status="incorrect"), {**failed, "status": "incorrect", "timing": None, "speedup": none})
    hacked = as_data(make_record(protocol_name="verified", pid=21, name="21_Sigmoid"))
    hacked["integrity"].append({"name": "output-aliasing", "passed": False, "evidence": "output storage overlaps input 0"})
    place(root, make_record(protocol_name="verified", pid=21, name="21_Sigmoid"), {**hacked, "status": "hacked"})
    crash = as_data(make_record(pid=22, name="22_Tanh"))
    crash.update(status="timeout", error="no result within 300 s", timing=None, correctness=[], speedup=none)
    place(root, make_record(pid=22, name="22_Tanh"), crash)
    assert validate(root=root) == []


def test_a_large_absolute_error_of_large_outputs_passes(tmp_path: Path) -> None:
    # a product reduction's outputs near float32's limit: an absolute error of 1e32 is a relative one of 1e-3
    root = tmp_path / "records"
    data = as_data(make_record())
    data["correctness"][0]["max_abs_error"] = 2.46e32
    place(root, make_record(), data)
    assert validate(root=root) == []


def test_validating_one_file_outside_the_root_names_the_expected_place(tmp_path: Path) -> None:
    elsewhere = place(tmp_path / "drafts", make_record())
    findings = validate([elsewhere], root=tmp_path / "records")
    assert [f.field for f in findings] == ["(layout)"]
    assert "not under the records folder" in findings[0].reason


def test_no_sha256_of_a_file_outside_the_repository_is_printed(tmp_path: Path) -> None:
    root = tmp_path / "repo" / "records"
    root.mkdir(parents=True)
    path = _kernel_through_linked_folder(root)
    outside = hashlib.sha256((tmp_path / "secret" / "key.py").read_bytes()).hexdigest()
    findings = validate(root=root)
    assert [f.field for f in findings if f.path.endswith(path.name)] == ["kernel.path"]
    assert all(outside not in str(f) for f in findings)


def test_good_records_of_every_protocol_version_and_their_baselines_pass(tmp_path: Path) -> None:
    root = tmp_path / "records"
    base = make_baseline()
    base_id = place(root, base).relative_to(root).as_posix()
    standard = as_data(make_record())
    standard["baselines"][0]["baseline_id"] = base_id
    place(root, make_record(), standard)
    for pid, version in ((30, "1.0"), (31, "1.1"), (32, "1.2")):
        rec = make_record(protocol_name="verified", pid=pid, name=f"{pid}_Op")
        data = as_data(rec)
        data["protocol"]["version"] = version
        place(root, rec, data)
    place(root, make_record(model="Deep Seek\u00e9 R1", pid=33, name="33_Op"))  # NFKC, single spaces
    repro = make_record(reproduces="records/" + record_relpath(make_record()).as_posix())
    repro_data = as_data(repro)  # a reproduction times its baselines afresh: its ids name only the layout's place
    repro_data["baselines"][0]["baseline_id"] = "h200/_baselines/standard/kernelbench-v0/level-1/0019-19_relu__x.json"
    place(root, repro, repro_data)
    assert validate(root=root) == []


ROW = {"key": "L1/23", "self_speedup": {"standard": 1.001}, "ref_ms": {"standard": 0.05}}


@pytest.mark.parametrize(("line", "field", "reason"), [
    (json.dumps({**ROW, "self_speedup": {"standard": True}}), "line 2: self_speedup.standard", "positive number"),
    (json.dumps({**ROW, "ref_ms": {"standard": -1}}), "line 2: ref_ms.standard", "positive number"),
    ('{"key": "L1/1", "key": "L1/2"}', "line 2: key", "given more than once"),
    ('{"key": "L1/1", "self_speedup": {"x": 1e999}, "ref_ms": {"x": 1}}', "line 2: self_speedup.x", "out of range"),
    (json.dumps({**ROW, "key": "L1/\x1b[2J"}), "line 2: key", "control character U+001B"),
    ("[1]", "line 2: (row)", "expected a JSON object"),
])
def test_benchmark_rows_the_site_reads_are_validated(tmp_path: Path, line: str, field: str, reason: str) -> None:
    root = tmp_path / "records"
    root.mkdir()
    rows = tmp_path / "benchmarks" / "results" / ".hidden" / "self_speedup.jsonl"
    rows.parent.mkdir(parents=True)
    rows.write_text(json.dumps(ROW) + "\n" + line + "\n", encoding="utf-8")
    findings = validate(root=root)
    assert [(f.field, reason in f.reason) for f in findings] == [(field, True)], [str(f) for f in findings]


def test_benchmark_rows_through_a_symbolic_link_are_refused(tmp_path: Path) -> None:
    (tmp_path / "records").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "self_speedup.jsonl").write_text(json.dumps(ROW) + "\n", encoding="utf-8")
    (tmp_path / "benchmarks" / "results").mkdir(parents=True)
    (tmp_path / "benchmarks" / "results" / "h200").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    findings = validate(root=tmp_path / "records")
    assert [(f.field, "symbolic link" in f.reason) for f in findings] == [("(file)", True)]
