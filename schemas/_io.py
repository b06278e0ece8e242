"""Reading, writing and locating record files."""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ._record import BaselineRecord, Record

MAX_RECORD_BYTES = 1_000_000
"""Record files larger than this are refused before parsing."""

M = TypeVar("M", bound=BaseModel)


class RecordError(ValueError):
    """A record file that cannot be accepted; ``str()`` is one printable line naming the file and field."""

    def __init__(self, path: str | os.PathLike[str], field: str, message: str) -> None:
        self.path = str(path)
        self.field = field
        self.message = message
        super().__init__(printable(f"{self.path}: {field}: {message}" if field else f"{self.path}: {message}"))


def _field_of(loc: tuple[Any, ...]) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            parts.append(("." if parts else "") + str(item))
    return "".join(parts) or "(record)"


MAX_DEPTH = 16
"""Deepest nesting of objects and lists accepted in a JSON file (records nest five levels)."""
MAX_INT = 2**53
"""Largest integer magnitude accepted in a JSON file (what every JSON reader holds exactly)."""


class _Object(dict):
    """A decoded JSON object that remembers which of its keys were given more than once."""

    duplicates: list[str]

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__()
        self.duplicates = []
        for key, value in pairs:
            if key in self:
                self.duplicates.append(key)
            self[key] = value


@dataclass(frozen=True)
class _Unrepresentable:
    """A number literal that no float holds (``1e999``), kept so its field can be named."""

    text: str


def _number(text: str) -> float | _Unrepresentable:
    value = float(text)
    return value if math.isfinite(value) else _Unrepresentable(text)


def _reject_constant(value: str) -> float:
    raise ValueError(f"{value} is not a valid number in a record")


def _surrogate(text: str) -> str | None:
    for ch in text:
        if "\ud800" <= ch <= "\udfff":
            return f"U+{ord(ch):04X}"
    return None


def _fault(value: Any, depth: int) -> str | None:
    """Why one decoded value cannot be accepted, or None; containers are judged by their own keys only."""
    if depth > MAX_DEPTH:
        return f"nested more than {MAX_DEPTH} levels deep"
    if isinstance(value, _Unrepresentable):
        return f"the number {value.text[:40]} is out of range (not a finite float)"
    if isinstance(value, str) and (bad := _surrogate(value)):
        return f"lone surrogate {bad} in a string (not valid Unicode text)"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INT:
        return "integer out of range (more than 2**53 in magnitude)"
    if isinstance(value, _Object):
        for key in value:
            if bad := _surrogate(key):
                return f"lone surrogate {bad} in a key (not valid Unicode text)"
    return None


def _children(value: Any, where: str) -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [(f"{where}.{k}" if where else str(k), v) for k, v in value.items()]
    if isinstance(value, list):
        return [(f"{where}[{i}]", v) for i, v in enumerate(value)]
    return []


def _first_fault(data: Any) -> tuple[str, str] | None:
    """The first (field, reason) that makes decoded JSON unacceptable, found without recursion."""
    stack: list[tuple[str, Any, int]] = [("", data, 0)]
    while stack:
        where, value, depth = stack.pop()
        if isinstance(value, _Object) and value.duplicates:  # named by the key itself
            key = value.duplicates[0]
            return (f"{where}.{key}" if where else key), f"key {key!r} is given more than once"
        reason = _fault(value, depth)
        if reason is not None:
            return where or "(record)", reason
        stack.extend((w, v, depth + 1) for w, v in reversed(_children(value, where)))
    return None


def loads_strict(text: str, path: str | os.PathLike[str], where: str = "") -> Any:
    """Decode JSON text, refusing what readers disagree on or cannot hold: duplicate keys, NaN,
    Infinity and out-of-range numbers, lone surrogates, and nesting deeper than ``MAX_DEPTH``.
    Raises RecordError naming ``path`` and the field (``where`` prefixes it, e.g. a line number)."""
    try:
        data = json.loads(text, object_pairs_hook=_Object, parse_float=_number, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise RecordError(path, where, f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise RecordError(path, where, f"malformed JSON: nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as exc:
        raise RecordError(path, where, str(exc)) from None
    fault = _first_fault(data)
    if fault is not None:
        field, reason = fault
        raise RecordError(path, f"{where}: {field}" if where else field, reason)
    return data


def read_json(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a record file as a JSON object under the rules of :func:`loads_strict`."""
    p = Path(path)
    size = p.stat().st_size
    if size > MAX_RECORD_BYTES:
        raise RecordError(p, "", f"file is {size} bytes, over the {MAX_RECORD_BYTES}-byte limit")
    try:
        text = p.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(p, "", f"not UTF-8 text ({exc.reason})") from None
    data = loads_strict(text, p)
    if not isinstance(data, dict):
        raise RecordError(p, "", f"expected a JSON object, got {type(data).__name__}")
    return data


def validate_strict(model: type[M], data: dict[str, Any], path: str | os.PathLike[str]) -> M:
    """Validate decoded JSON against a model in strict mode, as JSON: ``"0"``, ``"true"`` or ``1.0`` for
    an int or bool field are refused (dates stay ISO 8601 text). Raises RecordError naming the first bad field."""
    try:
        return model.model_validate_json(json.dumps(data, allow_nan=False), strict=True)
    except ValidationError as exc:
        err = exc.errors()[0]
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise RecordError(path, _field_of(err["loc"]), err["msg"] + more) from None


def parse_record(data: dict[str, Any], path: str | os.PathLike[str] = "<record>") -> Record | BaselineRecord:
    """Validate a decoded record strictly; raises RecordError naming the first bad field."""
    model: type[BaseModel] = BaselineRecord if "kind" in data and "model" not in data else Record
    version = data.get("schema_version")
    if version != "1.0":
        raise RecordError(path, "schema_version", f"unknown schema version {version!r} (this code reads '1.0')")
    return validate_strict(model, data, path)  # type: ignore[return-value]


def load_record(path: str | os.PathLike[str]) -> Record | BaselineRecord:
    """Read and validate one record file."""
    return parse_record(read_json(path), path)


def dump_record(record: BaseModel) -> str:
    """Serialise a record as stable, indented JSON."""
    return json.dumps(record.model_dump(mode="json"), indent=2, sort_keys=False, allow_nan=False) + "\n"


def validated_text(record: BaseModel) -> str:
    """The record validated anew and serialised: the text :func:`write_record` writes."""
    return dump_record(type(record).model_validate(record.model_dump()))


def write_record(path: str | os.PathLike[str], record: BaseModel) -> Path:
    """Validate and write a record atomically: a crash never leaves a half-written file."""
    return write_text(path, validated_text(record))


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write a record's text (:func:`validated_text`) atomically, its folder made where missing."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(p, text)
    return p


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a synced temporary file in the same folder, then rename it."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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


def inside_repository(repo: str | os.PathLike[str], relpath: str) -> tuple[Path | None, str]:
    """Where a repository-relative path leads, or (None, why not): every step must stay inside ``repo``
    and none may be a symbolic link, so a record can never make the site or the validator read a file
    from outside the repository."""
    base = Path(repo).resolve()
    parts = [p for p in re.split(r"[\\/]", relpath) if p not in ("", ".")]
    if relpath.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", relpath) or ".." in parts or not parts:
        return None, "must be a relative path inside the repository, without '..'"
    current = base
    for part in parts:
        current = current / part
        if current.is_symlink():
            return None, f"passes through a symbolic link ({current.relative_to(base).as_posix()})"
    if not current.resolve().is_relative_to(base):
        return None, "leads outside the repository"
    return current, ""


_UNPRINTABLE = frozenset(("Cc", "Cf", "Cs", "Co", "Zl", "Zp"))


def printable(text: str) -> str:
    """Text safe to print as part of one line of a terminal or CI log: control, format, separator,
    surrogate and private-use characters become escapes (``\\n``, ``\\x1b``, ``\\u202e``), and the legacy
    ``##[`` workflow-command marker is broken, so a file name can never start a command or a new line."""
    out = []
    for ch in text:
        if unicodedata.category(ch) in _UNPRINTABLE:
            code = ord(ch)
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(ch) or
                       (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"))
        else:
            out.append(ch)
    return "".join(out).replace("##[", "#\\x23[")
