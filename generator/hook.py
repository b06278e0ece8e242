"""MkDocs hook module (listed under ``hooks:`` in mkdocs.yml); the work is in ``generator._hook``."""

import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:  # `mkdocs` run from a checkout without `pip install .`
    sys.path.insert(0, _ROOT)

from generator._hook import on_config, on_files, on_page_markdown, on_post_build, on_post_page, on_serve  # noqa: E402

__all__ = ["on_config", "on_files", "on_page_markdown", "on_post_build", "on_post_page", "on_serve"]
