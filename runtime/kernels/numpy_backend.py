"""The NumPy kernel backend: vectorised SIMT emulation (the reference backend).

The kernel is translated once into the source of one Python function in which every IR
op is one statement over *all lanes at once* (see `lanes.py`) of a box of blocks: as many
blocks as fit in about a million lanes (the whole grid when it is smaller), each block with
its own shared memory, so memory stays bounded however large the grid. Control flow works by
masking:

* `scf.if` computes the masks of the lanes taking each side; a side no lane takes is
  skipped, a side every lane takes runs unmasked; results are merged with `np.where`.
* `scf.for` with bounds equal across lanes is a Python loop; with per-lane bounds it runs
  until the last active lane is done, each iteration masked to the lanes still in range.
* Loads gather and stores scatter (only the active lanes touch memory); when all indices
  are affine in the thread indices they become strided views instead.
* A float op whose only use is the store right after it computes straight into the
  stored-to memory (`np.add(x, y, out=view)`): an elementwise kernel then costs about
  what `numpy.add` does.
* `kernel.barrier` is a no-op (every op already finishes for the whole block before the
  next starts) unless some threads of a block reach it and others do not: an error.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from xdsl.dialects import scf
from xdsl.dialects.builtin import Float32Type, MemRefType
from xdsl.ir import Block, Operation, SSAValue

from ...dialects.kernel import AllocSharedOp, AssertOp, PrintfOp
from .. import numpy_semantics, scalar_ops
from . import device_io, lanes, watchdog
from .common import (
    BIT_OPS,
    CMPF_PREDICATES,
    CMPI_PREDICATES,
    I1_SIGNED_PREDICATES,
    Kernel,
    SourceWriter,
    constant_value,
    dtype_of,
    int_width,
    is_float,
    load_may_alias_later_store,
    narrow_format,
    predicate_of,
    value_dtype,
)

_UFUNCS = {
    "arith.addf": "np.add",
    "arith.subf": "np.subtract",
    "arith.mulf": "np.multiply",
    "arith.divf": "np.divide",
    "math.sqrt": "np.sqrt",
    "math.absf": "np.abs",
    "arith.negf": "np.negative",
}
"""Exactly rounded float ops that can compute straight into a store's memory (see
`fuse_into_store`)."""

_CMPF = {
    "false": "False",
    "true": "True",
    "oeq": "np.equal({0}, {1})",
    "ogt": "np.greater({0}, {1})",
    "oge": "np.greater_equal({0}, {1})",
    "olt": "np.less({0}, {1})",
    "ole": "np.less_equal({0}, {1})",
    "one": "np.less({0}, {1}) | np.greater({0}, {1})",
    "ord": "np.logical_not(np.isnan({0}) | np.isnan({1}))",
    "ueq": "np.equal({0}, {1}) | np.isnan({0}) | np.isnan({1})",
    "ugt": "np.logical_not(np.less_equal({0}, {1}))",
    "uge": "np.logical_not(np.less({0}, {1}))",
    "ult": "np.logical_not(np.greater_equal({0}, {1}))",
    "ule": "np.logical_not(np.greater({0}, {1}))",
    "une": "np.not_equal({0}, {1})",
    "uno": "np.isnan({0}) | np.isnan({1})",
}
_MINMAX = ("maxsi", "minsi", "maxui", "minui")


class NumpySource(SourceWriter):
    """Generates the vectorised Python function of one kernel."""

    def __init__(self, kernel: Kernel) -> None:
        super().__init__(kernel, {"np": np, "K": kernel, "lanes": lanes})
        self.yield_to: list[list[str]] = []
        self.skip: set[Operation] = set()
        """Stores already emitted, fused with the op computing their value."""

    # ------------------------------------------------------------ helpers

    def const(self, stem: str, value: object) -> str:
        name = self.fresh(stem)
        self.namespace[name] = value
        return name

    def dtype(self, value: SSAValue) -> str:
        dtype = value_dtype(value.type)
        assert dtype is not None  # checked by Kernel
        return self.const("dt", dtype)

    # ------------------------------------------------------------ structure

    def generate(self) -> str:
        kernel = self.kernel
        params = [self.v(p) for p in kernel.params]
        self.lines.append("def run(grid, block, args):")
        self.emit(f"({''.join(p + ', ' for p in params)}) = args")
        if kernel.has_while:
            # Every launch of a kernel that may loop forever runs under the watchdog (one
            # limit for the launch, whatever its number of boxes).
            self.namespace["watchdog"] = watchdog
            self.emit("with watchdog.watching() as W:")
            self.depth += 1
        if kernel.per_block:
            shared_bytes = 0
            for alloc in kernel.shared:
                type_ = alloc.result.type
                assert isinstance(type_, MemRefType)
                dtype = dtype_of(type_.element_type)  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
                assert dtype is not None
                shared_bytes += dtype.itemsize * math.prod(type_.get_shape())
            self.emit(f"for L in lanes.boxes(grid, block, {shared_bytes}):")
            self.depth += 1
            for alloc in kernel.shared:
                # one copy per block of the box, indexed by the block's place in it
                type_ = alloc.result.type
                assert isinstance(type_, MemRefType)
                shape = tuple(type_.get_shape())
                dtype = self.dtype_elem(type_)
                self.emit(f"{self.v(alloc.result)} = np.zeros(L.shape[:3] + {shape}, {dtype})")
        else:
            # Blocks without shared memory or barriers are independent too: a grid of
            # more lanes than one box holds runs a box at a time (bounded memory).
            self.emit("for L in lanes.boxes(grid, block, 0):")
            self.depth += 1
        self.emit("m0 = None")
        self.emit("F0 = lanes.Faults(K, L, None)")
        self.block(kernel.func.body.block, "0")
        return "\n".join(self.lines) + "\n"

    def dtype_elem(self, type_: MemRefType) -> str:
        dtype = dtype_of(type_.element_type)  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
        assert dtype is not None
        return self.const("dt", dtype)

    def block(self, block: Block, level: str) -> None:
        for op in block.ops:
            if op not in self.skip:
                self.op(op, level)

    def op(self, op: Operation, level: str) -> None:  # noqa: C901
        name = op.name
        args = [self.v(o) for o in op.operands]
        if name == "arith.constant":
            value = constant_value(op)
            dtype = dtype_of(op.results[0].type)
            if narrow_format(op.results[0].type) == "bf16":
                from .. import semantics  # here, not at the top: it loads Numba

                value = semantics.bf16_value(value)
            elif is_float(op.results[0].type) and dtype is not None:
                value = dtype.type(value)
            self.kernel.names[op.results[0]] = self.const("c", value)
            return
        if name in ("kernel.return", "kernel.alloc_shared"):
            return
        if name in ("scf.yield", "scf.condition"):
            for target, arg in zip(self.yield_to[-1], args, strict=True):
                self.emit(f"{target} = {arg}")
            return
        if name == "scf.if":
            self.scf_if(op, level)
            return
        if name == "scf.for":
            self.scf_for(op, level)
            return
        if name == "scf.while":
            self.scf_while(op, level)
            return
        if name == "scf.index_switch":
            self.scf_index_switch(op, level)
            return
        if name in ("kernel.printf", "kernel.assert"):
            self.device_io(op, args, level)
            return
        if name == "memref.atomic_rmw":
            self.atomic_rmw(op, args, level)
            return
        if self.fuse_into_store(op, args, level):
            return
        if name in BIT_OPS:
            self.bit_op(op, args, level)
            return
        expr = self.expression(op, args, level)
        if op.results:
            self.emit(f"{self.v(op.results[0])} = {expr}")
        else:
            self.emit(expr)

    def bit_op(self, op: Operation, args: list[str], level: str) -> None:
        """Bit-level and power ops: the integer ones through `semantics`' definitions."""
        name = op.name
        width = int_width(op.operands[0].type)
        results = ", ".join(self.v(r) for r in op.results)
        if name == "arith.bitcast":
            x = args[0]
            if narrow_format(op.operands[0].type) == "bf16":
                x = f"lanes.bf16_bits({x})"
            src = self.const("dt", dtype_of(op.operands[0].type))
            dst = self.const("dt", dtype_of(op.results[0].type))
            cast = f"lanes.bitcast({x}, {src}, {dst})"
            if narrow_format(op.results[0].type) == "bf16":
                cast = f"lanes.bf16_values({cast})"
            self.emit(f"{results} = {cast}")
        elif name in ("arith.mulsi_extended", "arith.mului_extended"):
            from .. import semantics  # here, not at the top: it loads Numba

            high = self.const("U", semantics.int_ufunc("mul_high"))
            signed = name == "arith.mulsi_extended"
            self.emit(
                f"{results} = lanes.mul_extended({high}, {args[0]}, {args[1]}, {width}, {signed})"
            )
        elif name == "arith.addui_extended":
            from .. import semantics  # here, not at the top: it loads Numba

            carry = self.const("U", semantics.int_ufunc("add_carry"))
            self.emit(f"{results} = lanes.add_extended({carry}, {args[0]}, {args[1]}, {width})")
        elif name == "math.fpowi":
            exponent = self.fresh("n")
            dtype = self.dtype(op.results[0])
            n_width = int_width(op.operands[1].type)
            self.emit(f"{exponent} = lanes.to_float({args[1]}, {n_width}, {dtype}, False)")
            self.emit(f"{results} = {self.float_op(op, [args[0], exponent], 'math.powf')}")
        else:
            if name == "math.ipowi":
                if width == 1:  # i1 operands read as signed: true is -1
                    args = [f"lanes.int_cast({a}, 1, 64, False)" for a in args]
                site = self.kernel.site(op)
                self.emit(
                    f"F{level}.check({site}, (np.asarray(lanes.arr({args[0]})) == 0) & "
                    f"(np.asarray(lanes.arr({args[1]})) < 0), {scalar_ops.IPOWI_ZERO_MESSAGE!r})"
                )
            from .. import semantics  # here, not at the top: it loads Numba

            fn = self.const("U", semantics.int_ufunc(name))
            self.emit(
                f"{results} = lanes.int_op({fn}, {width}, ({''.join(a + ', ' for a in args)}))"
            )

    def device_io(self, op: Operation, args: list[str], level: str) -> None:
        """`kernel.printf` and `kernel.assert` over the active lanes (see device_io)."""
        self.namespace["device_io"] = device_io
        if isinstance(op, PrintfOp):
            fmt, conversions = self.python_format(op)
            self.emit(
                f"device_io.printf_lanes(L, m{level}, {self.const('fmt', fmt)}, "
                f"{self.const('conv', conversions)}, ({''.join(a + ', ' for a in args)}))"
            )
        else:
            assert isinstance(op, AssertOp)
            self.emit(
                f"device_io.assert_lanes(L, m{level}, {args[0]}, {self.const('op', op)}, "
                f"{self.kernel.name!r}, {op.message.data!r}, {op.origin.data!r})"
            )

    def atomic_rmw(self, op: Operation, args: list[str], level: str) -> None:
        """`memref.atomic_rmw`: lane by lane in order (see device_io.atomic_rmw_lanes)."""
        self.namespace["device_io"] = device_io
        buffer = op.operands[1]
        if _is_shared(buffer):
            raise self.error(op, "'memref.atomic_rmw' on shared memory is not supported")
        if narrow_format(buffer.type) == "bf16":
            raise self.error(op, "'memref.atomic_rmw' on bf16 is not supported")
        kind = device_io.atomic_kind(op)
        value, mem, *idx = args
        self.emit(
            f"{self.v(op.results[0])} = device_io.atomic_rmw_lanes(F{level}, "
            f"{self.kernel.site(op)}, {self.const('B', buffer)}, {mem}, "
            f"({''.join(i + ', ' for i in idx)}), {value}, {kind!r})"
        )

    def python_format(self, op: PrintfOp) -> tuple[str, list[str]]:
        try:
            fmt, conversions = device_io.python_format(op.format.data)
        except ValueError as e:
            raise self.error(op, f"'kernel.printf' format: {e}") from None
        if len(conversions) != len(op.args):
            raise self.error(
                op,
                f"'kernel.printf' format has {len(conversions)} conversion(s) for "
                f"{len(op.args)} argument(s)",
            )
        return fmt, conversions

    def fuse_into_store(self, op: Operation, args: list[str], level: str) -> bool:
        """Emit a float op whose only use is the store right after it as one step that
        computes straight into the stored-to memory (`np.add(x, y, out=view)`), saving a
        temporary array and a copy. Nothing runs in between, so no load can observe the
        early write."""
        ufunc = _UFUNCS.get(op.name)
        store = op.next_op
        if ufunc is None or store is None or store.name != "memref.store":
            return False
        if narrow_format(store.operands[1].type) == "bf16":
            return False
        if dtype_of(op.results[0].type) != dtype_of(store.operands[0].type):
            return False
        result = op.results[0]
        if store.operands[0] is not result or len(list(result.uses)) != 1:
            return False
        self.kernel.names[result] = "None"  # never read: the fused store computes it
        site = self.kernel.site(store)
        buffer = self.const("B", store.operands[1])
        mem, *idx = (self.v(o) for o in store.operands[1:])
        shared = _is_shared(store.operands[1])
        self.emit(
            f"lanes.store_computed(F{level}, {site}, {buffer}, {mem}, "
            f"({''.join(i + ', ' for i in idx)}), {shared}, {ufunc}, {', '.join(args)})"
        )
        self.skip.add(store)
        return True

    def expression(self, op: Operation, args: list[str], level: str) -> str:  # noqa: C901
        name = op.name
        short = name.split(".", 1)[1]
        faults = f"F{level}"
        result_type = op.results[0].type if op.results else None
        width = int_width(op.operands[0].type) if op.operands else None
        if name in scalar_ops.FLOAT_OPS:
            return self.float_op(op, args)
        flags = scalar_ops.flag_bits(scalar_ops.overflow_flags(op))
        if short in scalar_ops.FAULTING_OPS and (flags or short not in ("addi", "subi", "muli")):
            site = self.kernel.site(op)
            return (
                f"lanes.checked({faults}, {site}, {short!r}, {args[0]}, {args[1]}, {width}, "
                f"{flags})"
            )
        match short:
            case "addi":
                return f"lanes.addi({args[0]}, {args[1]}, {width})"
            case "subi":
                return f"lanes.addi({args[0]}, {args[1]}, {width}, -1)"
            case "muli":
                return f"lanes.muli({args[0]}, {args[1]}, {width})"
            case "andi" | "ori" | "xori":
                return f"lanes.bitwise({short[:-1]!r}, {args[0]}, {args[1]}, {width})"
            case _ if short in _MINMAX:
                return f"lanes.minmax({short!r}, {args[0]}, {args[1]}, {width})"
            case "cmpi":
                pred = predicate_of(op, CMPI_PREDICATES)
                if width == 1:
                    pred = I1_SIGNED_PREDICATES.get(pred, pred)
                return f"lanes.cmpi({pred!r}, {args[0]}, {args[1]}, {width})"
            case "cmpf":
                return "(" + _CMPF[predicate_of(op, CMPF_PREDICATES)].format(*args) + ")"
            case "select":
                assert op.results
                return f"lanes.select({', '.join(args)}, {self.dtype(op.results[0])})"
            case "absi":
                return f"lanes.absi({args[0]}, {width})"
            case _:
                return self.cast_or_other(op, args, level, result_type, width)

    def cast_or_other(  # noqa: C901
        self, op: Operation, args: list[str], level: str, result_type: Any, width: int | None
    ) -> str:
        name = op.name
        short = name.split(".", 1)[1]
        faults = f"F{level}"
        dst = int_width(result_type) if result_type is not None else None
        to_bf16 = result_type is not None and narrow_format(result_type) == "bf16"
        match name:
            case "arith.index_cast" | "arith.extsi" | "arith.trunci":
                return f"lanes.int_cast({args[0]}, {width}, {dst}, False)"
            case "arith.extui" | "arith.index_castui":
                return f"lanes.int_cast({args[0]}, {width}, {dst}, True)"
            case "arith.sitofp" | "arith.uitofp" if to_bf16:
                unsigned = short == "uitofp"
                return f"lanes.int_to_bf16({args[0]}, {width}, {unsigned})"
            case "arith.truncf" if to_bf16:
                return (
                    f"lanes.round_to('bf16', np.asarray({args[0]}, dtype=np.float64), ({args[0]},))"
                )
            case "arith.sitofp" | "arith.uitofp":
                unsigned = short == "uitofp"
                return (
                    f"lanes.to_float({args[0]}, {width}, {self.dtype(op.results[0])}, {unsigned})"
                )
            case "arith.fptosi" | "arith.fptoui":
                site = self.kernel.site(op)
                unsigned = name == "arith.fptoui"
                return f"lanes.to_int({faults}, {site}, {args[0]}, {dst}, {unsigned})"
            case "arith.extf" | "arith.truncf":
                return f"lanes.float_cast({args[0]}, {self.dtype(op.results[0])})"
            case "memref.load":
                site = self.kernel.site(op)
                buffer = self.const("B", op.operands[0])
                view_ok = not load_may_alias_later_store(op)
                idx = "".join(a + ", " for a in args[1:])
                shared = _is_shared(op.operands[0])
                load = (
                    f"lanes.load({faults}, {site}, {buffer}, {args[0]}, ({idx}), {view_ok}, "
                    f"{shared})"
                )
                if narrow_format(op.operands[0].type) == "bf16":
                    return f"lanes.bf16_values({load})"
                return load
            case "memref.store":
                site = self.kernel.site(op)
                buffer = self.const("B", op.operands[1])
                idx = "".join(a + ", " for a in args[2:])
                shared = _is_shared(op.operands[1])
                value = args[0]
                if narrow_format(op.operands[1].type) == "bf16":
                    value = f"lanes.bf16_bits({value})"
                return (
                    f"lanes.store({faults}, {site}, {buffer}, {args[1]}, ({idx}), {value}, "
                    f"{shared})"
                )
            case "memref.dim":
                site = self.kernel.site(op)
                skip = 3 if _is_shared(op.operands[0]) else 0
                return f"lanes.dim({faults}, {site}, {args[0]}, {args[1]}, {skip})"
            case "kernel.thread_id":
                return f"L.thread_id({_axis(op)})"
            case "kernel.block_id":
                return f"L.block_id_of({_axis(op)})"
            case "kernel.block_dim":
                return f"block[{_axis(op)}]"
            case "kernel.grid_dim":
                return f"grid[{_axis(op)}]"
            case "kernel.barrier":
                site = self.kernel.site(op)
                return f"lanes.barrier({faults}, {site}, m{level})"
            case _:  # pragma: no cover - Kernel rejects unsupported ops first
                raise self.error(op, f"'{name}' is not supported")

    def float_op(self, op: Operation, args: list[str], name: str | None = None) -> str:
        """A float op through `semantics`' definition (NumPy's ufunc for the exactly
        rounded ops); f16 computed in f64 and rounded once where NumPy would not."""
        name = name or op.name
        fmt = narrow_format(op.results[0].type)
        if fmt == "bf16" and name == "math.fma":
            name = "fma_bf16"  # rounded to odd in f64 first (see semantics)
        f32 = isinstance(op.results[0].type, Float32Type)
        # (a launch runs under np.errstate(all="ignore"): see launch.CompiledKernel)
        fn = self.const("U", numpy_semantics.float_function(name, f32, quiet=True))
        # f16's + - * / sqrt are NumPy's (computed in f32, rounded once: exact)
        exact = name in scalar_ops.EXACT_BINARY or name in scalar_ops.EXACT_UNARY
        narrow = fmt if fmt == "bf16" or (fmt == "f16" and not exact) else None
        return f"lanes.float_op({fn}, {narrow!r}, {', '.join(args)})"

    # ------------------------------------------------------------ control flow

    def region_body(
        self, block: Block, mask: str, level: str, outer: str, targets: list[str]
    ) -> None:
        self.emit(f"m{level} = {mask}")
        self.emit(f"F{level} = F{outer} if m{level} is m{outer} else lanes.Faults(K, L, m{level})")
        self.yield_to.append(targets)
        self.block(block, level)
        self.yield_to.pop()

    def scf_if(self, op: Operation, level: str) -> None:
        cond = self.v(op.operands[0])
        tm, em, rt, re = (self.fresh(s) for s in ("tm", "em", "rt", "re"))
        self.emit(f"{tm}, {em}, {rt}, {re} = lanes.branch(L, m{level}, {cond})")
        then_vals = [self.fresh("t") for _ in op.results]
        else_vals = [self.fresh("e") for _ in op.results]
        for t, e in zip(then_vals, else_vals, strict=True):
            self.emit(f"{t} = {e} = None")
        for region, mask, run, vals in (
            (op.regions[0], tm, rt, then_vals),
            (op.regions[1], em, re, else_vals),
        ):
            if not region.blocks or not region.block.ops:
                continue
            self.emit(f"if {run}:")
            self.depth += 1
            inner = self.fresh("")
            self.region_body(region.block, mask, inner, level, vals)
            self.depth -= 1
        for result, t, e in zip(op.results, then_vals, else_vals, strict=True):
            dtype = self.dtype(result)
            self.emit(f"{self.v(result)} = lanes.merge({cond}, {rt}, {re}, {t}, {e}, {dtype})")

    def scf_for(self, op: Operation, level: str) -> None:
        lb, ub, step, *inits = (self.v(o) for o in op.operands)
        body = op.regions[0].block
        loop = self.fresh("loop")
        site = self.kernel.site(op)
        self.emit(f"{loop} = lanes.ForLoop(F{level}, {site}, L, m{level}, {lb}, {ub}, {step})")
        iv = self.fresh("iv")
        self.kernel.names[body.args[0]] = iv
        self.emit(f"{iv} = {lb}")
        carried: list[str] = []
        for arg, init in zip(body.args[1:], inits, strict=True):
            name = self.fresh("it")
            self.kernel.names[arg] = name
            carried.append(name)
            self.emit(f"{name} = {init}")
        self.emit(f"while {loop}.more({iv}):")
        self.depth += 1
        targets = [self.fresh("y") for _ in carried]
        inner = self.fresh("")
        self.region_body(body, f"{loop}.active", inner, level, targets)
        for arg, name, target in zip(body.args[1:], carried, targets, strict=True):
            self.emit(f"{name} = {loop}.merge({target}, {name}, {self.dtype(arg)})")
        self.emit(f"{iv} = {loop}.next({iv})")
        self.depth -= 1
        for result, name in zip(op.results, carried, strict=True):
            self.kernel.names[result] = name

    def scf_while(self, op: Operation, level: str) -> None:
        """`scf.while`: every lane still looping runs the `before` region; the lanes
        whose condition is false leave with the values `scf.condition` forwards, the
        others run the `after` region (see `lanes.WhileLoop`). Before each run of the body
        it reads the watchdog's flag (`watchdog.py`)."""
        before, after = op.regions[0].block, op.regions[1].block
        site = self.kernel.site(op)
        stopping = self.fresh("stopping")
        loop = self.fresh("wloop")
        self.emit(f"{loop} = lanes.WhileLoop(L, m{level})")
        for arg, init in zip(before.args, op.operands, strict=True):
            self.emit(f"{self.v(arg)} = {self.v(init)}")
        results = [self.v(r) for r in op.results]
        for name in results:
            self.emit(f"{name} = None")
        self.emit(f"{stopping} = False")
        self.emit("while True:")
        self.depth += 1
        cond = self.fresh("cond")
        forwarded = [self.fresh("w") for _ in op.results]
        self.region_body(before, f"{loop}.active", self.fresh(""), level, [cond, *forwarded])
        dtypes = "".join(self.dtype(r) + ", " for r in op.results)
        if results:
            self.emit(
                f"({''.join(r + ', ' for r in results)}) = {loop}.leave({cond}, "
                f"({''.join(w + ', ' for w in forwarded)}), "
                f"({''.join(r + ', ' for r in results)}), ({dtypes}))"
            )
        else:
            self.emit(f"{loop}.leave({cond}, (), (), ())")
        self.emit(f"if {loop}.active is False:")
        self.emit("    break")
        # Polled when going round again; stops only when it still goes round after
        # seeing the flag (see `NumbaOps.thread_while`).
        self.emit("if W.flag[0]:")
        self.emit(f"    if {stopping}:")
        self.emit(f"        raise W.error(K, {site}, *L.first_lane({loop}.active))")
        self.emit(f"    {stopping} = True")
        for arg, value in zip(after.args, forwarded, strict=True):
            self.emit(f"{self.v(arg)} = {value}")
        yielded = [self.fresh("y") for _ in before.args]
        self.region_body(after, f"{loop}.active", self.fresh(""), level, yielded)
        for arg, value in zip(before.args, yielded, strict=True):
            self.emit(f"{self.v(arg)} = {value}")
        self.depth -= 1

    def scf_index_switch(self, op: Operation, level: str) -> None:
        """`scf.index_switch`: each region runs under the mask of the lanes whose value
        selects it (a region no lane selects is skipped); results merge per lane."""
        assert isinstance(op, scf.IndexSwitchOp)
        cases = [int(c) for c in op.cases.get_values()]
        switch = self.fresh("switch")
        x = self.v(op.arg)
        self.emit(f"{switch} = lanes.Switch(L, m{level}, {x}, {cases!r})")
        regions = [*op.case_regions, op.default_region]
        values = [[self.fresh("s") for _ in op.results] for _ in regions]
        for names in values:
            for name in names:
                self.emit(f"{name} = None")
        for k, (region, names) in enumerate(zip(regions, values, strict=True)):
            self.emit(f"if {switch}.runs[{k}]:")
            self.depth += 1
            self.emit("pass")
            self.region_body(region.block, f"{switch}.masks[{k}]", self.fresh(""), level, names)
            self.depth -= 1
        for i, result in enumerate(op.results):
            merged = ", ".join(names[i] for names in values)
            self.emit(f"{self.v(result)} = {switch}.merge(({merged},), {self.dtype(result)})")


def _is_shared(buffer: SSAValue) -> bool:
    return isinstance(buffer.owner, AllocSharedOp)


def _axis(op: Operation) -> int:
    return "xyz".index(op.dim)  # pyright: ignore[reportAttributeAccessIssue, reportUnknownArgumentType, reportUnknownMemberType]


def compile_numpy(kernel: Kernel) -> tuple[Any, str]:
    """The vectorised run(grid, block, args) function of `kernel`, and its source."""
    gen = NumpySource(kernel)
    source = gen.generate()
    code = compile(source, f"<kernel @{kernel.name} (numpy)>", "exec")
    exec(code, gen.namespace)
    return gen.namespace["run"], source
