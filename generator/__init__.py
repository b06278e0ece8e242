"""Site generator of KernelVerdict: records -> DuckDB metrics (generator/sql) -> MkDocs pages."""

from ._build import BuildData, build_data
from ._load import load_rows, record_files
from ._sql import Aggregates, aggregate, queries

__all__ = ["Aggregates", "BuildData", "aggregate", "build_data", "load_rows", "queries", "record_files"]
