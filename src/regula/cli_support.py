"""Turning a user's mistake into one line on stderr and exit status 2."""
from __future__ import annotations

import sys

from .errors import RegulaError


def run_main(main, *args) -> int:
    try:
        main(*args)
    except RegulaError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
