"""Site URLs of generated pages, relative to the site root (directory URLs end in ``/``)."""

from __future__ import annotations

from schemas import slug


def model_url(model: str) -> str:
    """Page of one model."""
    return f"models/{slug(model)}/"


def model_doc(model: str) -> str:
    """Source path (inside docs) of a model's generated page."""
    return f"models/{slug(model)}.md"


def problem_url(suite: str, level: int, problem_id: int, name: str) -> str:
    """Page of one problem."""
    return f"problems/{slug(suite)}/level-{level}/{problem_id:04d}-{slug(name)}/"


def problem_doc(suite: str, level: int, problem_id: int, name: str) -> str:
    """Source path (inside docs) of a problem's generated page."""
    return problem_url(suite, level, problem_id, name).rstrip("/") + ".md"


def up_to_root(url: str) -> str:
    """Relative prefix that leads from the page at ``url`` back to the site root."""
    return "../" * url.count("/")
