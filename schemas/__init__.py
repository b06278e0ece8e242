"""Record schema of KernelVerdict: pydantic models, JSON Schema export, and record file I/O."""

from ._audit import AUDIT_SCHEMA_VERSION, FINDING_CODES, AuditFinding, AuditReport, ProblemAudit
from ._export import SCHEMA_DIR, export_schemas, json_schemas
from ._io import (
    MAX_RECORD_BYTES,
    RecordError,
    baseline_relpath,
    dump_record,
    load_record,
    parse_record,
    read_json,
    record_relpath,
    slug,
    write_record,
)
from ._record import (
    ROUNDS_MAX,
    SCHEMA_VERSION,
    STATUSES,
    BaselineKind,
    BaselineRecord,
    BaselineTiming,
    Claimed,
    CorrectnessCheck,
    Environment,
    IntegrityCheck,
    KernelLanguage,
    KernelSource,
    MemoryStats,
    ModelInfo,
    ProblemRef,
    ProtocolInfo,
    ProtocolName,
    Record,
    Roofline,
    Speedups,
    Status,
    TimingConfig,
    TimingMethod,
    TimingStats,
    speedup_between,
    statistic_ms,
)

__all__ = [
    "AUDIT_SCHEMA_VERSION", "FINDING_CODES", "AuditFinding", "AuditReport", "ProblemAudit",
    "MAX_RECORD_BYTES", "ROUNDS_MAX", "SCHEMA_DIR", "SCHEMA_VERSION", "STATUSES", "BaselineKind", "BaselineRecord",
    "BaselineTiming", "Claimed", "CorrectnessCheck", "Environment", "IntegrityCheck", "KernelLanguage", "KernelSource",
    "MemoryStats", "ModelInfo", "ProblemRef", "ProtocolInfo", "ProtocolName", "Record", "RecordError",
    "Roofline", "Speedups", "Status", "TimingConfig", "TimingMethod", "TimingStats", "baseline_relpath",
    "dump_record", "export_schemas", "json_schemas", "load_record", "parse_record", "read_json",
    "record_relpath", "slug", "speedup_between", "statistic_ms", "write_record",
]
