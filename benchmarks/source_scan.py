"""What the kernels behind a set of records could have done outside their own scope: a reading of their sources.

For each candidate record given, the kernel's source is found in the JSON-lines bundle by its sha256 (the record's
``kernel.sha256``) and its problem by the record's ``problem.source_sha256``; both must be found, so the record is
shown to be about the bundle's text. The kernel's source (Python and the C++/CUDA text it compiles) is then
searched for the calls a kernel needs to write files, start processes, send signals or read the environment. A
line that matches is printed with its record, for a reader to judge; ``load_inline`` and ``torch.utils.cpp_extension``
are listed apart (they build into the candidate's own build folder).

    python3 benchmarks/source_scan.py --bundle .data/h100.jsonl RECORD.json ... [--list FILE]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import Counter
from pathlib import Path

RISKY = {
    "file write": r"\bopen\s*\([^)]*['\"][wax+]|\.write_(text|bytes)\s*\(|\bfopen\s*\(|ofstream|\bfwrite\s*\(|"
                  r"shutil\.|os\.(remove|unlink|rename|replace|makedirs|mkdir|rmdir|symlink|link|chmod|truncate)\b|"
                  r"\.unlink\s*\(|\.rename\s*\(|\.touch\s*\(",
    "process": r"\bsubprocess\b|os\.(system|popen|fork|exec\w*|spawn\w*|setsid|kill|killpg)\b|\bpopen\s*\(|"
               r"\bsystem\s*\(|\bfork\s*\(|\bexecv\w*\s*\(|multiprocessing|signal\.",
    "environment": r"os\.environ|getenv\s*\(|os\.getenv",
    "harness": r"\bevaluations\b|\bkverdict\b|sys\.modules|__import__|importlib|\bctypes\b|\bgc\.",
    "files read": r"\bopen\s*\(|read_text|read_bytes|glob\s*\(|os\.listdir|os\.walk|scandir",
}
BUILD = r"load_inline|cpp_extension|torch\.utils\.cpp_extension|triton\.jit"


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", required=True, type=Path)
    parser.add_argument("--list", type=Path, help="a file naming one record path per line")
    parser.add_argument("records", nargs="*", type=Path)
    args = parser.parse_args(argv)
    paths = list(args.records) + ([Path(p) for p in args.list.read_text().split()] if args.list else [])
    kernels, problems = {}, set()
    for line in args.bundle.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        problems.add(sha256(row["ref_code"]))
        if row.get("custom_code"):
            kernels[sha256(row["custom_code"])] = row["custom_code"]
    unknown, hits, builds, seen = [], Counter(), 0, 0
    for path in paths:
        record = json.loads(path.read_text(encoding="utf-8"))
        kernel = record.get("kernel") or {}
        source = kernels.get(kernel.get("sha256", ""))
        if source is None or record["problem"]["source_sha256"] not in problems:
            unknown.append(str(path))
            continue
        seen += 1
        builds += bool(re.search(BUILD, source))
        for number, text in enumerate(source.splitlines(), 1):
            kinds = [kind for kind, pattern in RISKY.items() if re.search(pattern, text)]
            if kinds:  # a line once, with every kind it matches
                hits.update(kinds)
                print(f"{path.name}:{number}: [{', '.join(kinds)}] {text.strip()[:160]}")
    print(f"\n{seen} records, their kernel and problem found in the bundle by sha256; "
          f"{len(unknown)} not found{': ' + ', '.join(unknown) if unknown else ''}")
    print(f"{builds} of them build an extension or a Triton kernel (into their own build folder)")
    print("lines that match, by kind: " + (", ".join(f"{k} {n}" for k, n in hits.items()) or "none"))
    return 1 if unknown else 0


if __name__ == "__main__":
    sys.exit(main())
