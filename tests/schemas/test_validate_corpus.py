"""A corpus of bad record files, each refused by ``schemas.validate`` with the right one-line reason; good records,
and the benchmark rows the site reads."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from _record_factory import as_data, make_baseline, make_record, place, sha
from bad_records import (
    ORIGINAL_REF,
    Bad,
    all_zero_times,
    audit_in_the_future,
    audit_lax_type,
    bad_audit,
    baseline_id,
    baseline_of_another_timing,
    conflicting_problem,
    correct_without_timing,
    deep,
    delete_field,
    duplicate,
    error_without_text,
    failed_trial,
    hidden_audit,
    impersonation,
    in_turns,
    incorrect_no_failure,
    kernel_sha_mismatch,
    kernel_through_linked_folder,
    linked_folder,
    missing_kernel_file,
    mutated,
    not_json,
    one_distribution_one_trial,
    one_trial,
    oversized,
    raw,
    repro_of_another_kernel,
    set_field,
    standard_seed_in_verified,
    symlink,
    text_file,
    wrong_folder,
)

from schemas import MAX_RECORD_BYTES, MAX_STRING_CHARS, Roofline, record_relpath, validate

CORPUS = [
    Bad("malformed JSON", text_file('{"schema_version": "1.0", "model": '), "(file)", "malformed JSON at line 1"),
    Bad("not an object", text_file("[1, 2, 3]"), "(file)", "expected a JSON object, got list"),
    Bad("NaN time", text_file('{"schema_version": "1.0", "timing": {"mean_ms": NaN}}'), "(file)", "NaN is not a valid number"),
    Bad("Infinity time", text_file('{"schema_version": "1.0", "x": Infinity}'), "(file)", "Infinity is not a valid number"),
    Bad("wrong type", mutated(set_field("timing.mean_ms", "fast")), "timing.mean_ms", "valid number"),
    Bad("wrong type in list", mutated(set_field("correctness", {"trial": 1})), "correctness", "valid array"),
    Bad("missing field", mutated(delete_field("model")), "model", "Field required"),
    Bad("missing nested field", mutated(delete_field("environment.torch")), "environment.torch", "Field required"),
    Bad("negative time", mutated(set_field("timing.min_ms", -0.5)), "timing", "min_ms must not be negative"),
    Bad("negative speedup", mutated(set_field("speedup.vs_eager", -2.0)), "speedup", "positive finite"),
    Bad("unknown status", mutated(set_field("status", "fast")), "status", "Input should be 'correct'"),
    Bad("unknown field", mutated(set_field("claimed_speedup", 10.0)), "claimed_speedup", "Extra inputs are not permitted"),
    Bad("unknown schema version", mutated(set_field("schema_version", "2.0")), "schema_version", "unknown schema version '2.0'"),
    Bad("unknown protocol version", mutated(set_field("protocol.version", "9.9")), "protocol.version", "unknown version '9.9'"),
    Bad("unknown protocol", mutated(set_field("protocol.name", "quick")), "protocol.name", "Input should be 'standard'"),
    Bad("protocol statistic", mutated(set_field("protocol.timing.statistic", "mean"), protocol_name="verified"),
        "protocol.timing.statistic", "uses the median"),
    Bad("speedup inconsistent", mutated(set_field("speedup.vs_eager", 3.0)), "speedup.vs_eager",
        "3.0 disagrees with eager_fp32 mean_ms / candidate mean_ms = 2.0 / 1.0 = 2"),
    Bad("speedup of the wrong statistic", mutated(set_field("timing.mean_ms", 1.09)), "speedup.vs_eager", "disagrees"),
    Bad("speedup in turns from the medians", mutated(in_turns, protocol_name="verified"), "speedup.vs_eager",
        "disagrees with the median of the per-round ratios eager_tf32 / candidate of their round_medians_ms = 2.1"),
    Bad("round median outside the samples", mutated(lambda d: (in_turns(d, 2.1),
                                                                set_field("timing.round_medians_ms", [1.0, 1.0, 9.0])(d)),
                                                     protocol_name="verified"),
        "timing.round_medians_ms", "round 2's median 9.0 lies outside [min_ms, max_ms]"),
    Bad("round median not positive", mutated(lambda d: (in_turns(d, 2.1),
                                                         set_field("timing.round_medians_ms", [1.0, 0.0, 1.0])(d)),
                                              protocol_name="verified"),
        "timing", "round_medians_ms[1] must be finite and positive"),
    Bad("speedup column not in protocol", mutated(set_field("speedup.vs_compile", 2.0)), "speedup.vs_compile",
        "protocol 'standard' has no vs_compile speedup"),
    Bad("speedup without its baseline", mutated(set_field("baselines", [])), "speedup.vs_eager",
        "needs the eager_fp32 baseline"),
    Bad("baseline kind of another protocol",
        mutated(lambda d: d["baselines"].append({**d["baselines"][0], "kind": "compile"})),
        "baselines", "'compile' is not part of protocol 'standard'"),
    Bad("mean outside min and max", mutated(set_field("timing.mean_ms", 0.5)), "timing.mean_ms", "outside [min_ms, max_ms]"),
    Bad("quartiles out of order", mutated(lambda d: (set_field("timing.q1_ms", 1.2)(d), set_field("timing.q3_ms", 1.1)(d))), "timing.q1_ms",
        "lies above q3_ms"),
    Bad("correct without timing", mutated(correct_without_timing), "status", "'correct' needs the candidate's timing"),
    Bad("correct with a failed trial", mutated(failed_trial), "(record)", "status 'correct' but a correctness trial failed"),
    Bad("incorrect without a failed trial", mutated(incorrect_no_failure), "status",
        "'incorrect' needs a failed correctness trial"),
    Bad("hacked without a failed check", mutated(set_field("status", "hacked"), protocol_name="verified"), "(record)",
        "'hacked' needs at least one failed integrity check"),
    Bad("error without text", mutated(error_without_text), "error", "'runtime_error' needs the error text"),
    Bad("GPU environment incomplete", mutated(set_field("environment.driver", None)), "environment.driver",
        "required for GPU hardware 'h200'"),
    Bad("empty torch version", mutated(set_field("environment.torch", " ")), "environment.torch", "must not be empty"),
    Bad("path/field mismatch", wrong_folder, "(layout)",
        "expected records/h200/cuda-l1/standard/kernelbench-v0/level-1/0019-19_relu__s0.json"),
    Bad("duplicate", duplicate, "(duplicate)", "same evaluation as"),
    Bad("conflicting problem", conflicting_problem, "problem", "has a different name or source_sha256"),
    Bad("absolute source path", mutated(set_field("kernel.path", "/home/me/relu.py")), "kernel.path",
        "must be a relative path, not an absolute one"),
    Bad("windows source path", mutated(set_field("kernel.path", "C:\\kernels\\relu.py")), "kernel.path", "absolute"),
    Bad("dot-dot source path", mutated(set_field("kernel.path", "kernels/../../etc/passwd")), "kernel.path",
        "must not contain '..'"),
    Bad("url without https", mutated(set_field("kernel.url", "http://example.org/repo")), "kernel.url", "https://"),
    Bad("commit not a hash", mutated(set_field("kernel.commit", "main")), "kernel.commit", "commit hash"),
    Bad("kernel sha256 missing", mutated(delete_field("kernel.sha256")), "kernel.sha256", "Field required"),
    Bad("kernel sha256 malformed", mutated(set_field("kernel.sha256", "abc")), "kernel.sha256", "64 lowercase hex"),
    Bad("kernel file missing", missing_kernel_file, "kernel.path", "kernels/missing.py is not a file in the repository"),
    Bad("kernel sha256 mismatch", kernel_sha_mismatch, "kernel.sha256", "does not match kernels/relu.py"),
    Bad("reproduces escapes", mutated(set_field("reproduces", "../outside.json")), "reproduces", "without '..'"),
    Bad("reproduction without its original", mutated(set_field("reproduces", ORIGINAL_REF)), "reproduces",
        "is not a record in the repository"),
    Bad("reproduction of another kernel", repro_of_another_kernel, "kernel.sha256", "differs from the original"),
    Bad("oversized file", oversized, "(file)", f"over the {MAX_RECORD_BYTES}-byte limit"),
    Bad("oversized string", mutated(set_field("notes", ["y" * (MAX_STRING_CHARS + 1)])), "notes[0]",
        f"over the {MAX_STRING_CHARS} limit"),
    Bad("overlong name", mutated(set_field("model.name", "m" * 121)), "model.name", "at most 120 characters"),
    Bad("control character in model name", mutated(set_field("model.name", "evil\x1b[31m")), "model.name",
        "control character U+001B"),
    Bad("newline in problem name", mutated(set_field("problem.name", "relu\nInjected: line")), "problem.name",
        "control character U+000A"),
    Bad("bidi override in a label", mutated(set_field("labels", ["ok\u202etxt.exe"])), "labels[0]", "U+202E"),
    Bad("timing out of order", mutated(set_field("timing.median_ms", 5.0)), "timing.median_ms", "outside [min_ms, max_ms]"),
    Bad("symbolic link", symlink, "(file)", "symbolic links are not accepted"),
    Bad("symbolic link to a folder", linked_folder, "(file)", "symbolic links are not accepted"),
    Bad("stray file", not_json, "(file)", "not a record"),
    Bad("malformed audit report", bad_audit, "(file)", "malformed JSON"),
    # issue 24: a hostile record cannot break, mislead or take over the site
    Bad("NBSP impersonation", mutated(set_field("model.name", "CUDA-L1\u00a0")), "model.name", "not in Unicode NFKC form"),
    Bad("full-width impersonation", mutated(set_field("model.name", "ＣＵＤＡ-L1")), "model.name", "write it as 'CUDA-L1'"),
    Bad("doubled space in a name", mutated(set_field("model.name", "CUDA  L1")), "model.name", "repeated spaces"),
    Bad("name colliding with an existing model's page", impersonation, "model.name",
        "'cuda-l1' collides with 'CUDA-L1'"),
    Bad("hidden audit folder", hidden_audit, "(file)", "hidden name '.hidden'"),
    Bad("audit from the future", audit_in_the_future, "timestamp", "lies in the future"),
    Bad("audit with a lax type", audit_lax_type, "draws", "valid integer"),
    Bad("1e999 in an unbounded field", raw(lambda t: t.replace('"flops": 1000000.0', '"flops": 1e999'),
                                            roofline=Roofline(flops=1e6, min_bytes=8e6, t_sol_ms=0.002)),
        "roofline.flops", "1e999 is out of range"),
    Bad("infinite absolute error", raw(lambda t: t.replace('"max_abs_error": 1e-06', '"max_abs_error": 1e999', 1)),
        "correctness[0].max_abs_error", "out of range"),
    Bad("huge finite number", mutated(set_field("memory.candidate_peak_bytes", 10**17)), "memory.candidate_peak_bytes",
        "out of range"),
    Bad("lone surrogate", mutated(set_field("model.provider", "\ud800")), "model.provider", "lone surrogate U+D800"),
    Bad("deep nesting", deep(40), "notes[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]",
        "nested more than 16 levels deep"),
    Bad("nesting past the parser's stack", deep(100_000), "(file)", "nested more than 16 levels deep"),
    Bad("standard with loose tolerances", mutated(lambda d: d["protocol"].update(atol=10.0, rtol=10.0)),
        "protocol.atol", "standard 1.0 pins atol = 0.01"),
    Bad("standard with its own seeds", mutated(set_field("protocol.seeds", [1, 2, 3, 4, 5])), "protocol.seeds",
        "pins seeds"),
    Bad("standard with few timed calls", mutated(set_field("protocol.timing.timed_calls", 10)),
        "protocol.timing.timed_calls", "pins timing.timed_calls = 100"),
    Bad("verified with one distribution and one trial", mutated(one_distribution_one_trial, protocol_name="verified"),
        "protocol.distributions", "verified 1.1 pins distributions"),
    Bad("verified correct with one trial", mutated(one_trial, protocol_name="verified"), "correctness",
        "'correct' needs 3 trials of 'D1 x1'"),
    Bad("verified 1.2 without its L2 flush", mutated(lambda d: (set_field("protocol.version", "1.2")(d),
                                                                 set_field("protocol.timing.l2_flush", False)(d)),
                                                      protocol_name="verified"),
        "protocol.timing.l2_flush", "verified 1.2 pins timing.l2_flush = True"),
    Bad("verified with a standard seed", mutated(standard_seed_in_verified, protocol_name="verified"),
        "correctness[0]", "not a fresh seed"),
    Bad("standard trial with another seed", mutated(set_field("correctness", [])) if False else
        mutated(lambda d: d["correctness"][1].update(seed=7)), "correctness[1]", "must use the protocol's seed"),
    Bad("all-zero times on a correct record", mutated(all_zero_times), "timing", "a time of zero is not a measurement"),
    Bad("int field as a string", raw(lambda t: t.replace('"sample": 0', '"sample": "0"')), "model.sample",
        "valid integer"),
    Bad("bool field as a string", raw(lambda t: t.replace('"passed": true', '"passed": "true"', 1)),
        "correctness[0].passed", "valid boolean"),
    Bad("float field as a string", raw(lambda t: t.replace('"atol": 0.01', '"atol": "0.01"')), "protocol.atol",
        "valid number"),
    Bad("int field as a float", raw(lambda t: t.replace('"level": 1', '"level": 1.0')), "problem.level",
        "valid integer"),
    Bad("duplicate key", raw(lambda t: t.replace('"status": "correct"', '"status": "correct", "status": "hacked"')),
        "status", "key 'status' is given more than once"),
    Bad("duplicate nested key", raw(lambda t: t.replace('"mean_ms": 1.0', '"mean_ms": 1.0, "mean_ms": 0.01', 1)),
        "timing.mean_ms", "key 'mean_ms' is given more than once"),
    Bad("negative error", mutated(lambda d: d["correctness"][0].update(max_abs_error=-1.0)),
        "correctness[0].max_abs_error", "never negative"),
    Bad("kernel url with credentials", mutated(set_field("kernel.url", "https://user:token@github.com/org/repo")),
        "kernel.url", "must not hold credentials"),
    Bad("kernel url with a token", mutated(set_field("kernel.url", "https://ghp_abc@github.com/org/repo")),
        "kernel.url", "must not hold credentials"),
    Bad("timestamp in 2099", mutated(set_field("environment.timestamp", "2099-01-01T00:00:00Z")),
        "environment.timestamp", "lies in the future"),
    Bad("timestamp without a time zone", mutated(set_field("environment.timestamp", "2026-11-01T12:00:00")),
        "environment.timestamp", "must name its time zone"),
    Bad("dangling baseline id", mutated(baseline_id("h200/_baselines/standard/kernelbench-v0/level-1/0019-x.json")),
        "baselines[0].baseline_id", "is not a baseline record"),
    Bad("baseline id escaping the records", mutated(baseline_id("../../etc/passwd")), "baselines[0].baseline_id",
        "without '..'"),
    Bad("baseline id of another timing", baseline_of_another_timing, "baselines[0].baseline_id",
        "the timing differs"),
    Bad("kernel through a linked folder", kernel_through_linked_folder, "kernel.path",
        "passes through a symbolic link (kernels)"),
    Bad("problem id over 32 bits", mutated(set_field("problem.id", 2**40)), "problem.id", "must be at most 2147483647"),
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
    in_turns(turns_data, 2.1)  # timed in turns: the speedup is the median of per-round ratios
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
    path = kernel_through_linked_folder(root)
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
