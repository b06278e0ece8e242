"""``python -m evaluations.suite [--check]``: rewrite (or check) the own suite's ``meta.json``."""

import sys

from evaluations.suite._meta import main

sys.exit(main())
