"""Reading, writing and locating record files."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ._record import BaselineRecord, Record

MAX_RECORD_BYTES = 1_000_000
"""Record files larger than this are refused before parsing."""


class RecordError(ValueError):
    """A record file that cannot be accepted; ``str()`` is one line naming the file and field."""

    def __init__(self, path: str | os.PathLike[str], field: str, message: str) -> None:
        self.path = str(path)
        self.field = field
        self.message = message
        super().__init__(f"{self.path}: {field}: {message}" if field else f"{self.path}: {message}")


def _field_of(loc: tuple[Any, ...]) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            parts.append(("." if parts else "") + str(item))
    return "".join(parts) or "(record)"


def _reject_constant(value: str) -> float:
    raise ValueError(f"{value} is not a valid number in a record")


def read_json(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a record file as a JSON object; NaN and Infinity are refused."""
    p = Path(path)
    size = p.stat().st_size
    if size > MAX_RECORD_BYTES:
        raise RecordError(p, "", f"file is {size} bytes, over the {MAX_RECORD_BYTES}-byte limit")
    try:
        data = json.loads(p.read_text(encoding="utf-8"), parse_constant=_reject_constant)
    except UnicodeDecodeError as exc:
        raise RecordError(p, "", f"not UTF-8 text ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise RecordError(p, "", f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except ValueError as exc:
        raise RecordError(p, "", str(exc)) from None
    if not isinstance(data, dict):
        raise RecordError(p, "", f"expected a JSON object, got {type(data).__name__}")
    return data


def parse_record(data: dict[str, Any], path: str | os.PathLike[str] = "<record>") -> Record | BaselineRecord:
    """Validate a decoded record; raises RecordError naming the first bad field."""
    model: type[BaseModel] = BaselineRecord if "kind" in data and "model" not in data else Record
    version = data.get("schema_version")
    if version != "1.0":
        raise RecordError(path, "schema_version", f"unknown schema version {version!r} (this code reads '1.0')")
    try:
        return model.model_validate(data)  # type: ignore[return-value]
    except ValidationError as exc:
        err = exc.errors()[0]
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise RecordError(path, _field_of(err["loc"]), err["msg"] + more) from None


def load_record(path: str | os.PathLike[str]) -> Record | BaselineRecord:
    """Read and validate one record file."""
    return parse_record(read_json(path), path)


def dump_record(record: BaseModel) -> str:
    """Serialise a record as stable, indented JSON."""
    return json.dumps(record.model_dump(mode="json"), indent=2, sort_keys=False, allow_nan=False) + "\n"


def write_record(path: str | os.PathLike[str], record: BaseModel) -> Path:
    """Validate and write a record atomically: a crash never leaves a half-written file."""
    p = Path(path)
    text = dump_record(type(record).model_validate(record.model_dump()))
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return p


_UNSAFE = re.compile(r"[^a-z0-9._-]+")


def slug(text: str) -> str:
    """A lowercase, path-safe form of a name (``Claude 4.5 / opus`` -> ``claude-4.5-opus``)."""
    s = _UNSAFE.sub("-", text.lower()).strip("-.")
    return s[:64] or "unnamed"


def record_relpath(record: Record) -> Path:
    """Where a record lives under ``records/``: hardware/model/protocol/suite/level-N/ID-name__sSAMPLE.json."""
    p = record.problem
    stem = f"{p.id:04d}-{slug(p.name)}__s{record.model.sample}"
    if record.reproduces:
        stem += "__repro"
    return Path(record.environment.hardware, slug(record.model.name), record.protocol.name,
                slug(p.suite), f"level-{p.level}", stem + ".json")


def baseline_relpath(record: BaselineRecord) -> Path:
    """Where a baseline record lives under ``records/``: hardware/_baselines/protocol/suite/level-N/ID-name__KIND.json,
    the algorithm-choice flags it was timed with appended to the kind (``__eager_tf32+cudnn.benchmark.json``)."""
    p = record.problem
    kind = "+".join([record.kind, *(f.token for f in record.algorithm_flags)])
    return Path(record.environment.hardware, "_baselines", record.protocol.name, slug(p.suite),
                f"level-{p.level}", f"{p.id:04d}-{slug(p.name)}__{kind}.json")
