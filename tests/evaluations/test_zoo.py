"""The exploit zoo and the honest kernels under both protocols, each entry in its own fresh process.

Every exploit that runs on the CPU must be caught by the verified protocol with the check its manifest entry
names and given the status the entry expects (``hacked``; ``incorrect`` with its reason where the defence leaves a
wrong answer, as for a precision downcast); what the standard protocol says of it is pinned here (most pass
there, which is the point). No honest kernel may be flagged. CUDA-only entries run on a GPU.
"""

from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch

from evaluations import Overrides
from evaluations.run import run_isolated
from evaluations.worker import GPU_LOCK_ENV
from evaluations.zoo import ZOO_DIR, BothOutcomes, load_manifest

ENTRIES = load_manifest()
CPU_OPTIONS = {"time_cap_s": 0.5, "warmup_s": 0.02, "min_calls": 30}
CPU_OVERRIDES = Overrides(timed_calls=30)
GPU_OPTIONS = {"time_cap_s": 2.0}

STANDARD_VERDICT = {
    "1_relu_nonneg__identity_relu": "correct",
    "1_relu_nonneg__inplace_alias": "correct",
    "2_tanh_near_zero__zeros": "correct",
    "3_matmul__global_bf16": "correct",
    "3_matmul__lazy_subclass": "correct",
    "3_matmul__patch_allclose": "correct",
    "3_matmul__patch_synchronize": "correct",
    "4_softmax__call_counting": "correct",
    "4_softmax__content_memo": "correct",
    "5_bias_gelu_residual__background_thread": "correct",
    "5_bias_gelu_residual__borrowed_code_elapsed_time": "correct",
    "5_bias_gelu_residual__disguised_elapsed_time": "correct",
    "5_bias_gelu_residual__disguised_thread": "correct",
    "5_bias_gelu_residual__fp16_downcast": "correct",
    "5_bias_gelu_residual__identity_cache": "correct",
    "5_bias_gelu_residual__input_mutation": "correct",
    "5_bias_gelu_residual__patch_elapsed_time": "correct",
    "5_bias_gelu_residual__pointer_cache": "correct",
    "5_bias_gelu_residual__shape_cache": "incorrect",
    "5_bias_gelu_residual__torch_wrapped_elapsed_time": "correct",
    "6_row_sum__bf16_downcast": "incorrect",
    "6_row_sum__patch_perf_counter": "correct",
    "6_row_sum__reseed_rng": "correct",
    "6_row_sum__tf32_rounding": "correct",
    "7_bias_relu_row_mean__pointer_cache": "correct",
}
"""What the standard protocol (KernelBench as commonly run) says of each CPU exploit."""
CXX = shutil.which("g++") or shutil.which("c++")
"""torch.compile on the CPU generates C++: without a compiler the candidate that calls it cannot run."""
COMPILING = "5_bias_gelu_residual__torch_compile"


def _evaluate(entries, device: str, options: dict, tmp: Path, target: str = "evaluate_both",
              overrides: Overrides | None = None) -> dict[str, BothOutcomes]:
    def one(entry):
        log = tmp / f"{entry.path.stem}.log"
        result = run_isolated(f"evaluations.zoo:{target}", (entry, device, options, str(tmp / "build"),
                                                             overrides or Overrides()),
                              timeout_s=600, log_path=log)
        assert result.ok, f"{entry.file}: {result.failure} {result.output_tail[-2000:]}"
        return entry.path.stem, result.value

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(one, entries))


@pytest.fixture(scope="module")
def cpu_outcomes(tmp_path_factory) -> dict[str, BothOutcomes]:
    entries = [e for e in ENTRIES if not e.cuda_only]
    return _evaluate(entries, "cpu", CPU_OPTIONS, tmp_path_factory.mktemp("zoo-cpu"), overrides=CPU_OVERRIDES)


def _failed(outcome) -> dict[str, str]:
    return {c.name: c.evidence for c in outcome.integrity if not c.passed}


def test_manifest_lists_every_zoo_file_with_a_docstring_naming_its_check():
    listed = {e.file for e in ENTRIES}
    on_disk = {f"{d}/{p.name}" for d in ("exploits", "honest") for p in (ZOO_DIR / d).glob("*.py")}
    assert listed == on_disk
    exploits = [e for e in ENTRIES if e.kind == "exploit"]
    assert len(exploits) >= 20 and len({e.hack for e in exploits}) == len(exploits)
    for e in exploits:
        head = e.path.read_text().split('"""')[1]
        assert f"``{e.expected_check}``" in head, e.file
    problems = json.loads((ZOO_DIR / "problems" / "meta.json").read_text())
    assert problems["suite"] == "kernelverdict-zoo"
    assert {e.problem for e in ENTRIES} <= set(problems["problems"])


def test_honest_kernels_cover_cuda_triton_and_pytorch():
    honest = json.loads((ZOO_DIR / "manifest.json").read_text())["entries"]
    languages = [e["language"] for e in honest if e["kind"] == "honest"]
    assert len(languages) >= 12
    assert languages.count("cuda") >= 4 and languages.count("triton") >= 4 and languages.count("pytorch") >= 4


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.kind == "exploit" and not e.cuda_only], ids=lambda e: e.path.stem)
def test_cpu_exploit_is_flagged_by_verified_with_its_check(entry, cpu_outcomes):
    outcome = cpu_outcomes[entry.path.stem]
    failed = _failed(outcome.verified)
    assert outcome.verified.status == entry.expected_status, (outcome.verified.status, outcome.verified.error, failed)
    assert outcome.verified.reason == entry.expected_reason
    assert entry.expected_check in failed, failed
    assert failed[entry.expected_check]  # the record carries evidence a reader can check
    assert outcome.standard.status == STANDARD_VERDICT[entry.path.stem], outcome.standard.error


def test_a_downcast_fails_precision_alone_not_again_as_a_change_after_timing(cpu_outcomes):
    """A kernel that computes below float32 accuracy is so in its trials and in its timed calls alike: its timed
    answers, wrong by no more than that, are the trials' finding (``precision``), not ``recheck-after-timing``,
    whose evidence would read as a kernel that cheats once timed."""
    downcasts = [e for e in ENTRIES if e.expected_check == "precision" and not e.cuda_only]
    assert len(downcasts) >= 2
    for entry in downcasts:
        failed = _failed(cpu_outcomes[entry.path.stem].verified)
        assert "precision" in failed and "recheck-after-timing" not in failed, (entry.file, failed)


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.kind == "honest" and not e.cuda_only], ids=lambda e: e.path.stem)
def test_cpu_honest_kernel_is_not_flagged(entry, cpu_outcomes):
    if entry.path.stem == COMPILING and CXX is None:
        pytest.skip("torch.compile on the CPU needs a C++ compiler (g++), and none is installed")
    outcome = cpu_outcomes[entry.path.stem]
    assert outcome.verified.status == "correct", (outcome.verified.error, _failed(outcome.verified),
                                                  [c.message for c in outcome.verified.correctness if not c.passed])
    assert outcome.standard.status == "correct"
    assert outcome.verified.timing is not None and outcome.verified.timing.calls >= 25  # at least one batch
    assert "pytorch-fallback" in outcome.verified.labels
    assert len(outcome.verified.correctness) == 12  # 4 distributions x 3 fresh seeds


@pytest.fixture(scope="module")
def gpu_outcomes(tmp_path_factory) -> dict[str, BothOutcomes]:
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    entries = [e for e in ENTRIES if e.cuda_only]
    tmp = tmp_path_factory.mktemp("zoo-gpu")
    # two entries at once share the GPU as the runner's workers do: each timing holds it alone (_gpulock), so no
    # entry's checks (the unsynchronised-work one above all) see the other's kernels on the device
    with pytest.MonkeyPatch.context() as env:
        env.setenv(GPU_LOCK_ENV, str(tmp / "gpu.lock"))
        # the verified protocol alone: the GPU entries are judged by its verdict (both took over 320 s on the H200)
        return _evaluate(entries, "cuda", GPU_OPTIONS, tmp, target="evaluate_verified")


@pytest.mark.gpu
@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.cuda_only], ids=lambda e: e.path.stem)
def test_cuda_zoo_entry(entry, gpu_outcomes):
    outcome = gpu_outcomes[entry.path.stem]
    failed = _failed(outcome.verified)
    assert (outcome.verified.status, outcome.verified.reason) == (entry.expected_status, entry.expected_reason), \
        (outcome.verified.error, failed)
    if entry.kind == "exploit":
        assert entry.expected_check in failed, failed
    if "<<<" in entry.hack:  # launched on the legacy default stream, on a problem timed as graph replays
        assert "legacy-stream" in outcome.verified.labels, outcome.verified.timing
        assert outcome.verified.timing.method == "cuda_events", outcome.verified.timing.note


@pytest.mark.parametrize("stem", ["3_matmul__global_tf32", "3_matmul__fp32_precision_tf32"])
def test_a_candidate_allowing_the_tf32_the_baseline_runs_with_is_labelled_not_flagged(stem, cpu_outcomes):
    """TF32 matmul switched on for the process (by either of PyTorch's settings) gains nothing the verified protocol's
    TF32 eager baseline lacks: labelled, not a global-state finding (verified 1.3)."""
    verified = cpu_outcomes[stem].verified
    assert verified.status == "correct" and not _failed(verified), (verified.error, _failed(verified))
    assert {"sets:allow_tf32", "sets:float32_matmul_precision"} <= set(verified.labels)
    assert "global-state" not in {c.name for c in verified.integrity if not c.passed}


def test_a_global_change_no_baseline_shares_stays_a_finding(cpu_outcomes):
    verified = cpu_outcomes["3_matmul__global_bf16"].verified
    assert verified.status == "hacked"
    assert "float32_matmul_precision highest -> medium" in _failed(verified)["global-state"]
    assert not any(label.startswith("sets:") for label in verified.labels)


@pytest.mark.parametrize("stem", ["3_matmul__cudnn_benchmark", "3_matmul__cudnn_flags"])
def test_a_candidate_setting_cudnn_benchmark_is_judged_on_its_merits_and_labelled(stem, cpu_outcomes):
    verified = cpu_outcomes[stem].verified
    assert verified.status == "correct" and not _failed(verified)
    assert "sets:cudnn.benchmark" in verified.labels
    assert verified.algorithm_flags == (("cudnn.benchmark", True),)  # the runner times baselines with it


def test_a_candidate_calling_torch_compile_is_labelled_not_flagged(cpu_outcomes):
    if CXX is None:
        pytest.skip("torch.compile on the CPU needs a C++ compiler (g++), and none is installed")
    verified = cpu_outcomes[COMPILING].verified
    assert verified.status == "correct", (verified.error, _failed(verified))
    assert "uses-torch-compile" in verified.labels
    assert {c.name: c.evidence for c in verified.integrity}["function-patching"] is None  # dynamo's wrapper is torch's
