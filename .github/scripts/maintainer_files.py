"""Fail a pull request that touches maintainer-only files unless its author is a maintainer.

Maintainer-only files are what the site trusts more than a contributed record: reproductions (the
"reproduced" badge), audit reports (they take problems out of the leaderboard), baselines, the
benchmark rows of the methodology page, and the CI set-up itself. A maintainer is an author GitHub
reports as the repository's OWNER, a MEMBER of its organisation or a COLLABORATOR, or a login listed
in ``.github/MAINTAINERS`` as the base branch has it (a pull request cannot list its own author).

Usage: ``maintainer_files.py --base SHA --author LOGIN --association ASSOCIATION`` in a checkout of
the pull request's merge commit with the base commit fetched. Prints one ``::error`` line per file.
Uses only the standard library and git; reads no file of the pull request.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import unicodedata

MAINTAINER_ONLY = (
    re.compile(r"^records/_audits/"),
    re.compile(r"^records/(.+/)?_baselines/"),
    re.compile(r"^records/.+__repro\.json$"),
    re.compile(r"^benchmarks/results/"),
    re.compile(r"^\.github/"),
)
"""Paths only a maintainer may add, change or delete (``.github/CODEOWNERS`` protects the same)."""
TRUSTED_ASSOCIATIONS = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})
"""Author associations GitHub gives people the repository already trusts with write access."""
MAINTAINERS_FILE = ".github/MAINTAINERS"
"""One GitHub login per line; ``#`` starts a comment."""


def maintainer_only(path: str) -> bool:
    """Whether a repository path is one only maintainers may touch."""
    return any(p.search(path) for p in MAINTAINER_ONLY)


def _git(*args: str) -> bytes:
    return subprocess.run(["git", *args], check=True, capture_output=True).stdout


def listed_maintainers(base: str) -> set[str]:
    """Logins in the base commit's maintainers file (lower case; empty when it has none)."""
    try:
        text = _git("show", f"{base}:{MAINTAINERS_FILE}").decode("utf-8", "replace")
    except subprocess.CalledProcessError:
        return set()
    return {line.split("#", 1)[0].strip().lstrip("@").lower() for line in text.splitlines()} - {""}


def changed_files(base: str, head: str = "HEAD") -> list[str]:
    """Every path the pull request adds, changes or deletes (a rename counts as both its paths)."""
    out = _git("diff", "--name-only", "--no-renames", "-z", base, head)
    return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]


def _command_value(text: str) -> str:
    """A workflow-command property value: no control character, line break or separator survives raw."""
    text = "".join(f"\\u{ord(c):04x}" if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp") else c
                   for c in text)
    return text.replace("%", "%25").replace(":", "%3A").replace(",", "%2C")


def main(argv: list[str] | None = None) -> int:
    """Exit 1 when a non-maintainer's pull request touches a maintainer-only file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the base commit of the pull request")
    parser.add_argument("--head", default="HEAD", help="the commit under test (default: HEAD)")
    parser.add_argument("--author", required=True, help="the pull request author's login")
    parser.add_argument("--association", required=True, help="GitHub's author_association of the author")
    args = parser.parse_args(argv)
    touched = [p for p in changed_files(args.base, args.head) if maintainer_only(p)]
    trusted = args.association in TRUSTED_ASSOCIATIONS or args.author.lower() in listed_maintainers(args.base)
    if not touched or trusted:
        who = "a maintainer" if trusted else "not a maintainer"
        print(f"{len(touched)} maintainer-only file(s) touched; the author is {who}")
        return 0
    for path in touched:
        print(f"::error file={_command_value(path)},title=maintainer-only file::only maintainers may add, "
              "change or delete reproductions, audits, baselines, benchmark results and CI files")
    print(f"{len(touched)} maintainer-only file(s) touched by a pull request from a non-maintainer")
    return 1


if __name__ == "__main__":
    sys.exit(main())
