"""What a candidate's compiled extension costs in a fresh process once it is built: a rebuild, the driver, or the load?

For each problem key, the candidate of a CUDA-L1 bundle row is imported, constructed on the GPU and called once, in
fresh processes one after another, all with one extension build folder (the runner's hashed build cache,
``evaluations.worker._extensions``), ``load_inline``'s output made verbose so ninja says whether it compiled:

- ``cold``: the first process (the build);
- ``warm``: a second process, same environment;
- ``warm-private-nv``: a third, with ``CUDA_CACHE_PATH`` an empty folder of its own (as a confined worker has), so a
  driver compiling PTX at load time shows up as time that ``warm`` does not have.

Printed per process: the seconds of the import, the construction and the first call, and whether ninja ran a
compile (``ninja-compiled``). Rows go to ``$OUT/ext_reload.jsonl``. Needs a CUDA GPU and nvcc.

    python3 benchmarks/ext_reload.py --bundle .data/h100.jsonl --keys L1/27,L1/50
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import torch
import torch.utils.cpp_extension as ce
import functools
original = ce.load_inline
@functools.wraps(original)  # the build cache's wrapper binds the arguments by load_inline's own signature
def verbose(*args, **kwargs):
    kwargs["verbose"] = True
    return original(*args, **kwargs)
ce.load_inline = verbose
from evaluations.worker import _extensions
from evaluations.worker import load_module
_extensions.install(sys.argv[1])
candidate, problem = open(sys.argv[2]).read(), open(sys.argv[3]).read()
times = {"torch_import_s": time.perf_counter() - t0}
t = time.perf_counter(); ref = load_module(problem, "problem"); times["problem_import_s"] = time.perf_counter() - t
t = time.perf_counter(); mod = load_module(candidate, "candidate"); times["candidate_import_s"] = time.perf_counter() - t
dev = torch.device("cuda")
move = lambda xs: [x.to(dev) if isinstance(x, torch.Tensor) else x for x in xs]
with torch.no_grad():
    t = time.perf_counter(); m = mod.ModelNew(*move(ref.get_init_inputs()))
    m = m.to(dev) if isinstance(m, torch.nn.Module) else m; torch.cuda.synchronize()
    times["construct_s"] = time.perf_counter() - t
    t = time.perf_counter(); m(*move(ref.get_inputs())); torch.cuda.synchronize()
    times["first_call_s"] = time.perf_counter() - t
print("KV-TIMES " + json.dumps(times), flush=True)
"""


def _row(bundle: Path, key: str) -> dict:
    level, task = (int(x) for x in key.lstrip("L").split("/"))
    for line in bundle.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row.get("level_id") == level and row.get("task_id") == task:
            return row
    raise SystemExit(f"{key}: no row in {bundle}")


def _child(build: Path, cand: Path, prob: Path, env: dict[str, str]) -> dict:
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(build), str(cand), str(prob)], capture_output=True,
                          text=True, env=env, timeout=600, check=False)
    wall = time.perf_counter() - t
    text = proc.stdout + proc.stderr
    times = next((json.loads(line[9:]) for line in proc.stdout.splitlines() if line.startswith("KV-TIMES ")), {})
    compiled = any(word in text for word in ("nvcc ", "c++ -MMD", "Building extension"))
    ninja_idle = "ninja: no work to do" in text
    return {"rc": proc.returncode, "wall_s": round(wall, 2), **{k: round(v, 3) for k, v in times.items()},
            "ninja-compiled": compiled and not ninja_idle, "ninja-no-work": ninja_idle, "tail": text[-1500:]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=Path, default=Path(".data/h100.jsonl"))
    parser.add_argument("--keys", required=True, help="problems, comma-separated (L1/27,L1/50)")
    args = parser.parse_args()
    out = Path(os.environ.get("OUT", "."))
    root = Path(tempfile.mkdtemp(prefix="ext-reload-"))
    with (out / "ext_reload.jsonl").open("a", encoding="utf-8") as fh:
        for key in args.keys.split(","):
            row = _row(args.bundle, key)
            folder = root / key.replace("/", "-")
            build = folder / "build"
            build.mkdir(parents=True)
            cand, prob = folder / "candidate.py", folder / "problem.py"
            cand.write_text(row["custom_code"], encoding="utf-8")
            prob.write_text(row["ref_code"], encoding="utf-8")
            base = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path.cwd()), os.environ.get("PYTHONPATH", "")]))
            for name in ("cold", "warm", "warm-private-nv"):
                env = dict(base)
                if name == "warm-private-nv":
                    env["CUDA_CACHE_PATH"] = tempfile.mkdtemp(prefix="nv-", dir=folder)
                result = {"key": key, "process": name, **_child(build, cand, prob, env)}
                fh.write(json.dumps(result) + "\n")
                fh.flush()
                shown = {k: v for k, v in result.items() if k != "tail"}
                print(json.dumps(shown), flush=True)
                if result["rc"] != 0:
                    print(result["tail"], flush=True)


if __name__ == "__main__":
    main()
