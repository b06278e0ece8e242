"""Held-out shapes: correctness re-checked once with one of the problem's module-level sizes changed.

KernelBench problems keep their sizes in module-level int constants (``batch_size = 16``, ``dim = 16384``)
that ``get_inputs``/``get_init_inputs`` read. A kernel written for those exact sizes (a hard-coded grid, a
size assumed a multiple of the block) is right there and wrong elsewhere. The check changes one constant
in the problem's source text, loads that text as a fresh module (so constants derived from it follow),
builds a fresh reference and a fresh candidate from its ``get_init_inputs()``, and compares one draw of
its ``get_inputs()`` under the precision policy. The constant tried first is a batch size; otherwise the
first in source order whose change the reference itself accepts. The changed value is half the original,
made not a power of two (minus one where half is one). A failure, the candidate's construction or call
failing included, is the label ``shape-specific``; the verdict stays as it is.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from typing import Any

import torch

from schemas import ShapeCheck

from ...core import DISTRIBUTIONS, Job, draw, gpulock, outputs_of, to_device
from ...worker import describe, load_problem
from ._precision import Tolerance, judge_precision
from ._reference import References
from ._setup import build_reference, seed_all

SIZE_MIN = 8
"""Smallest constant taken for a size: smaller ints are mostly dimensions to reduce over, kernel sizes, strides."""
LABEL = "shape-specific"


@dataclass(frozen=True)
class SizeConstant:
    """A module-level ``NAME = <int>`` of a problem source, with where its value is written."""

    name: str
    value: int
    line: int
    col: int
    end_col: int


def size_constants(source: str) -> list[SizeConstant]:
    """The problem's module-level int constants of at least ``SIZE_MIN``, batch sizes first, then in source order."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found = []
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else (
            node.target if isinstance(node, ast.AnnAssign) else None)
        value = getattr(node, "value", None)
        if (isinstance(target, ast.Name) and isinstance(value, ast.Constant) and type(value.value) is int
                and value.value >= SIZE_MIN and value.lineno == value.end_lineno):
            found.append(SizeConstant(target.id, value.value, value.lineno, value.col_offset, value.end_col_offset or 0))
    return sorted(found, key=lambda c: "batch" not in c.name.lower())


def held_out_value(value: int) -> int:
    """Half of ``value``, minus one where half is a power of two (16 -> 7, 12 -> 6)."""
    half = value // 2
    return half - 1 if half & (half - 1) == 0 else half


def with_value(source: str, const: SizeConstant, value: int) -> str:
    """``source`` with the constant's value written as ``value`` (everything else byte for byte)."""
    lines = source.splitlines(keepends=True)
    line = lines[const.line - 1]
    encoded = line.encode("utf-8")  # ast offsets count UTF-8 bytes
    lines[const.line - 1] = (encoded[:const.col] + str(value).encode() + encoded[const.end_col:]).decode("utf-8")
    return "".join(lines)


@dataclass
class _Variant:
    """The problem at a changed size: its module, init arguments, one input draw and the references' outputs."""

    const: SizeConstant
    changed: int
    problem: Any
    init: list[Any]
    inputs: list[Any]
    refs: Any


def _variant(job: Job, const: SizeConstant, seed: int, init_seed: int, device: torch.device) -> _Variant:
    changed = held_out_value(const.value)
    problem = load_problem(replace(job, problem=replace(job.problem, source=with_value(job.problem.source, const, changed))))
    seed_all(init_seed)
    init = to_device(problem.get_init_inputs(), device)
    references = References(build_reference(problem.model, init, device))
    inputs = draw(problem.get_inputs, DISTRIBUTIONS[0], seed, device)
    return _Variant(const, changed, problem, init, inputs, references.run(inputs))


def _judge(outs: list[Any], variant: _Variant, tol: Tolerance) -> tuple[float | None, str | None]:
    """(worst error budget, why the outputs are wrong or ``None``)."""
    refs = variant.refs
    if len(outs) != len(refs.ref64):
        return None, f"{len(outs)} outputs, reference has {len(refs.ref64)}"
    worst = 0.0
    for i, (o, r64, s, t) in enumerate(zip(outs, refs.ref64, refs.strict32, refs.tf32, strict=True)):
        if not isinstance(o, torch.Tensor):
            return None, f"output {i} is {type(o).__name__}, not a tensor"
        if o.dtype != s.dtype:
            return None, f"output {i} dtype {o.dtype} differs from the reference's {s.dtype}"
        verdict = judge_precision(o.as_subclass(torch.Tensor), r64, s, t, tol)
        if not verdict.passed:
            return verdict.budget, f"output {i}: {verdict.message}"
        worst = max(worst, verdict.budget or 0.0)
    return worst, None


def check_shapes(job: Job, model_new: type, tol: Tolerance, seed: int, init_seed: int,
                 device: torch.device) -> ShapeCheck:
    """The held-out shape re-check of a candidate class (``ModelNew``) for ``job``'s problem."""
    constants = size_constants(job.problem.source)
    if not constants:
        return ShapeCheck(message=f"not run: the problem has no module-level int constant of at least {SIZE_MIN} to change")
    variant = None
    for const in constants:
        try:
            variant = _variant(job, const, seed, init_seed, device)
            break
        except Exception:  # noqa: BLE001 - the reference itself does not accept this size: try the next constant
            continue
    if variant is None:
        names = ", ".join(c.name for c in constants)
        return ShapeCheck(message=f"not run: the reference failed with each size constant changed ({names})")
    base = {"constant": variant.const.name, "original": variant.const.value, "changed": variant.changed}
    gpulock.yield_to_timing()  # the reference at the changed size and the candidate's call are steps of their own
    try:
        seed_all(init_seed)
        candidate = model_new(*variant.init).to(device)
        with torch.no_grad():
            outs = outputs_of(candidate(*variant.inputs))
        if device.type == "cuda":
            torch.cuda.synchronize()
    except Exception as exc:  # noqa: BLE001 - a candidate that cannot run at another size is shape-specific
        return ShapeCheck(**base, passed=False, message=f"failed at {variant.const.name} = {variant.changed}: "
                                                        f"{describe(exc)[:1500]}")
    budget, wrong = _judge(outs, variant, tol)
    message = f"wrong at {variant.const.name} = {variant.changed}: {wrong}" if wrong else None
    return ShapeCheck(**base, passed=wrong is None, error_budget_used=budget, message=message)
