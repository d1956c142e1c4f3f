"""`elide-copies`: remove the copies that change nothing, at both levels (see
`elision.py` for the algorithm and every rule)."""

from .elision import ElideCopiesPass

__all__ = ["ElideCopiesPass"]
