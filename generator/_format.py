"""Number formats shared by the Jinja pages and the record pages ("–" stands for a missing value)."""

from __future__ import annotations

MISSING = "–"


def ms(value: float | None) -> str:
    """A time in milliseconds, 4 significant digits."""
    return MISSING if value is None else f"{value:.4g} ms"


def times(value: float | None) -> str:
    """A speedup factor, 3 significant digits."""
    return MISSING if value is None else f"{value:.3g}×"


def pct(value: float | None) -> str:
    """A share as a percentage with one decimal."""
    return MISSING if value is None else f"{100 * value:.1f}%"


def num(value: float | None, fmt: str = "{:.3g}") -> str:
    """Any number in a ``str.format`` pattern."""
    return MISSING if value is None else fmt.format(value)


def human_bytes(value: int | None) -> str:
    """A byte count in B, KiB, MiB or GiB."""
    if value is None:
        return MISSING
    size = float(value)
    for unit in ("B", "KiB", "MiB"):
        if size < 1024:
            return f"{int(size)} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"


_TITLE_SAFE = str.maketrans({"<": "‹", ">": "›", "&": "＆", '"': "”"})


def title_text(value: str) -> str:
    """Text for a page's front-matter title: the theme strips tags from a title and unescapes it into <title>, so
    characters that could end that element or start an entity are replaced by look-alikes."""
    return str(value).translate(_TITLE_SAFE)
