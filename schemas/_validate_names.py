"""Names a reader tells models and suites apart by: one written form each, and no two that share a page.

A name that differs from another only by Unicode form (``CUDA-L1`` + a no-break space), by case or by
characters the page path drops would show as the same model and write the same page. Names must be
in NFKC form with plain single spaces, and no two distinct names may share a page path or a folded
form (NFKC, case-folded, spaces collapsed).
"""

from __future__ import annotations

import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator

from ._io import slug

NORMAL_FORM_FIELDS = ("model.name", "model.provider", "problem.suite", "problem.name")
"""Fields whose text must be in NFKC form with plain single spaces."""
PAGE_OF = {"model.name": "models/{}/", "problem.suite": "problems/{}/"}
"""Fields that name a page of their own, and that page's path (the slug goes in the braces)."""


_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def bad_char(text: str) -> str | None:
    """The first control, format (bidirectional override, zero-width) or line-separator character, as U+XXXX."""
    for ch in text:
        if ch in _BIDI or unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp"):
            return f"U+{ord(ch):04X}"
    return None


def normal_form_problem(text: str) -> str | None:
    """Why ``text`` is not in its one written form (NFKC, plain single spaces, trimmed), or None."""
    nfkc = unicodedata.normalize("NFKC", text)
    if nfkc != text:
        return f"is not in Unicode NFKC form (write it as {nfkc!r}; look-alike characters are refused)"
    if any(ch.isspace() and ch != " " for ch in text):
        return "holds whitespace other than a plain space"
    if text != text.strip() or "  " in text:
        return "has leading, trailing or repeated spaces"
    return None


def folded(text: str) -> str:
    """The form two names are compared in: NFKC, case-folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def collisions(named: Iterable[tuple[str, str, str]]) -> Iterator[tuple[str, str, str]]:
    """(shown, field, reason) for each file whose name collides with another name of the same field.

    ``named`` holds (shown path, field, name) for every file, those already in the repository
    included. Of colliding names, the one most files use (then the first in order) is kept; every
    file of the others is reported, naming the name it collides with and the shared page."""
    files: dict[tuple[str, str], list[str]] = defaultdict(list)
    for shown, field, name in named:
        files[(field, name)].append(shown)
    groups: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for field, name in files:
        groups[(field, "page", slug(name))].add(name)
        groups[(field, "folded", folded(name))].add(name)
    reported: set[tuple[str, str]] = set()
    for (field, how, key), names in groups.items():
        if len(names) < 2:
            continue
        uses = Counter({n: len(files[(field, n)]) for n in names})
        kept = min(names, key=lambda n: (-uses[n], files[(field, n)][0]))
        where = PAGE_OF.get(field, "{}").format(key) if how == "page" else None
        for name in sorted(names - {kept}):
            if (field, name) in reported:
                continue
            reported.add((field, name))
            shared = f"the page {where}" if where else "the same name once Unicode form, case and spaces are set aside"
            reason = f"{name!r} collides with {kept!r} (in {files[(field, kept)][0]}): they share {shared}"
            for shown in files[(field, name)]:
                yield shown, field, reason
