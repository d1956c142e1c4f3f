"""Tables of op implementations keyed by op class, as xDSL's interpreters key theirs.

Host code, the executor, lower-to-device and the oracle each find what to do with an op
through an `OpTable`: `@table.impl(arith.AddfOp)` registers a function for the op class,
and `table.lookup(op)` finds it by walking the op's class hierarchy, so devplan's own
versions of upstream ops (subclasses in `upstream/`) find the implementation of the op they
extend. Filling a table is part of defining the module that owns it; nothing outside that
module registers into it.

A `DialectTables` joins one table per dialect and imports each the first time an op of its
dialect is looked up: a program that holds no `scf` op never imports the module of `scf`
implementations, nor the xDSL dialects that module names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
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


class DialectTables(Generic[Impl]):
    """An `OpTable` joined from one table per dialect, each loaded when first needed.

    `parts` maps a dialect's name to the function that imports the module filling that
    dialect's table and returns it (several dialects may name one function); `base`, if
    given, is a table holding from the start what needs no import. A lookup
    loads the parts of the dialects of the op's class and of the classes it derives from
    (the prefixes of their `name`s), then looks up as `OpTable` does; iterating, `in` a
    class of a dialect not yet loaded, and `names()` load what they need (all, for
    iterating and `names()`)."""

    def __init__(
        self,
        what: str,
        parts: Mapping[str, Callable[[], OpTable[Impl]]],
        base: OpTable[Impl] | None = None,
    ) -> None:
        self.what = what
        self._parts = dict(parts)
        self._loaded: set[str] = set()
        self._table = OpTable[Impl](what)
        if base is not None:
            self._join(base)

    def _load(self, dialect: str) -> None:
        if dialect in self._loaded:
            return
        load = self._parts.get(dialect)
        self._loaded.update(d for d, f in self._parts.items() if f is load)
        self._loaded.add(dialect)
        if load is not None:
            self._join(load())

    def _join(self, part: OpTable[Impl]) -> None:
        for op_class in part:
            impl = part.lookup(op_class)
            assert impl is not None
            self._table.register(op_class, impl)

    def lookup(self, op: Operation | type[Operation]) -> Impl | None:
        """The implementation of `op`'s class or of the nearest class it derives from."""
        op_class = op if isinstance(op, type) else type(op)
        for base in op_class.__mro__:
            name = base.__dict__.get("name")
            if isinstance(name, str):
                self._load(name.partition(".")[0])
        return self._table.lookup(op_class)

    def __contains__(self, op: Operation | type[Operation]) -> bool:
        return self.lookup(op) is not None

    def _load_all(self) -> OpTable[Impl]:
        for dialect in list(self._parts):
            self._load(dialect)
        return self._table

    def __iter__(self) -> Iterator[type[Operation]]:
        return iter(self._load_all())

    def names(self) -> list[str]:
        """The names of the ops with an implementation, sorted (for error messages)."""
        return self._load_all().names()
