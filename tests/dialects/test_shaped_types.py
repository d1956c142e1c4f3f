"""dialects/shaped_types.py: each test decides as xDSL's `isa(type_, X[Attribute])` does,
over types of every shaped kind and some that are not shaped."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IndexType,
    MemRefType,
    TensorType,
    UnrankedMemRefType,
    UnrankedTensorType,
    VectorType,
    bf16,
    f32,
    i1,
    i64,
)
from xdsl.ir import Attribute
from xdsl.utils.hints import isa

from devplan.dialects.shaped_types import is_memref, is_ranked_tensor, is_unranked_tensor
from devplan.dialects.virtual_device import DeviceAttr

ELEMENTS: list[Attribute] = [f32, bf16, i1, i64, IndexType()]
TYPES: list[Attribute] = [
    *ELEMENTS,
    *(TensorType(e, [4, DYNAMIC_INDEX]) for e in ELEMENTS),
    TensorType(f32, []),
    *(UnrankedTensorType(e) for e in ELEMENTS),
    *(MemRefType(e, [2, 3]) for e in ELEMENTS),
    MemRefType(f32, [8], memory_space=DeviceAttr.make("cuda", 0, None, "global")),
    *(UnrankedMemRefType.from_type(e) for e in ELEMENTS),
    VectorType(f32, [4]),
]


@pytest.mark.parametrize(
    ("test", "hint"),
    [
        (is_memref, MemRefType[Attribute]),
        (is_ranked_tensor, TensorType[Attribute]),
        (is_unranked_tensor, UnrankedTensorType[Attribute]),
    ],
)
def test_each_test_agrees_with_isa(test: Callable[[Attribute], bool], hint: Any) -> None:
    for type_ in TYPES:
        assert test(type_) == isa(type_, hint), type_
    assert any(test(type_) for type_ in TYPES)
