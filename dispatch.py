"""Tables of op implementations keyed by op class, as xDSL's interpreters key theirs.

Host code, the executor, lower-to-device and the oracle each find what to do with an op
through an `OpTable`: `@table.impl(arith.AddfOp)` registers a function for the op class,
and `table.lookup(op)` finds it by walking the op's class hierarchy, so devplan's own
versions of upstream ops (subclasses in `upstream/`) find the implementation of the op they
extend. Filling a table is part of defining the module that owns it; nothing outside that
module registers into it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from xdsl.ir import Operation

Impl = TypeVar("Impl")


class OpTable(Generic[Impl]):
    """Implementations of ops of type `Impl`, keyed by op class."""

    def __init__(self, what: str) -> None:
        self.what = what
        """What the implementations do, for messages (`"host code"`, `"the oracle"`)."""
        self._impls: dict[type[Operation], Impl] = {}

    def impl(self, *op_classes: type[Operation]) -> Callable[[Impl], Impl]:
        """A decorator registering its function as the implementation of `op_classes`."""

        def register(impl: Impl) -> Impl:
            for op_class in op_classes:
                self.register(op_class, impl)
            return impl

        return register

    def register(self, op_class: type[Operation], impl: Impl) -> None:
        if op_class in self._impls:
            raise ValueError(f"{self.what}: '{op_class.name}' has an implementation already")
        self._impls[op_class] = impl

    def lookup(self, op: Operation | type[Operation]) -> Impl | None:
        """The implementation of `op`'s class or of the nearest class it derives from."""
        op_class = op if isinstance(op, type) else type(op)
        for base in op_class.__mro__:
            impl = self._impls.get(base)  # pyright: ignore[reportArgumentType]
            if impl is not None:
                return impl
        return None

    def __contains__(self, op: Operation | type[Operation]) -> bool:
        return self.lookup(op) is not None

    def __iter__(self) -> Iterator[type[Operation]]:
        return iter(self._impls)

    def names(self) -> list[str]:
        """The names of the ops with an implementation, sorted (for error messages)."""
        return sorted({op_class.name for op_class in self._impls})
