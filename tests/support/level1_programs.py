"""Random level-1 programs and the check that runs one against the oracle.

Each program is a DAG of elementwise ops (arithmetic, comparisons feeding selects or casts
of their `i1` results, casts to another element type and back) and matmuls over two shape
classes (`R x C` values and `C x C` weights, R and C from 0 to 5; R dynamic, `?`, in half
the programs, then an `index` argument %rows) of one element type (f16, bf16, f32, f64, i1,
i8, i32, i64), constants, calls to helper functions (one helper is called from two device
contexts, so plan-devices may specialise it), `scf.if` on an `i1` argument, `scf.for`
carrying a tensor (up to three deep), random `linalg.generic`s (maps that permute, project,
broadcast, take constants or affine sums; reductions; two outputs), named linalg ops (matmul,
f16 x f16 -> f32 and i8 x i8 -> i32 matmuls, batch_matmul, transpose, conv_2d, poolings,
fill) on small shapes, `vdev.device_copy` written by the user, random
`vdev.on_device` hints and random argument/result placements over the default system's
devices (cpu:0, cuda:0, cuda:1). `check` plans, lowers and runs one and compares it with
`devplan.reference.program.evaluate` (floats within the rounding spread of sums that
cancel: `support/spread.py`). The differential fuzzer (tests/test_differential_fuzz.py)
and the elision tests of level 1 (tests/passes/test_elide_copies_pipeline.py) draw them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import strategies as st

import devplan
from devplan.passes.default_pipeline import DEFAULT_PIPELINE
from devplan.reference.program import evaluate
from devplan.runtime.executor import random_inputs
from support.spread import slack
from support.ulps import assert_within_ulps

DEVICES = ('#vdev.device<"cpu", 0>', '#vdev.device<"cuda", 0>', '#vdev.device<"cuda", 1>')
FLOAT_BINARY = ("arith.addf", "arith.subf", "arith.mulf", "arith.maximumf", "arith.minimumf")
FLOAT_UNARY = ("math.tanh", "arith.negf", "math.absf")
INT_BINARY = (
    "arith.addi", "arith.subi", "arith.muli", "arith.maxsi", "arith.minsi",
    "arith.andi", "arith.ori", "arith.xori", "arith.maxui",
)  # fmt: skip
WIDER = {"f16": "f32", "i8": "i32"}
"""Element types whose matmul may accumulate in a wider type (MLIR's mixed-type matmul)."""
REDUCE_FLOAT = ("arith.addf", "arith.maximumf", "arith.minimumf")
REDUCE_INT = ("arith.addi", "arith.maxsi", "arith.minui", "arith.xori")
CMPF_PREDICATES = (
    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
    "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true",
)  # fmt: skip
CMPI_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
CASTS_THERE_AND_BACK: dict[str, tuple[tuple[str, str, str], ...]] = {
    "f32": (("arith.extf", "f64", "arith.truncf"),),
    "f64": (("arith.truncf", "f32", "arith.extf"),),
    "i32": (
        ("arith.extsi", "i64", "arith.trunci"),
        ("arith.extui", "i64", "arith.trunci"),
        ("arith.sitofp", "f64", "arith.fptosi"),
    ),
    "i64": (("arith.trunci", "i32", "arith.extsi"), ("arith.trunci", "i32", "arith.extui")),
    "i8": (
        ("arith.extsi", "i32", "arith.trunci"),
        ("arith.extui", "i16", "arith.trunci"),
        ("arith.sitofp", "f32", "arith.fptosi"),
    ),
    "i1": (("arith.extsi", "i8", "arith.trunci"), ("arith.extui", "i32", "arith.trunci")),
    "f16": (("arith.extf", "f32", "arith.truncf"), ("arith.extf", "f64", "arith.truncf")),
    "bf16": (("arith.extf", "f32", "arith.truncf"), ("arith.extf", "f64", "arith.truncf")),
}
"""Per element type: (cast, intermediate element type, cast back), all defined everywhere."""


@dataclass
class Program:
    """A level-1 program being drawn: the text of @main's body and its helpers."""

    draw: Any
    element: str
    rows: int
    cols: int
    dynamic: bool = False
    """Whether "v" values are `tensor<?xC>` (their row count an argument, %rows)."""
    lines: list[str] = field(default_factory=list[str])
    values: dict[str, list[str]] = field(default_factory=lambda: {"v": [], "w": []})
    """SSA names by shape class: "v" (rows x cols) and "w" (cols x cols)."""
    count: int = 0
    helpers: list[str] = field(default_factory=list[str])
    form: str | None = None
    """The data-movement form `movement` draws, when one is asked for (`programs(form=)`)."""

    def type_of(self, kind: str) -> str:
        rows = ("?" if self.dynamic else self.rows) if kind == "v" else self.cols
        return f"tensor<{rows}x{self.cols}x{self.element}>"

    def empty(self, kind: str, indent: str) -> str:
        """A `tensor.empty` of `kind`'s type (sized by %rows when dynamic)."""
        empty = self.fresh()
        sizes = "%rows" if kind == "v" and self.dynamic else ""
        self.lines.append(f"{indent}{empty} = tensor.empty({sizes}) : {self.type_of(kind)}")
        return empty

    @property
    def is_float(self) -> bool:
        return self.element.startswith(("f", "bf"))

    def fresh(self) -> str:
        self.count += 1
        return f"%t{self.count}"

    def pick(self, kind: str) -> str:
        return self.draw(st.sampled_from(self.values[kind]))

    def define(self, kind: str, line: str, indent: str = "  ") -> str:
        name = self.fresh()
        self.lines.append(f"{indent}{name} = {line}")
        self.values[kind].append(name)
        return name

    # -- ops -------------------------------------------------------------------------------

    def elementwise(self, kind: str, indent: str = "  ") -> str:
        form = self.draw(st.sampled_from(("arith", "arith", "compare", "cast")))
        if form == "compare":
            return self.compare(kind, indent)
        if form == "cast":
            return self.cast(kind, indent)
        binary = FLOAT_BINARY if self.is_float else INT_BINARY
        if self.is_float and self.draw(st.booleans()):
            op = self.draw(st.sampled_from(FLOAT_UNARY))
            return self.define(kind, f"{op} {self.pick(kind)} : {self.type_of(kind)}", indent)
        op = self.draw(st.sampled_from(binary))
        a, b = self.pick(kind), self.pick(kind)
        return self.define(kind, f"{op} {a}, {b} : {self.type_of(kind)}", indent)

    def compare(self, kind: str, indent: str) -> str:
        """A comparison (an `i1` tensor), then a select on it or its bits as numbers."""
        t = self.type_of(kind)
        mask_type = t.replace(self.element, "i1")
        op, predicates = (
            ("arith.cmpf", CMPF_PREDICATES) if self.is_float else ("arith.cmpi", CMPI_PREDICATES)
        )
        predicate = self.draw(st.sampled_from(predicates))
        mask = self.fresh()
        self.lines.append(
            f"{indent}{mask} = {op} {predicate}, {self.pick(kind)}, {self.pick(kind)} : {t}"
        )
        if self.element == "i1" or self.draw(st.booleans()):
            a, b = self.pick(kind), self.pick(kind)
            return self.define(kind, f"arith.select {mask}, {a}, {b} : {mask_type}, {t}", indent)
        widen = "arith.uitofp" if self.is_float else "arith.extui"
        return self.define(kind, f"{widen} {mask} : {mask_type} to {t}", indent)

    def cast(self, kind: str, indent: str) -> str:
        """A cast to another element type and back (lossy where narrowing loses bits)."""
        there, other, back = self.draw(st.sampled_from(CASTS_THERE_AND_BACK[self.element]))
        t = self.type_of(kind)
        middle_type = t.replace(self.element, other)
        middle = self.fresh()
        self.lines.append(f"{indent}{middle} = {there} {self.pick(kind)} : {t} to {middle_type}")
        return self.define(kind, f"{back} {middle} : {middle_type} to {t}", indent)

    def matmul(self, indent: str = "  ") -> str:
        if self.element == "i1":  # no matmul of i1 (a located error of lower-to-device)
            return self.elementwise("v", indent)
        kind = self.draw(st.sampled_from(["v", "w"]))
        lhs, rhs = self.pick(kind), self.pick("w")
        if self.draw(st.booleans()):
            out = self.pick(kind)
        else:
            zero = "0.0" if self.is_float else "0"
            scalar = self.fresh()
            self.lines.append(f"{indent}{scalar} = arith.constant {zero} : {self.element}")
            empty = self.empty(kind, indent)
            out = self.define(
                kind,
                f"linalg.fill ins({scalar} : {self.element}) outs({empty} : "
                f"{self.type_of(kind)}) -> {self.type_of(kind)}",
                indent,
            )
        t, w = self.type_of(kind), self.type_of("w")
        return self.define(
            kind, f"linalg.matmul ins({lhs}, {rhs} : {t}, {w}) outs({out} : {t}) -> {t}", indent
        )

    # -- data movement -----------------------------------------------------------------

    def movement(self, indent: str = "  ") -> None:
        """A round trip through the data-movement ops, back to a "v" value: a pad and the
        slice inside it, a reshape to one dimension and back (shapes from
        `tensor.from_elements`), two row slices concatenated, a `linalg.pack` into tiles
        and the `linalg.unpack` back, one element extracted and inserted or splat, a
        `collapse_shape` to one dimension and the `expand_shape` back, a `tensor.cast`
        to dynamic sizes and back, or a row slice inserted into another value
        (`insert_slice`). Each intermediate may go to a device of its own."""
        forms = list(MOVEMENT_FORMS)
        if self.rows == 0 or self.cols == 0:
            forms = [f for f in forms if f not in ("element", "collapse")]
        form = self.form if self.form in forms else self.draw(st.sampled_from(forms))
        getattr(self, f"_move_{form}")(self.pick("v"), indent)

    def _placed(self, value: str, t: str, indent: str) -> str:
        """`value`, hinted to a random device (or not)."""
        device = self.draw(st.sampled_from((None, *DEVICES)))
        if device is None:
            return value
        hinted = self.fresh()
        self.lines.append(f"{indent}{hinted} = vdev.on_device {value} to {device} : {t}")
        return hinted

    def _line(self, line: str, indent: str) -> str:
        name = self.fresh()
        self.lines.append(f"{indent}{name} = {line}")
        return name

    def _index(self, n: int, indent: str) -> str:
        return self._line(f"arith.constant {n} : index", indent)

    def _rows(self) -> str:
        return "%rows" if self.dynamic else str(self.rows)

    def _move_pad(self, value: str, indent: str) -> None:
        t, e = self.type_of("v"), self.element
        low, high = self.draw(st.integers(0, 2)), self.draw(st.integers(0, 2))
        typed = "" if e == "i1" else f" : {e}"
        scalar = self._line(
            f"arith.constant {self.literal(self.draw(st.integers(-2, 2)))}{typed}", indent
        )
        padded_t = self.tensor(["?" if self.dynamic else self.rows + low + high, self.cols + 1])
        i, j = self.fresh(), self.fresh()
        padded = self._line(
            f"tensor.pad {value} low[{low}, 1] high[{high}, 0] {{\n"
            f"{indent}^bb0({i}: index, {j}: index):\n{indent}  tensor.yield {scalar} : {e}\n"
            f"{indent}}} : {t} to {padded_t}",
            indent,
        )
        padded = self._placed(padded, padded_t, indent)
        self.define(
            "v",
            f"tensor.extract_slice {padded}[{low}, 1] [{self._rows()}, {self.cols}] [1, 1] : "
            f"{padded_t} to {t}",
            indent,
        )

    def _move_reshape(self, value: str, indent: str) -> None:
        t, e = self.type_of("v"), self.element
        cols = self._index(self.cols, indent)
        rows = "%rows" if self.dynamic else self._index(self.rows, indent)
        count = self._line(f"arith.muli {rows}, {cols} : index", indent)
        flat_shape = self._line(f"tensor.from_elements {count} : tensor<1xindex>", indent)
        flat_t = f"tensor<{'?' if self.dynamic else self.rows * self.cols}x{e}>"
        flat = self._line(
            f"tensor.reshape {value}({flat_shape}) : ({t}, tensor<1xindex>) -> {flat_t}", indent
        )
        flat = self._placed(flat, flat_t, indent)
        shape = self._line(f"tensor.from_elements {rows}, {cols} : tensor<2xindex>", indent)
        self.define(
            "v", f"tensor.reshape {flat}({shape}) : ({flat_t}, tensor<2xindex>) -> {t}", indent
        )

    def _move_concat(self, value: str, indent: str) -> None:
        t = self.type_of("v")
        k = self.draw(st.integers(0, self.rows))
        top_t = self.tensor([k, self.cols])
        top = self._line(
            f"tensor.extract_slice {value}[0, 0] [{k}, {self.cols}] [1, 1] : {t} to {top_t}",
            indent,
        )
        size = str(self.rows - k)
        if self.dynamic:
            size = self._line(f"arith.subi %rows, {self._index(k, indent)} : index", indent)
        bottom_t = self.tensor(["?" if self.dynamic else self.rows - k, self.cols])
        bottom = self._line(
            f"tensor.extract_slice {value}[{k}, 0] [{size}, {self.cols}] [1, 1] : {t} to "
            f"{bottom_t}",
            indent,
        )
        top, bottom = self._placed(top, top_t, indent), self._placed(bottom, bottom_t, indent)
        self.define(
            "v", f"tensor.concat dim(0) {top}, {bottom} : ({top_t}, {bottom_t}) -> {t}", indent
        )

    def _move_pack(self, value: str, indent: str) -> None:
        t, e = self.type_of("v"), self.element
        tr, tc = self.draw(st.integers(1, 3)), self.draw(st.integers(1, 3))
        swap = self.draw(st.booleans())
        typed = "" if e == "i1" else f" : {e}"
        pad = self._line(
            f"arith.constant {self.literal(self.draw(st.integers(-2, 2)))}{typed}", indent
        )
        outer: list[int | str] = ["?" if self.dynamic else -(-self.rows // tr), -(-self.cols // tc)]
        sizes = "()"
        if self.dynamic:
            tiles = self._line(f"arith.ceildivui %rows, {self._index(tr, indent)} : index", indent)
            sizes = f"({tiles})"
        if swap:
            outer.reverse()
        packed_t = self.tensor([*outer, tr, tc])
        dest = self._line(f"tensor.empty{sizes} : {packed_t}", indent)
        perm = " outer_dims_perm = [1, 0]" if swap else ""
        tiling = f"{perm} inner_dims_pos = [0, 1] inner_tiles = [{tr}, {tc}]"
        packed = self._line(
            f"linalg.pack {value} padding_value({pad} : {e}){tiling} into {dest} : {t} -> "
            f"{packed_t}",
            indent,
        )
        packed = self._placed(packed, packed_t, indent)
        back = self.empty("v", indent)
        self.define("v", f"linalg.unpack {packed}{tiling} into {back} : {packed_t} -> {t}", indent)

    def _move_collapse(self, value: str, indent: str) -> None:
        t, e = self.type_of("v"), self.element
        flat_t = f"tensor<{'?' if self.dynamic else self.rows * self.cols}x{e}>"
        flat = self._line(f"tensor.collapse_shape {value} [[0, 1]] : {t} into {flat_t}", indent)
        flat = self._placed(flat, flat_t, indent)
        shape = f"[{self._rows()}, {self.cols}]"
        self.define(
            "v", f"tensor.expand_shape {flat} [[0, 1]] output_shape {shape} : {flat_t} into {t}",
            indent,
        )  # fmt: skip

    def _move_cast(self, value: str, indent: str) -> None:
        t = self.type_of("v")
        loose_t = self.tensor(
            ["?", "?" if self.dynamic else self.draw(st.sampled_from(["?", self.cols]))]
        )
        loose = self._line(f"tensor.cast {value} : {t} to {loose_t}", indent)
        loose = self._placed(loose, loose_t, indent)
        self.define("v", f"tensor.cast {loose} : {loose_t} to {t}", indent)

    def _move_insert(self, value: str, indent: str) -> None:
        t = self.type_of("v")
        k = self.draw(st.integers(0, self.rows))
        at, to = self.draw(st.integers(0, self.rows - k)), self.draw(st.integers(0, self.rows - k))
        part_t = self.tensor([k, self.cols])
        part = self._line(
            f"tensor.extract_slice {value}[{at}, 0] [{k}, {self.cols}] [1, 1] : {t} to {part_t}",
            indent,
        )
        part = self._placed(part, part_t, indent)
        into = self.pick("v")
        self.define(
            "v",
            f"tensor.insert_slice {part} into {into}[{to}, 0] [{k}, {self.cols}] [1, 1] : "
            f"{part_t} into {t}",
            indent,
        )

    def _move_element(self, value: str, indent: str) -> None:
        t = self.type_of("v")
        at = [self._index(self.draw(st.integers(0, n - 1)), indent) for n in (self.rows, self.cols)]
        element = self._line(f"tensor.extract {value}[{', '.join(at)}] : {t}", indent)
        if self.draw(st.booleans()):
            sizes = "[%rows]" if self.dynamic else ""
            self.define("v", f"tensor.splat {element}{sizes} : {t}", indent)
            return
        at = [self._index(self.draw(st.integers(0, n - 1)), indent) for n in (self.rows, self.cols)]
        into = self.pick("v")
        self.define("v", f"tensor.insert {element} into {into}[{', '.join(at)}] : {t}", indent)

    # -- linalg ------------------------------------------------------------------------

    def literal(self, value: int, element: str | None = None) -> str:
        element = element or self.element
        if element == "i1":
            return "true" if value % 2 else "false"
        return f"{value}.0" if element.startswith(("f", "bf")) else str(value)

    def tensor(self, sizes: Sequence[int | str], element: str | None = None) -> str:
        """A tensor type; a size "R" is the rows of "v" values (`?` when dynamic)."""
        dims = [("?" if self.dynamic else str(self.rows)) if d == "R" else str(d) for d in sizes]
        return f"tensor<{'x'.join(dims)}x{element or self.element}>"

    def filled(self, sizes: Sequence[int | str], value: int, indent: str, element: str = "") -> str:
        """A `linalg.fill` of `value` into a fresh tensor of `sizes`."""
        element = element or self.element
        t = self.tensor(sizes, element)
        scalar, empty, out = self.fresh(), self.fresh(), self.fresh()
        rows = "%rows" if self.dynamic and "R" in sizes else ""
        self.lines += [
            f"{indent}{scalar} = arith.constant {self.literal(value, element)}"
            + ("" if element == "i1" else f" : {element}"),
            f"{indent}{empty} = tensor.empty({rows}) : {t}",
            f"{indent}{out} = linalg.fill ins({scalar} : {element}) outs({empty} : {t}) -> {t}",
        ]
        return out

    def generic(self, indent: str = "  ") -> None:
        """A random `linalg.generic` yielding one or two values of one shape class: loops
        over the result's dimensions (parallel) and up to two reductions of extent C,
        numbered in a random order; inputs read at permutations, projections, broadcasts
        (a loop the map leaves out), constants and affine sums `(d_i * k + d_j) mod C`;
        a body of the program's scalar ops and, on reductions, an accumulation."""
        draw = self.draw
        kind = draw(st.sampled_from(["v", "w"]))
        labels = ["R" if kind == "v" else "C", "C"] + ["C"] * draw(st.integers(0, 2))
        number = draw(st.permutations(range(len(labels))))  # label i is loop d{number[i]}
        loops = len(labels)
        reduced = [number[i] for i in range(2, loops)]
        c_loops = [number[i] for i in range(loops) if labels[i] == "C"]
        operands: list[tuple[str, str, str]] = []  # (value, type, map results)

        def c_index() -> str:
            form = draw(st.sampled_from(("loop", "loop", "loop", "constant", "sum", "half")))
            if self.cols == 0 or form == "loop":
                return f"d{draw(st.sampled_from(c_loops))}"
            if form == "constant":
                return str(draw(st.integers(0, self.cols - 1)))
            a, b = draw(st.sampled_from(c_loops)), draw(st.sampled_from(c_loops))
            if form == "half":
                return f"d{a} floordiv 2"
            return f"(d{a} * {draw(st.integers(1, 3))} + d{b}) mod {self.cols}"

        for _ in range(draw(st.integers(1, 3))):
            source = draw(st.sampled_from(["v", "w"] if kind == "v" else ["w"]))
            first = f"d{number[0]}" if source == "v" else c_index()
            operands.append((self.pick(source), self.type_of(source), f"{first}, {c_index()}"))
        for d in reduced:  # each reduction's extent from an operand dimension it alone indexes
            if not any(f"d{d}" in m.split(", ") for _, _, m in operands):
                operands.append((self.pick("w"), self.type_of("w"), f"d{d}, {c_index()}"))
        outputs = draw(st.integers(1, 2))
        t = self.type_of(kind)
        inits = [self.pick(kind) if draw(st.booleans()) else self.filled(
            ["R" if kind == "v" else self.cols, self.cols], draw(st.integers(-2, 2)), indent
        ) for _ in range(outputs)]  # fmt: skip
        out_maps = [
            f"d{number[0]}, d{number[1]}"
            if kind == "v" or draw(st.booleans())
            else f"d{number[1]}, d{number[0]}"
            for _ in range(outputs)
        ]
        dims = ", ".join(f"d{d}" for d in range(loops))
        maps = ", ".join(
            f"affine_map<({dims}) -> ({m})>" for m in [m for _, _, m in operands] + out_maps
        )
        iterators = ", ".join('"reduction"' if d in reduced else '"parallel"' for d in range(loops))
        e = self.element
        body, args = self.body(len(operands), outputs, bool(reduced), indent + "  ")
        result = self.fresh()
        named = f"{result}:{outputs}" if outputs > 1 else result
        types = ", ".join([t] * outputs)
        self.lines += [
            f"{indent}{named} = linalg.generic {{indexing_maps = [{maps}], iterator_types = "
            f"[{iterators}]}} ins({', '.join(v for v, _, _ in operands)} : "
            f"{', '.join(ty for _, ty, _ in operands)}) outs({', '.join(inits)} : {types}) {{",
            f"{indent}^bb0({', '.join(f'{a}: {e}' for a in args)}):",
            *body,
            f"{indent}}} -> {'(' + types + ')' if outputs > 1 else t}",
        ]
        if outputs == 1:
            self.values[kind].append(result)
        else:
            self.values[kind] += [f"{result}#{i}" for i in range(outputs)]

    def named(self, indent: str = "  ") -> None:
        """A named linalg op whose result returns to a shape class: a matmul whose operands
        are extended (f16 x f16 -> f32, i8 x i8 -> i32, then truncated back), a transpose,
        a batch_matmul of broadcast operands summed over the batch, a `conv_2d` with a
        constant `1 x k` filter or a `pooling_nchw_max/sum` of a `1 x 1 x R x C` broadcast,
        each read back at `d mod (C - k + 1)`."""
        if self.element == "i1":  # no contraction or window of i1 (lower-to-device refuses)
            return self.generic(indent)
        forms = ["transpose", "batch_matmul", "window", "window"]
        forms += ["mixed_matmul"] * (self.element in WIDER)
        getattr(self, self.draw(st.sampled_from(forms)))(indent)

    def mixed_matmul(self, indent: str) -> None:
        kind = self.draw(st.sampled_from(["v", "w"]))
        wide = WIDER[self.element]
        rows = "R" if kind == "v" else self.cols
        out = self.filled([rows, self.cols], self.draw(st.integers(-1, 1)), indent, wide)
        t, w, wt = self.type_of(kind), self.type_of("w"), self.tensor([rows, self.cols], wide)
        product, back = self.fresh(), "arith.truncf" if self.is_float else "arith.trunci"
        self.lines.append(
            f"{indent}{product} = linalg.matmul ins({self.pick(kind)}, {self.pick('w')} : "
            f"{t}, {w}) outs({out} : {wt}) -> {wt}"
        )
        self.define(kind, f"{back} {product} : {wt} to {t}", indent)

    def transpose(self, indent: str) -> None:
        kind = self.draw(st.sampled_from(["v", "w"]))
        value, t = self.pick(kind), self.type_of(kind)
        if kind == "v":  # R x C -> C x R -> R x C
            flipped = self.tensor([self.cols, "R"])
            empty = self.fresh()
            rows = "%rows" if self.dynamic else ""
            self.lines.append(f"{indent}{empty} = tensor.empty({rows}) : {flipped}")
            middle = self.fresh()
            self.lines.append(
                f"{indent}{middle} = linalg.transpose ins({value} : {t}) outs({empty} : "
                f"{flipped}) permutation = [1, 0]"
            )
            value, t = middle, flipped
        back = self.empty(kind, indent)
        self.define(
            kind,
            f"linalg.transpose ins({value} : {t}) outs({back} : {self.type_of(kind)}) "
            "permutation = [1, 0]",
            indent,
        )

    def broadcast(self, value: str, kind: str, sizes: Sequence[int | str], indent: str) -> str:
        """`value` (of `kind`) broadcast by a generic along leading dimensions to `sizes`."""
        rank = len(sizes)
        dims = ", ".join(f"d{d}" for d in range(rank))
        t, out = self.type_of(kind), self.tensor(sizes)
        empty, result = self.fresh(), self.fresh()
        rows = "%rows" if self.dynamic and "R" in sizes else ""
        e = self.element
        parallel = ", ".join(['"parallel"'] * rank)
        self.lines += [
            f"{indent}{empty} = tensor.empty({rows}) : {out}",
            f"{indent}{result} = linalg.generic {{indexing_maps = [affine_map<({dims}) -> "
            f"(d{rank - 2}, d{rank - 1})>, affine_map<({dims}) -> ({dims})>], iterator_types "
            f"= [{parallel}]}} ins({value} : {t}) outs({empty} : {out}) {{",
            f"{indent}^bb0(%a: {e}, %o: {e}):",
            f"{indent}  linalg.yield %a : {e}",
            f"{indent}}} -> {out}",
        ]
        return result

    def batch_matmul(self, indent: str) -> None:
        kind = self.draw(st.sampled_from(["v", "w"]))
        rows = "R" if kind == "v" else self.cols
        batch = self.draw(st.integers(1, 2))
        lhs = self.broadcast(self.pick(kind), kind, [batch, rows, self.cols], indent)
        rhs = self.broadcast(self.pick("w"), "w", [batch, self.cols, self.cols], indent)
        out = self.filled([batch, rows, self.cols], self.draw(st.integers(-1, 1)), indent)
        lt, rt = self.tensor([batch, rows, self.cols]), self.tensor([batch, self.cols, self.cols])
        product = self.fresh()
        self.lines.append(
            f"{indent}{product} = linalg.batch_matmul ins({lhs}, {rhs} : {lt}, {rt}) "
            f"outs({out} : {lt}) -> {lt}"
        )
        self.read_back(product, lt, kind, ["d2", "d0", "d1"], indent, reduce=True)

    def window(self, indent: str) -> None:
        """A `conv_2d` (constant filter) or a pooling over a `1 x k` window along the
        columns; the result, `R x (C - k + 1)`, read back at `d1 mod (C - k + 1)`."""
        if self.cols == 0:
            return self.transpose(indent)
        k = self.draw(st.integers(1, self.cols))
        width = self.cols - k + 1
        value = self.pick("v")
        form = self.draw(st.sampled_from(("conv_2d", "pooling_nchw_max", "pooling_nchw_sum")))
        if form == "conv_2d":
            taps = ", ".join(self.literal(self.draw(st.integers(-3, 3))) for _ in range(k))
            weights, wt = self.fresh(), self.tensor([1, k])
            self.lines.append(f"{indent}{weights} = arith.constant dense<[[{taps}]]> : {wt}")
            out_t = self.tensor(["R", width])
            out = self.filled(["R", width], self.draw(st.integers(-1, 1)), indent)
            result = self.fresh()
            self.lines.append(
                f"{indent}{result} = linalg.conv_2d ins({value}, {weights} : "
                f"{self.type_of('v')}, {wt}) outs({out} : {out_t}) -> {out_t}"
            )
            return self.read_back(result, out_t, "v", ["d0", f"d1 mod {width}"], indent)
        image = self.broadcast(value, "v", [1, 1, "R", self.cols], indent)
        shape, it = self.tensor([1, k]), self.tensor([1, 1, "R", self.cols])
        out_t = self.tensor([1, 1, "R", width])
        window = self.fresh()
        self.lines.append(f"{indent}{window} = tensor.empty() : {shape}")
        out = self.filled([1, 1, "R", width], self.draw(st.integers(-4, 0)), indent)
        result = self.fresh()
        self.lines.append(
            f"{indent}{result} = linalg.{form} ins({image}, {window} : {it}, {shape}) "
            f"outs({out} : {out_t}) -> {out_t}"
        )
        self.read_back(result, out_t, "v", ["0", "0", "d0", f"d1 mod {width}"], indent)

    def read_back(
        self, value: str, t: str, kind: str, index: list[str], indent: str, reduce: bool = False
    ) -> None:
        """`value` read into a new value of `kind` at `index` (over loops d0, d1 of the
        result and, when `reduce`, d2 summed)."""
        e = self.element
        loops = "d0, d1, d2" if reduce else "d0, d1"
        iterators = '"parallel", "parallel"' + (', "reduction"' if reduce else "")
        out = self.filled(["R" if kind == "v" else self.cols, self.cols], 0, indent)
        combine = "arith.addf" if self.is_float else "arith.addi"
        body = f"{indent}  %s = {combine} %o, %a : {e}" if reduce else ""
        self.define(
            kind,
            f"linalg.generic {{indexing_maps = [affine_map<({loops}) -> ({', '.join(index)})>, "
            f"affine_map<({loops}) -> (d0, d1)>], iterator_types = [{iterators}]}} "
            f"ins({value} : {t}) outs({out} : {self.type_of(kind)}) {{",
            indent,
        )
        self.lines += [
            f"{indent}^bb0(%a: {e}, %o: {e}):",
            *([body] if reduce else []),
            f"{indent}  linalg.yield {'%s' if reduce else '%a'} : {e}",
            f"{indent}}} -> {self.type_of(kind)}",
        ]

    def body(
        self, inputs: int, outputs: int, reduces: bool, indent: str
    ) -> tuple[list[str], list[str]]:
        """A generic's body (lines, block argument names): the inputs combined by random
        binary ops (and `linalg.index`, for i32/i64), then each output yields it, or on a
        reduction its accumulation into the output."""
        draw, e = self.draw, self.element
        args = [f"%a{i}" for i in range(inputs)] + [f"%o{j}" for j in range(outputs)]
        lines: list[str] = []
        binary = FLOAT_BINARY if self.is_float else INT_BINARY
        value = args[0]
        sources = args[1:inputs]
        if e in ("i32", "i64") and draw(st.booleans()):
            lines.append(f"{indent}%ix = linalg.index {draw(st.integers(0, 1))} : index")
            lines.append(f"{indent}%iv = arith.index_cast %ix : index to {e}")
            sources.append("%iv")
        for n, other in enumerate(sources):
            lines.append(f"{indent}%b{n} = {draw(st.sampled_from(binary))} {value}, {other} : {e}")
            value = f"%b{n}"
        if self.is_float and draw(st.booleans()):
            lines.append(f"{indent}%u = {draw(st.sampled_from(FLOAT_UNARY))} {value} : {e}")
            value = "%u"
        accumulate = REDUCE_FLOAT if self.is_float else REDUCE_INT
        yields: list[str] = []
        for j in range(outputs):
            if reduces or (j > 0 and draw(st.booleans())):
                op = draw(st.sampled_from(accumulate if reduces else binary))
                lines.append(f"{indent}%y{j} = {op} %o{j}, {value} : {e}")
                yields.append(f"%y{j}")
            else:
                yields.append(value)
        lines.append(f"{indent}linalg.yield {', '.join(yields)} : {', '.join([e] * outputs)}")
        return lines, args

    def constant(self, indent: str = "  ") -> str:
        # A dense constant has a static type: with dynamic rows only "w" can be one.
        kind = "w" if self.dynamic else self.draw(st.sampled_from(["v", "w"]))
        shape = (self.rows, self.cols) if kind == "v" else (self.cols, self.cols)
        if 0 in shape or self.draw(st.booleans()):  # no element list for 0 elements
            value = self.draw(st.integers(-3, 3))
            data = f"{value}.5" if self.is_float else str(value)
            data = str(value % 2 == 1).lower() if self.element == "i1" else data
        else:
            suffix = ".0" if self.is_float else ""
            numbers = [
                str(self.draw(st.booleans())).lower()
                if self.element == "i1"
                else f"{self.draw(st.integers(-4, 4))}{suffix}"
                for _ in range(shape[0] * shape[1])
            ]
            rows = [numbers[r * shape[1] : (r + 1) * shape[1]] for r in range(shape[0])]
            data = "[" + ", ".join("[" + ", ".join(r) + "]" for r in rows) + "]"
        return self.define(kind, f"arith.constant dense<{data}> : {self.type_of(kind)}", indent)

    def hint(self) -> None:
        # A value computed here, hinted once: two hints on one value (or a hint on an
        # argument placed elsewhere) are conflicting placements, which plan-devices
        # rightly reports.
        value = self.elementwise("v")
        device = self.draw(st.sampled_from(DEVICES))
        pinned = " {constrain_result}" if self.draw(st.booleans()) else ""
        self.define("v", f"vdev.on_device {value} to {device}{pinned} : {self.type_of('v')}")

    def call(self) -> None:
        if not self.helpers:
            self.helpers.append(self.helper())
        t = self.type_of("v")
        for context in range(2):  # the same helper from two device contexts
            args = [self.pick("v"), self.pick("v")]
            if self.draw(st.booleans()):
                device = DEVICES[context + 1]
                args = [self.elementwise("v") for _ in args]
                args = [self.define("v", f"vdev.on_device {a} to {device} : {t}") for a in args]
            self.define("v", f"func.call @helper({args[0]}, {args[1]}) : ({t}, {t}) -> {t}")

    def helper(self) -> str:
        t = self.type_of("v")
        op = self.draw(st.sampled_from(FLOAT_BINARY if self.is_float else INT_BINARY))
        return (
            f"func.func @helper(%a: {t}, %b: {t}) -> {t} {{\n"
            f"  %s = {op} %a, %b : {t}\n"
            f"  %r = {op} %s, %a : {t}\n"
            f"  func.return %r : {t}\n}}\n"
        )

    def branch(self) -> None:
        t = self.type_of("v")
        outer = self.pick("v")
        result = self.fresh()
        self.lines.append(f"  {result} = scf.if %flag -> ({t}) {{")
        form = self.draw(st.sampled_from(("elementwise", "call", "pinned", "loop")))
        visible = list(self.values["v"])
        if form == "call":
            then = self.helper_call(self.pick("v"), self.pick("v"), "    ")
        elif form == "pinned":  # a result pinned to a device inside the branch
            then = self.pinned(self.elementwise("v", "    "), "    ")
        elif form == "loop":  # a loop nested in the branch
            then = self.loop_over(self.pick("v"), "    ")
        else:
            then = self.elementwise("v", "    ")
        self.values["v"] = visible  # what the branch defined is not visible after it
        self.lines.append(f"    scf.yield {then} : {t}")
        self.lines.append("  } else {")
        self.lines.append(f"    scf.yield {outer} : {t}")
        self.lines.append("  }")
        self.values["v"].append(result)

    def loop(self) -> None:
        self.values["v"].append(self.loop_over(self.pick("v"), "  ", bound="%n"))

    def loop_over(self, init: str, indent: str, bound: str = "%c2") -> str:
        """An `scf.for` carrying a tensor from `init`; its body one of: an op on the
        carried value, a call, a pinned op, an `scf.if`, a nested loop. Values of the
        body stay inside it."""
        t = self.type_of("v")
        other = self.pick("v")
        result, acc = self.fresh(), self.fresh()
        self.lines.append(
            f"{indent}{result} = scf.for %i{self.count} = %c0 to {bound} step %c1 "
            f"iter_args({acc} = {init}) -> ({t}) {{"
        )
        inner = indent + "  "
        binary = FLOAT_BINARY if self.is_float else INT_BINARY
        op = self.draw(st.sampled_from(binary[:3]))
        form = self.draw(st.sampled_from(("op", "op", "call", "pinned", "branch", "loop")))
        body = self.fresh()
        self.lines.append(f"{inner}{body} = {op} {acc}, {other} : {t}")
        if form == "call":
            body = self.helper_call(body, acc, inner)
        elif form == "pinned":
            body = self.pinned(body, inner)
        elif form == "branch":
            chosen = self.fresh()
            self.lines.append(f"{inner}{chosen} = scf.if %flag -> ({t}) {{")
            self.lines.append(f"{inner}  scf.yield {body} : {t}")
            self.lines.append(f"{inner}}} else {{")
            self.lines.append(f"{inner}  scf.yield {acc} : {t}")
            self.lines.append(f"{inner}}}")
            body = chosen
        elif form == "loop" and indent.count(" ") < 6:  # at most three loops deep
            body = self.loop_over(body, inner)
        self.lines.append(f"{inner}scf.yield {body} : {t}")
        self.lines.append(f"{indent}}}")
        return result

    def pinned(self, value: str, indent: str) -> str:
        """`value` hinted onto a random device, its result pinned there or not."""
        device = self.draw(st.sampled_from(DEVICES))
        constrain = " {constrain_result}" if self.draw(st.booleans()) else ""
        hinted, t = self.fresh(), self.type_of("v")
        self.lines.append(f"{indent}{hinted} = vdev.on_device {value} to {device}{constrain} : {t}")
        return hinted

    def helper_call(self, a: str, b: str, indent: str) -> str:
        if not self.helpers:
            self.helpers.append(self.helper())
        t = self.type_of("v")
        result = self.fresh()
        self.lines.append(f"{indent}{result} = func.call @helper({a}, {b}) : ({t}, {t}) -> {t}")
        return result

    def copy(self) -> None:
        """A `vdev.device_copy` the user wrote, of a value pinned to its source."""
        source, destination = self.draw(
            st.lists(st.sampled_from(DEVICES), min_size=2, max_size=2, unique=True)
        )
        t = self.type_of("v")
        value = self.elementwise("v")
        pinned = self.define("v", f"vdev.on_device {value} to {source} {{constrain_result}} : {t}")
        self.define("v", f"vdev.device_copy {pinned} from {source} to {destination} : {t}")

    def text(self, results: list[str], placements: list[str | None], args: list[str]) -> str:
        t = self.type_of("v")
        returned = ", ".join(
            t + (f" {{vdev.device = {p}}}" if p is not None else "") for p in placements
        )
        rows = ", %rows: index" if self.dynamic else ""
        return (
            "".join(self.helpers)
            + f"func.func @main({', '.join(args)}, %n: index, %flag: i1{rows}) -> ({returned}) {{\n"
            + "  %c0 = arith.constant 0 : index\n  %c1 = arith.constant 1 : index\n"
            + "  %c2 = arith.constant 2 : index\n"
            + "\n".join(self.lines)
            + f"\n  func.return {', '.join(results)} : {', '.join([t] * len(results))}\n}}\n"
        )


@dataclass(frozen=True)
class Drawn:
    """A drawn program and the row count of its "v" values (an argument when dynamic)."""

    text: str
    rows: int
    dynamic: bool


@st.composite
def programs(draw: Any, form: str | None = None) -> Drawn:
    """A random program; with `form`, a short one of elementwise ops and that data-movement
    form twice (`Program.movement`), its sizes 1 to 5."""
    element = draw(st.sampled_from(ELEMENTS))
    least = 0 if form is None else 1  # each form then applies (zero sizes: the fixed set)
    rows, cols = draw(st.integers(least, 5)), draw(st.integers(least, 5))
    program = Program(draw, element, rows, cols, dynamic=draw(st.booleans()), form=form)
    args: list[str] = []
    for kind, name in (("v", "%x"), ("v", "%y"), ("w", "%w")):
        device = draw(st.sampled_from((None, *DEVICES)))
        attr = f" {{vdev.device = {device}}}" if device is not None else ""
        args.append(f"{name}: {program.type_of(kind)}{attr}")
        program.values[kind].append(name)
    steps = draw(st.lists(st.sampled_from(STEPS), min_size=1, max_size=7))
    if form is not None:
        steps = [*draw(st.lists(st.just("elementwise"), max_size=2)), "movement", "movement"]
    for step in steps:
        if step == "elementwise":
            program.elementwise(draw(st.sampled_from(["v", "w"])))
        else:
            getattr(program, step)()
    count = draw(st.integers(1, 2))
    results = [program.values["v"][-1]] + [program.pick("v") for _ in range(count - 1)]
    placements = [draw(st.sampled_from((None, *DEVICES))) for _ in results]
    return Drawn(program.text(results, placements, args), rows, program.dynamic)


MOVEMENT_FORMS = ("pad", "reshape", "concat", "pack", "cast", "insert", "element", "collapse")
"""The data-movement round trips `Program.movement` draws from (the last two need an
element: rows and columns both above 0)."""
STEPS = (
    "elementwise", "matmul", "constant", "hint", "call", "branch", "loop", "copy",
    "generic", "generic", "named", "movement",
)  # fmt: skip
ELEMENTS = ("f32", "i32", "i64", "f64", "i8", "i1", "f16", "bf16")
TOLERANCE = {"float32": 1e-5, "float64": 1e-12}
"""Relative tolerance of f32 and f64 results."""
ULPS = 4
"""How many ulps f16 and bf16 results may be apart (f16 kernels round each op; the
oracle's NumPy may compute an f16 transcendental in f32 first; bf16 matmuls round each
step in the kernels and once in the oracle)."""


def inputs_for(module: Any, drawn: Drawn) -> list[object]:
    """`random_inputs(module, seed=0)`; for dynamic rows, those of the program with `?`
    replaced by the row count, and %rows that count."""
    if not drawn.dynamic:
        return random_inputs(module, seed=0)
    rows = str(drawn.rows)
    main = next(line for line in drawn.text.splitlines() if line.startswith("func.func @main("))
    arguments = main[: main.index(") -> (")]  # the inputs need the arguments alone
    static = re.sub(r"tensor<[^>]*>", lambda t: t.group(0).replace("?", rows), arguments)
    inputs = random_inputs(devplan.parse(f"{static}) {{\n  func.return\n}}"), seed=0)
    inputs[-1] = drawn.rows
    return inputs


def reproduce(drawn: Drawn) -> str:
    how = "devplan-run p.mlir --random-args 0"
    if drawn.dynamic:
        how = f"inputs_for(module, Drawn(text, {drawn.rows}, dynamic=True)) with devplan.execute"
    return f"program (reproduce: save as p.mlir, run {how}):\n{drawn.text}"


def check(drawn: Drawn | str, strategy: str = "default") -> None:
    """The properties of the module docstring for one program, planned with `strategy`."""
    if isinstance(drawn, str):
        drawn = Drawn(drawn, 0, dynamic=False)
    module = devplan.parse(drawn.text)
    lowered = module.clone()
    for name in DEFAULT_PIPELINE:  # devplan.apply verifies the IR after each pass
        if name == "plan-devices":
            name = f"plan-devices{{strategy={strategy}}}"
        devplan.apply(lowered, name)
        if name.startswith("plan-devices"):
            planned_text = str(lowered)
            replanned = devplan.apply(lowered.clone(), name)
            assert str(replanned) == planned_text, "planning a planned module changed it"
    inputs = inputs_for(module, drawn)
    expected = evaluate(module, inputs)
    result = devplan.execute(lowered, inputs, strict=True)
    spreads = slack(module, drawn.text, inputs, expected)
    for got, want, spread in zip(result.outputs, expected, spreads, strict=True):
        assert got.dtype == want.dtype
        name = want.dtype.name
        if want.dtype in (np.uint16, np.float16):  # bf16 (as bit patterns) and f16
            assert_within_ulps(got, want, ULPS, f"{name} output", slack=spread)
        elif want.dtype.kind == "f":
            scale = float(np.max(np.abs(want[np.isfinite(want)]), initial=1.0))
            rtol = TOLERANCE[name]
            assert_close(got, want, rtol, rtol * 0.1 * scale + spread, f"{name} output")
        else:
            np.testing.assert_array_equal(got, want)


def assert_close(
    got: np.ndarray[Any, Any], want: np.ndarray[Any, Any], rtol: float, atol: Any, what: str
) -> None:
    """`|got - want| <= atol + rtol * |want|` elementwise (`atol` a number or an array of
    `want`'s shape); NaN where and only where `want` has NaN, infinities equal."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    with np.errstate(invalid="ignore"):
        near = (got == want) | (np.abs(got - want) <= atol + rtol * np.abs(want))
    ok = np.where(np.isnan(want), np.isnan(got), near)
    bad = np.flatnonzero(~ok)
    assert bad.size == 0, (
        f"{what}: {bad.size} of {ok.size} values not within rtol {rtol} (and the atol of "
        f"each), the first at flat index {bad[0]}: got {got.flat[bad[0]]!r}, want "
        f"{want.flat[bad[0]]!r}, atol there {np.broadcast_to(atol, want.shape).flat[bad[0]]!r}"
    )
