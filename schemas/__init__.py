"""Record schema of KernelVerdict: pydantic models, JSON Schema export, record file I/O, and the validation of the
files under ``records/`` (``validate``)."""

from ._audit import AUDIT_SCHEMA_VERSION, FINDING_CODES, AuditFinding, AuditReport, ProblemAudit, Severity
from ._datasets import DATASETS, PublicDataset, dataset_named
from ._evidence import (
    AlgorithmFlag,
    AlgorithmFlagName,
    BaselineKind,
    BaselineTiming,
    Claimed,
    CorrectnessCheck,
    IntegrityCheck,
    MemoryStats,
    PrecisionClass,
    Roofline,
    ShapeCheck,
)
from ._export import SCHEMA_DIR, export_schemas, json_schemas
from ._io import (
    MAX_RECORD_BYTES,
    RecordError,
    baseline_relpath,
    dump_record,
    load_record,
    parse_record,
    printable,
    read_json,
    record_relpath,
    slug,
    validated_text,
    write_record,
    write_text,
)
from ._manifest import (
    MANIFEST_RELPATH,
    Manifest,
    ManifestProblem,
    digest_text,
    manifest_problems,
    manifest_text,
    parse_manifest,
)
from ._protocols import PROTOCOLS, Pinned, baseline_versions, pinned, protocol_info, superseded
from ._record import (
    INCORRECT_REASONS,
    SCHEMA_VERSION,
    STATUSES,
    BaselineRecord,
    Environment,
    IncorrectReason,
    KernelLanguage,
    KernelSource,
    ModelInfo,
    ProblemRef,
    ProtocolInfo,
    ProtocolName,
    Record,
    Status,
)
from ._timing import (
    ROUNDS_MAX,
    TIMING_NOTE_MAX,
    Judged,
    OuterTiming,
    Speedups,
    TimingConfig,
    TimingMethod,
    TimingStats,
    speedup_between,
    statistic_ms,
)
from ._validate import MAX_STRING_CHARS, iter_record_files, validate

__all__ = [
    "PROTOCOLS", "Pinned", "baseline_versions", "pinned", "protocol_info", "superseded", "INCORRECT_REASONS", "IncorrectReason",
    "DATASETS", "PublicDataset", "dataset_named",
    "MANIFEST_RELPATH", "Manifest", "ManifestProblem", "digest_text", "manifest_problems", "manifest_text", "parse_manifest",
    "AUDIT_SCHEMA_VERSION", "FINDING_CODES", "AuditFinding", "AuditReport", "ProblemAudit", "Severity",
    "MAX_RECORD_BYTES", "ROUNDS_MAX", "TIMING_NOTE_MAX", "SCHEMA_DIR", "SCHEMA_VERSION", "STATUSES", "AlgorithmFlag", "AlgorithmFlagName",
    "BaselineKind", "BaselineRecord", "BaselineTiming", "Claimed", "CorrectnessCheck", "Environment", "IntegrityCheck", "Judged", "OuterTiming",
    "KernelLanguage", "KernelSource", "PrecisionClass", "ShapeCheck",
    "MemoryStats", "ModelInfo", "ProblemRef", "ProtocolInfo", "ProtocolName", "Record", "RecordError",
    "Roofline", "Speedups", "Status", "TimingConfig", "TimingMethod", "TimingStats", "baseline_relpath",
    "dump_record", "export_schemas", "json_schemas", "load_record", "parse_record", "read_json",
    "record_relpath", "slug", "speedup_between", "statistic_ms", "validated_text", "write_record", "write_text",
    "MAX_STRING_CHARS", "iter_record_files", "printable", "validate",
]
