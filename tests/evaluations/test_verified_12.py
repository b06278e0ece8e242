"""Verified protocol 1.2: precision classes, held-out shapes, the output contract, algorithm-choice flags and
their baselines, torch's own patches and threads told apart from a candidate's, reasons for missing memory."""

from __future__ import annotations

import functools
import threading
import time
import types
from pathlib import Path

import pytest
import torch

import schemas
from evaluations import Overrides
from evaluations.protocols.verified import (
    held_out_value,
    new_threads,
    precision_class,
    precision_class_of,
    python_threads,
    replaced_functions,
    size_constants,
    snapshot_functions,
    watch_thread_starts,
    with_value,
)
from schemas import CorrectnessCheck

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "v12"
RUN_OPTIONS = {"time_cap_s": 0.3, "warmup_s": 0.01, "min_calls": 20, "seeds_per_distribution": 1, "seed": 5}


def _check(budget: float, strict: float, tf32: float, passed: bool = True) -> CorrectnessCheck:
    return CorrectnessCheck(name="D2 x3 seed 1", distribution="D2 x3", seed=1, passed=passed, error_budget_used=budget,
                            fp32_strict_budget_used=strict, fp32_tf32_budget_used=tf32)


# precision class ---------------------------------------------------------------------------------

@pytest.mark.parametrize("strict", [0.004, 0.5, 1.0])
def test_flash_attention_under_fp16_autocast_reads_tf32_like(strict):
    # KernelBench L3/31 on the H200: error 3.03 of the budget where PyTorch's TF32 path uses 3.18 (its strict
    # float32 figure is not part of what was reported, so several are tried: all far below TF32's)
    assert precision_class(3.03, strict, 3.18) == "TF32-like"
    assert precision_class_of([_check(0.2, strict / 10, 0.3), _check(3.03, strict, 3.18)]) == "TF32-like"


def test_float32_reductions_in_another_order_stay_float32_like():
    # honest row sums on the H200 used up to 1.9x the strict float32 error of PyTorch's own sum
    assert precision_class(0.0955, 0.0509, 0.0509) == "float32-like"
    assert precision_class(2.2e-07, 1.6e-08, 1.6e-08) == "float32-like"  # far under the floor: rounding noise
    assert precision_class(0.0, 0.0, 0.0) == "float32-like"


def test_less_precise_than_tf32_is_reduced():
    assert precision_class(0.25, 3e-5, 3e-5) == "reduced"  # an elementwise op computed in half precision
    assert precision_class(0.9, 0.002, 0.1) == "reduced"  # a bfloat16 matmul: 9x TF32's error
    assert precision_class(0.29, 0.002, 0.1) == "TF32-like"


def test_the_worst_check_decides_and_a_failed_check_gives_no_class():
    checks = [_check(0.001, 0.001, 0.3), _check(0.8, 0.002, 0.3)]
    assert precision_class_of(checks) == "TF32-like"  # the 0.8 check, not the float32-like 0.001 one
    assert precision_class_of([*checks, _check(5.0, 0.002, 0.3, passed=False)]) is None
    assert precision_class_of([]) is None


def test_a_candidate_calling_torch_compile_is_labelled_by_the_scan():
    from evaluations.protocols.verified import scan

    assert "uses-torch-compile" in scan("import torch\nf = torch.compile(g)\n").labels
    assert "uses-torch-compile" in scan("@torch.compile(mode='max-autotune')\ndef f(x):\n    return x\n").labels
    assert "uses-torch-compile" not in scan("import torch\ny = torch.relu(x)\n").labels


# held-out shapes ---------------------------------------------------------------------------------

def test_size_constants_put_batch_sizes_first_and_skip_small_or_derived_ones():
    source = "dim = 4096\nk = 3\nbatch_size = 16  # rows\nflag = True\nhalf = dim // 2\nN: int = 64\n"
    assert [(c.name, c.value) for c in size_constants(source)] == [("batch_size", 16), ("dim", 4096), ("N", 64)]
    assert size_constants("N = 64 if SMALL else 4096\n") == []  # not a plain int: left alone


def test_the_changed_size_is_half_and_never_a_power_of_two():
    assert [held_out_value(v) for v in (16, 4096, 12, 10, 8, 100)] == [7, 2047, 6, 5, 3, 50]
    source = "import torch\nbatch_size = 16  # rows\ndim = 64\n"
    const = size_constants(source)[0]
    assert with_value(source, const, 7) == "import torch\nbatch_size = 7  # rows\ndim = 64\n"


# provenance of patches and threads --------------------------------------------------------------

def test_torch_wrapping_the_very_function_it_replaced_is_not_a_patch():
    before = snapshot_functions()
    original = torch.allclose
    torch.allclose = torch._disable_dynamo(original)  # what dynamo does to torch.manual_seed
    try:
        assert replaced_functions(before) is None
    finally:
        torch.allclose = original


def _fake_allclose(*args, **kwargs):
    return True


def _dressed_up(original):
    @functools.wraps(original)
    def _fn(*args, **kwargs):
        return True

    _fn.__module__, _fn.__qualname__ = "torch._dynamo.eval_frame", "_TorchDynamoContext.__call__.<locals>._fn"
    return _fn


def _borrowed_code(original):
    import torch._dynamo.eval_frame as ef

    code = _fake_allclose.__code__.replace(co_filename=ef.__file__, co_name="_fn")
    return types.FunctionType(code, ef.__dict__, "_fn")


@pytest.mark.parametrize("disguise", [_dressed_up, _borrowed_code, lambda original: torch._disable_dynamo(_fake_allclose)],
                         ids=["names-and-wraps", "borrowed-code-object", "torch-decorator-around-own-function"])
def test_a_patch_dressed_up_as_torchs_is_still_a_patch(disguise):
    before = snapshot_functions()
    original = torch.allclose
    torch.allclose = disguise(original)
    try:
        assert replaced_functions(before) == "torch.allclose was replaced"
    finally:
        torch.allclose = original


def test_torchs_inductor_thread_passes_and_one_named_like_it_does_not():
    from torch._inductor.compile_worker.subproc_pool import SubprocPool

    watch_thread_starts()
    before = python_threads()
    pool = SubprocPool(1)  # starts torch's own "InductorSubproc" reader thread
    stop = threading.Event()
    try:
        assert any(t.name == "InductorSubproc" for t in threading.enumerate())
        assert new_threads(before) is None
        threading.Thread(target=stop.wait, name="InductorSubproc", daemon=True).start()
        evidence = new_threads(before)
        assert evidence is not None and "InductorSubproc" in evidence
    finally:
        stop.set()
        pool.shutdown()
    time.sleep(0.1)


# a verified run end to end: output contract, flags and their baselines, shapes, memory reasons -------

@pytest.fixture(scope="module")
def v12_run(tmp_path_factory):
    from evaluations import capture_environment, load_inputs
    from evaluations.run import RunConfig, run

    base = tmp_path_factory.mktemp("v12")
    loaded = load_inputs(FIXTURES / "problems", FIXTURES / "candidates", model="fixture-model")
    config = RunConfig(out_dir=base / "out", protocols=("verified",), device="cpu", timeout_s=180, jobs=2,
                       build_dir=base / "build", options=dict(RUN_OPTIONS), progress=False)
    summary = run(loaded, config, capture_environment("cpu"))
    return base / "out", {Path(r.kernel.path).stem: r for r in summary.records}


def test_records_are_of_verified_1_3(v12_run):
    # 1.3 keeps 1.2's checks on these fixtures (its changes are in how failures are named): the records say 1.3
    _, records = v12_run
    assert len(records) == 8 and {r.protocol.version for r in records.values()} == {"1.3"}


def test_a_non_tensor_output_is_a_runtime_error_not_a_hack(v12_run):
    record = v12_run[1]["1_rows__none"]
    assert record.status == "runtime_error"
    assert "output 0 is builtins.NoneType, not a tensor" in record.error


@pytest.mark.parametrize(("stem", "reason"), [
    ("1_rows__float64", "output dtype torch.float64 differs from the reference's torch.float32"),
    ("1_rows__shape", "output shape (16, 63) differs from reference shape (16, 64)"),
])
def test_an_output_of_another_dtype_or_shape_is_incorrect_with_its_reason(v12_run, stem, reason):
    record = v12_run[1][stem]
    assert record.status == "incorrect" and reason in record.error
    assert all(c.passed for c in record.integrity)


def test_an_honest_kernel_gets_a_class_a_passed_shape_check_and_memory_reasons(v12_run):
    record = v12_run[1]["1_rows"]
    assert record.status == "correct" and record.precision_class == "float32-like"
    shape = record.shape_check
    assert (shape.constant, shape.original, shape.changed, shape.passed) == ("batch_size", 16, 7, True)
    assert "shape-specific" not in record.labels
    assert record.memory.candidate_peak_bytes is None and "no device allocator on cpu" in record.memory.candidate_peak_missing
    assert "no device allocator on cpu" in record.memory.baseline_peak_missing
    assert all(b.peak_memory_missing for b in record.baselines)


def test_a_kernel_written_for_one_size_keeps_its_verdict_and_is_labelled_shape_specific(v12_run):
    record = v12_run[1]["1_rows__fixed"]
    assert record.status == "correct" and "shape-specific" in record.labels
    assert record.shape_check.passed is False and "batch_size = 7" in record.shape_check.message


def test_incorrect_candidates_say_why_their_memory_was_not_measured(v12_run):
    record = v12_run[1]["1_rows__shape"]
    assert "correct candidates only" in record.memory.candidate_peak_missing
    assert record.precision_class is None and record.shape_check is None


def test_cudnn_benchmark_is_labelled_and_its_speedups_use_baselines_timed_with_it(v12_run):
    out, records = v12_run
    record = records["1_rows__flags"]
    assert record.status == "correct" and "sets:cudnn.benchmark" in record.labels
    assert record.speedup.vs_eager is not None
    flag = schemas.AlgorithmFlag(name="cudnn.benchmark", value=True)
    for b in record.baselines:
        assert b.algorithm_flags == [flag] and b.baseline_id.endswith(f"__{b.kind}+cudnn.benchmark.json")
        stored = schemas.load_record(out / b.baseline_id)
        assert stored.algorithm_flags == [flag] and stored.timing == b.timing
    plain = records["1_rows"]
    assert all(not b.algorithm_flags and b.baseline_id.endswith(f"__{b.kind}.json") for b in plain.baselines)


def test_the_validator_accepts_flagged_baselines_beside_plain_ones(v12_run):
    from schemas import validate

    out, _ = v12_run
    # fixture kernels live outside out/, and the quick CPU run's reduced trials are recorded and refused as such:
    # nothing else may be found (the flagged baselines beside the plain ones least of all)
    findings = [f for f in validate(root=out) if f.field not in ("kernel.path", "correctness")
                and not f.field.startswith("protocol.timing.")]
    assert findings == []
    assert len(list(out.rglob("*+cudnn.benchmark.json"))) == 3


@pytest.mark.gpu
@pytest.mark.parametrize("stem", ["5_bias_gelu_residual__torch_compile", "3_matmul__cudnn_benchmark",
                                  "5_bias_gelu_residual__disguised_thread", "5_bias_gelu_residual__torch_wrapped_elapsed_time"])
def test_on_a_gpu_torch_compile_and_cudnn_flags_pass_and_the_disguises_do_not(stem, tmp_path):
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    from evaluations.run import run_isolated
    from evaluations.zoo import load_manifest

    entry = next(e for e in load_manifest() if e.path.stem == stem)
    result = run_isolated("evaluations.zoo:evaluate_both", (entry, "cuda", {"time_cap_s": 2.0}, str(tmp_path), Overrides()),
                          timeout_s=900, log_path=tmp_path / "log")
    assert result.ok, result.output_tail[-2000:]
    verified = result.value.verified
    failed = {c.name: c.evidence for c in verified.integrity if not c.passed}
    if entry.kind == "honest":  # inductor's threads and dynamo's wrappers are torch's own on the GPU too
        assert verified.status == "correct", (verified.error, failed)
    else:
        assert verified.status == "hacked" and entry.expected_check in failed, failed


def test_a_kernel_relying_on_its_inputs_structure_is_labelled_not_hacked(v12_run):
    record = v12_run[1]["2_triu_matmul"]  # right on every triangular draw; the timing's rolled inputs are not triangular
    assert record.status == "correct", (record.integrity, record.error)
    assert "structure-specific" in record.labels
    assert any("no longer has the structure" in n for n in record.notes)
    assert all(c.passed for c in record.integrity)



def test_a_cache_keyed_on_the_timing_buffers_is_a_stale_answer_not_structure(v12_run):
    # Its timed answer is the one it cached for its buffers: the answer for the set's values before the last refresh
    # where the timing refreshed the set once since, else no earlier draw's, while a copy of the inputs gets the right
    # one. How many refreshes a timing makes follows the machine's speed (its calls are capped in time), so either
    # evidence may name the stale answer; neither is structure.
    record = v12_run[1]["2_triu_matmul__stale"]
    failed = {c.name: c.evidence for c in record.integrity if not c.passed}
    evidence = failed.get("recheck-after-timing", "")
    assert record.status == "hacked" and evidence.endswith(("a stale answer", "(a stale answer)")), failed
    assert ("called again on a copy of the same inputs it is right" in evidence
            or "it is the answer for its values before the last refresh" in evidence), failed
    assert "structure-specific" not in record.labels

