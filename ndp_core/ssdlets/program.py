"""SSDlets: device programs written as Numba functions with typed ports.

Biscuit's programming model (*Biscuit: A Framework for Near-Data Processing of
Big Data Workloads*, ISCA 2016, Sec. III) in Python: a program declares typed
input/output ports, typed arguments, private state and the work counters the
timing model prices, and is compiled at run time into an ordinary StorageApp
(a Numba ``cfunc`` of the engine's ABI) that a running engine installs with
MINIT and frees with MDEINIT.

The function takes one argument, ``p``: every declared name is a field of it.
Input ports are arrays to read (one packet; the instance's copy), output ports are arrays to
fill (their capacity), arguments are scalars, state fields and work counters
are one-element arrays, and ``p.at_end`` is true on the last call, made with
empty inputs after the last packet. It returns how many values it wrote: an
int for one output port, a tuple for several (0 for none).

A program that meets input it cannot take sets ``p.error_at[0]`` to where the
bad input starts, counted in all the bytes its first input has received (for
a node that scans a file, the offset in the file), right before it raises. The
host gets an :class:`SSDletError` whose ``byte_offset`` is that offset. (Any
exception after ``error_at`` is set counts as bad input; a call that returns
leaves it unread.)

>>> import pyarrow as pa
>>> @ssdlet(inputs={"x": pa.int64()}, outputs={"y": pa.int64()},
...         args={"floor": pa.int64()}, work={"values": 3.0})
... def keep_above(p):
...     n = 0
...     for i in range(p.x.size):
...         if p.x[i] > p.floor:
...             p.y[n] = p.x[i]
...             n += 1
...     p.values[0] += p.x.size
...     return n
>>> keep_above
SSDlet keep_above(x: int64) -> (y: int64); args floor: int64; work values

Isolation: every array access is bounds-checked (a write past an output's
capacity or a read past an input stops the call); each loop iteration spends
fuel from a per-call budget (:mod:`~ndp_core.ssdlets.metering`); the engine
rolls back the instance's state of a failed call. Either way the host gets a
clear :class:`SSDletError`, never a crash.
"""
from __future__ import annotations

import keyword
from collections import namedtuple
from functools import cached_property
from typing import Any, Callable, Mapping, Optional, Union

import numpy as np

from ndp_core.engine import APP_PRIVATE_STATUS_BASE, Status
from ndp_core.ssdlets.disk_cache import compiled_app
from ndp_core.ssdlets.metering import metered_function, metered_source
from ndp_core.ssdlets.ports import Out, PortType, TypeSpec, port_type

#: What ``p.<port>`` is for a string or binary port: Arrow's offsets (int32) and bytes.
StringsView = namedtuple("StringsView", ["offsets", "data"])
#: ... for a nullable port: the values and a validity byte per value (1: valid).
NullableView = namedtuple("NullableView", ["values", "valid"])
#: ... for a nullable string or binary port.
NullableStringsView = namedtuple("NullableStringsView", ["offsets", "data", "valid"])

__all__ = ["SSDlet", "SSDletError", "ssdlet", "OUT_OF_BUDGET", "TRAPPED", "BAD_INPUT", "DEFAULT_BUDGET"]

#: App statuses of a stopped call (the engine completes them as APP_ERROR).
OUT_OF_BUDGET = APP_PRIVATE_STATUS_BASE + 1
TRAPPED = APP_PRIVATE_STATUS_BASE + 2
#: The status of a call that raised after setting ``p.error_at``: the engine's own BAD_INPUT.
BAD_INPUT = int(Status.BAD_INPUT)

#: Loop iterations one call may run (all loops together).
DEFAULT_BUDGET = 1 << 32

# AppCall.args words: the runtime's, then one (offset, bytes) pair per input, then the user's.
_AT_END, _BUDGET, _FIRST_INPUT = 0, 1, 2
_FUEL_BYTES = 8  # the fuel counter sits first in the instance state
_FIELDS_PER_TUPLE = 16


class SSDletError(RuntimeError):
    """An SSDlet failed: its graph, instance, side and the reason. For bad input
    (the program set ``p.error_at``), ``byte_offset`` says where, in the file
    ``path`` for a node that scans one; both are None otherwise.

    >>> SSDletError("SSDlet parse ... stopped at bad input", byte_offset=7, path="x.csv").byte_offset
    7
    """

    def __init__(self, message: str, *, byte_offset: Optional[int] = None, path: Optional[str] = None) -> None:
        super().__init__(message)
        self.byte_offset, self.path = byte_offset, path


WorkPrice = Union[float, tuple[float, float]]


class SSDlet:
    """A device program (see the module doc); build one with :func:`ssdlet`."""

    #: Once :attr:`app` is made: ``"loaded"`` from the disk cache, ``"compiled"`` (and
    #: saved there), or why it was compiled in this process only.
    compiled_how: Optional[str] = None

    def __init__(self, func: Callable, *, inputs: Mapping[str, TypeSpec], outputs: Mapping[str, Union[TypeSpec, Out]],
                 args: Mapping[str, TypeSpec], state: Mapping[str, TypeSpec], work: Mapping[str, WorkPrice],
                 budget: int) -> None:
        self.func, self.name = func, func.__name__
        self.inputs = {k: port_type(t) for k, t in inputs.items()}
        self.outputs = {k: t if isinstance(t, Out) else Out(t) for k, t in outputs.items()}
        self.args = {k: _scalar_type(k, t) for k, t in args.items()}
        self.state = {k: _fixed_type(f"state {k!r}", t) for k, t in state.items()}
        self.work = {k: _work_price(k, v) for k, v in work.items()}
        self.budget = int(budget)
        _check_names(self)
        self.state_offsets, self.state_size = _state_layout(self.state)

    def __repr__(self) -> str:
        def ports(d: Mapping[str, Any]) -> str:
            return ", ".join(f"{k}: {(t.type if isinstance(t, Out) else t).name}" for k, t in d.items())

        text = f"SSDlet {self.name}({ports(self.inputs)}) -> ({ports(self.outputs)})"
        for label, d in (("args", self.args), ("state", self.state)):
            text += f"; {label} {ports(d)}" if d else ""
        return text + (f"; work {', '.join(self.work)}" if self.work else "")

    @cached_property
    def app(self):
        """The compiled StorageApp (a Numba cfunc; ``.address`` is what MINIT takes),
        loaded from the disk cache where a process compiled it before
        (:mod:`~ndp_core.ssdlets.disk_cache`); :attr:`compiled_how` says which."""
        import numba

        from ndp_core import engine

        namespace = {name: getattr(engine, name) for name in
                     ("app_args", "app_input", "app_state", "app_counters", "app_output", "app_set_written")}
        kernel = numba.njit(boundscheck=True)(metered_function(self.func))
        whole_items = numba.njit(inline="always")(_whole_items)
        namespace.update(np=np, kernel=kernel, Ports=self.ports_tuple, OUT_OF_BUDGET=OUT_OF_BUDGET, TRAPPED=TRAPPED,
                         BAD_INPUT=BAD_INPUT, error_slot=_error_slot(engine, whole_items), whole_items=whole_items)
        namespace.update({f"DT_{name}": t.dtype for name, t in self._typed_fields()}, StringsView=StringsView,
                         NullableView=NullableView, NullableStringsView=NullableStringsView)
        # The metered body is compiled into the app: its text goes into the fingerprint with the wrapper's.
        source_text = self.wrapper_source() + "".join(f"# {line}" for line in
                                                      metered_source(self.func).splitlines(True))
        app, self.compiled_how = compiled_app(source_text, "app", namespace, lambda func, cache: numba.cfunc(
            engine.APP_SIGNATURE, nopython=True, cache=cache)(func))
        return app

    @cached_property
    def ports_tuple(self) -> type:
        """The namedtuple type of ``p``."""
        fields = [*self.inputs, *self.outputs, *self.args, *self.state, *self.work, "error_at", "at_end"]
        return namedtuple(f"{self.name}_ports", fields)

    @property
    def output_buffers(self) -> int:
        """Buffers the output ports take in a call; the runtime's ``error_at`` buffer comes after them."""
        return sum(out.type.buffers for out in self.outputs.values())

    def _typed_fields(self) -> list[tuple[str, PortType]]:
        return [*self.inputs.items(), *((k, o.type) for k, o in self.outputs.items()), *self.args.items(),
                *self.state.items()]

    def wrapper_source(self) -> str:
        """The StorageApp around the metered function: it unpacks the AppCall
        into typed arrays, calls the function and reports what it wrote."""
        lines = ["def app(call):", "    words = app_args(call)", "    data = app_input(call)",
                 "    state = app_state(call)", "    work = app_counters(call)",
                 f"    fuel = state[0:{_FUEL_BYTES}].view(np.int64)", f"    fuel[0] = words[{_BUDGET}]"]
        views = self._field_views()
        lines += [f"    v{i} = {view}" for i, view in enumerate(views)]
        string_outputs = [i for i, (_, t) in enumerate(self._typed_fields()) if t.variable and i >= len(self.inputs)]
        lines += [f"    v{i}.offsets[0] = 0" for i in string_outputs]
        fields = [f"v{i}" for i in range(len(views))]
        fields += [f"work[{k}:{k + 1}]" for k in range(len(self.work))]
        # p.error_at: the buffer after the outputs' (the host reads it after a failed call; the
        # engine restores state and counters then, not outputs)
        fields += [f"error_slot(call, {self.output_buffers})", f"words[{_AT_END}] != 0"]
        # A call or tuple display of more than ~30 items compiles to a list turned into a tuple,
        # which Numba does not take: the fields go in as a sum of short tuples, unpacked.
        chunks = [f"({', '.join(fields[k:k + _FIELDS_PER_TUPLE])},)" for k in range(0, len(fields), _FIELDS_PER_TUPLE)]
        lines += [f"    fields = {' + '.join(chunks)}"]
        lines += ["    p = Ports(*fields)", "    try:", "        wrote = kernel(p, fuel)", "    except Exception:",
                  "        return OUT_OF_BUDGET if fuel[0] < 0 else (BAD_INPUT if p.error_at[0] >= 0 else TRAPPED)"]
        k = 0
        for j, out in enumerate(self.outputs.values()):
            count = "wrote" if len(self.outputs) == 1 else f"wrote[{j}]"
            if not out.type.variable:  # a count outside the capacity reports -1 bytes, which the engine refuses
                values = f"v{len(self.inputs) + j}" + (".values" if out.type.nullable else "")
                lines.append(f"    app_set_written(call, {k}, {count} * {out.type.itemsize} "
                             f"if 0 <= {count} <= {values}.size else -1)")
            else:  # a count past the offsets reports -1 bytes, which the engine refuses
                offsets = f"v{len(self.inputs) + j}.offsets"
                lines += [f"    n = {count}", f"    fits = n >= 0 and n < {offsets}.size",
                          f"    app_set_written(call, {k}, (n + 1) * 4 if fits else -1)",
                          f"    app_set_written(call, {k + 1}, {offsets}[n] if fits else -1)"]
            if out.type.nullable:  # a byte per value; a count past the capacity is refused as the values are
                lines.append(f"    app_set_written(call, {k + out.type.buffers - 1}, {count})")
            k += out.type.buffers
        return "\n".join(lines + ["    return 0", ""])

    def _field_views(self) -> list[str]:
        """What each typed field of ``p`` is in the AppCall (``DT_<name>``: its
        dtype), in :meth:`_typed_fields` order; a string or binary port is a
        ``StringsView`` of its two buffers."""
        views, w = [], _FIRST_INPUT
        for name, t in self.inputs.items():
            buffers = [f"data[words[{a}]:words[{a}] + words[{a + 1}]]" for a in range(w, w + 2 * t.buffers, 2)]
            views.append(_port_view(name, t, buffers, output=False))
            w += 2 * t.buffers
        k = 0
        for name, out in self.outputs.items():
            t = out.type
            buffers = [f"app_output(call, {b})" for b in range(k, k + t.buffers)]
            views.append(_port_view(name, t, buffers, output=True))
            k += t.buffers
        views += [f"words[{a}:{a + 1}].view(np.uint8)[:{t.itemsize}].view(DT_{name})[0]"
                  for a, (name, t) in enumerate(self.args.items(), w)]
        views += [f"state[{lo}:{lo + t.itemsize}].view(DT_{name})"
                  for lo, (name, t) in zip(self.state_offsets, self.state.items())]
        return views

    def arg_words(self, values: Mapping[str, Any]) -> list[int]:
        """The user arguments as AppCall.args words (checked: every declared
        argument given, none other, each representable in its type)."""
        missing = [k for k in self.args if k not in values]
        unknown = [k for k in values if k not in self.args]
        problems = ([f"missing argument(s) {missing}"] if missing else []) + \
            ([f"unknown argument(s) {unknown} (it takes {list(self.args)})"] if unknown else [])
        if problems:
            raise TypeError(f"SSDlet {self.name}: " + "; ".join(problems))
        words = []
        for k, t in self.args.items():
            try:
                scalar = t.dtype.type(values[k])
                exact = t.dtype.kind not in "iu" or scalar == values[k]
            except (OverflowError, ValueError, TypeError):
                exact = False
            if not exact:
                raise ValueError(f"SSDlet {self.name}: argument {k}={values[k]!r} does not fit {t.name}")
            word = np.zeros(1, dtype=np.int64)
            word.view(np.uint8)[:t.itemsize] = np.frombuffer(scalar.tobytes(), np.uint8)
            words.append(int(word[0]))
        return words

    def call_words(self, input_sizes: list[int], at_end: bool, budget: Optional[int], user_words: list[int]) -> list[int]:
        """All AppCall.args words of one call: inputs laid out one after another."""
        words = [int(at_end), self.budget if budget is None else int(budget)]
        offset = 0
        for size in input_sizes:
            words += [offset, size]
            offset += _aligned(size)
        return words + user_words


def ssdlet(func: Optional[Callable] = None, *, inputs: Mapping[str, TypeSpec] = {},
           outputs: Mapping[str, Union[TypeSpec, Out]] = {}, args: Mapping[str, TypeSpec] = {},
           state: Mapping[str, TypeSpec] = {}, work: Mapping[str, WorkPrice] = {},
           budget: int = DEFAULT_BUDGET):
    """Declare a device program (module doc). ``work`` maps each counter the
    program adds to (``p.<name>[0] += n``) to its price in cycles per unit on
    an embedded core, or a ``(device, host)`` pair; ``budget`` is the loop
    iterations one call may run. Compilation waits for the first MINIT."""

    def wrap(f: Callable) -> SSDlet:
        return SSDlet(f, inputs=inputs, outputs=outputs, args=args, state=state, work=work, budget=budget)

    return wrap if func is None else wrap(func)


def _aligned(n: int) -> int:
    return (n + 7) & ~7


def packet_bytes(arrays: list[np.ndarray]) -> np.ndarray:
    """One call's input: each port's bytes, 8-byte aligned, one after another
    (one port's packet goes as it is, without a copy)."""
    if len(arrays) == 1:
        return np.ascontiguousarray(arrays[0]).view(np.uint8)
    out = np.zeros(sum(_aligned(a.nbytes) for a in arrays), dtype=np.uint8)
    offset = 0
    for a in arrays:
        out[offset:offset + a.nbytes] = a.view(np.uint8)
        offset += _aligned(a.nbytes)
    return out


def _port_view(name: str, t: PortType, buffers: list[str], output: bool) -> str:
    """The expression ``p.<name>`` is, from its buffers' expressions (values, or
    offsets and bytes; then validity bytes if nullable). An output's buffers
    are cut to whole items first (their capacity is in bytes)."""
    def typed(buffer: str, itemsize: int, dtype: str) -> str:
        return f"{f'whole_items({buffer}, {itemsize})' if output else buffer}.view({dtype})"

    fields = [typed(buffers[0], 4, "np.int32"), buffers[1]] if t.variable else \
        [typed(buffers[0], t.itemsize, f"DT_{name}")]
    if t.nullable:
        return f"{'NullableStringsView' if t.variable else 'NullableView'}({', '.join(fields + [buffers[-1]])})"
    return f"StringsView({', '.join(fields)})" if t.variable else fields[0]


def _scalar_type(name: str, spec: TypeSpec) -> PortType:
    t = port_type(spec)
    if t.dtype.fields or t.variable or t.nullable:
        raise TypeError(f"argument {name!r}: arguments are fixed-width scalars, not records, strings or nullable")
    return t


def _fixed_type(what: str, spec: TypeSpec) -> PortType:
    t = port_type(spec)
    if t.variable or t.nullable:
        raise TypeError(f"{what}: state is fixed-width and not null, not {t.name}")
    return t


def _work_price(name: str, price: WorkPrice) -> tuple[float, float]:
    device, host = price if isinstance(price, tuple) else (price, price)
    if device < 0 or host < 0:
        raise ValueError(f"work counter {name!r}: prices are cycles per unit, >= 0")
    return float(device), float(host)


def _state_layout(state: Mapping[str, PortType]) -> tuple[list[int], int]:
    """Byte offset of each state field (after the fuel word) and the state's size."""
    offsets, at = [], _FUEL_BYTES
    for t in state.values():
        offsets.append(at)
        at += _aligned(t.itemsize)
    return offsets, at


def _error_slot(engine: Any, whole_items: Callable) -> Callable:
    """``p.error_at``: the output buffer after the program's own (``Application`` passes
    one), or a slot of the call's own where a caller passed none."""
    import numba

    n_outputs, output = engine.app_n_outputs, engine.app_output

    @numba.njit(inline="always")
    def error_slot(call, k):
        if n_outputs(call) > k:
            return whole_items(output(call, k), 8).view(np.int64)
        return np.full(1, -1, np.int64)

    return error_slot


def _whole_items(buffer: np.ndarray, itemsize: int) -> np.ndarray:
    """The bytes of ``buffer`` that hold whole items (a view can then retype them)."""
    return buffer[:buffer.size - buffer.size % itemsize]


def _check_names(program: SSDlet) -> None:
    seen: dict[str, str] = {}
    for kind, names in (("input", program.inputs), ("output", program.outputs), ("argument", program.args),
                        ("state", program.state), ("work counter", program.work)):
        for name in names:
            if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_") or \
                    name in ("at_end", "error_at"):
                raise ValueError(f"SSDlet {program.name}: {kind} name {name!r} must be a Python identifier, "
                                 "not a keyword, 'at_end', 'error_at' or starting with '_'")
            if name in seen:
                raise ValueError(f"SSDlet {program.name}: {name!r} is both an {seen[name]} and a {kind}")
            seen[name] = kind
