"""The command engine's Python face: status/opcode enums and the StorageApp ABI
for Numba.

The engine itself lives in C++ (``ndp_core._core.Engine``); this module adds
names and the helpers a Numba kernel uses to read its ``AppCall``.

A StorageApp is a Numba ``cfunc`` with signature ``int32(CPointer(int64))``:
the engine passes a pointer to the ``AppCall`` struct (``src/storage_app.h``),
whose fields are all 8-byte words. The ``app_*`` helpers below turn those words
into arrays, so an app never hard-codes offsets::

    >>> import tempfile
    >>> import numpy as np
    >>> from ndp_core.engine import Engine, Status, app_counters, app_input, storage_app
    >>> @storage_app
    ... def count_newlines(call):
    ...     data = app_input(call)
    ...     counters = app_counters(call)
    ...     for b in data:
    ...         if b == 10:
    ...             counters[0] += 1
    ...     return 0
    >>> with tempfile.NamedTemporaryFile(suffix=".txt") as text:
    ...     _ = text.write(b"one\\ntwo\\nthree\\n"); text.flush()
    ...     engine = Engine(page_size=4)
    ...     s = engine.stream_create(text.name)
    ...     inst = engine.minit(count_newlines.address, streams=[s])
    ...     counters = np.zeros(1, dtype=np.int64)
    ...     done = engine.wait(engine.submit_mread(inst, s, 0, 4, [], counters))
    ...     final_state = engine.mdeinit(inst); engine.stream_close(s); engine.close()
    >>> done.status == Status.OK, int(counters[0])
    (True, 3)

The helpers (and ``storage_app``) are built on first use, so importing
``ndp_core`` does not import Numba.

Ctrl-C: ``Engine.wait`` on the main thread waits in slices and runs Python's
signal handlers between them, so a KeyboardInterrupt comes while a long
command runs (the command stays in flight: wait for it again to consume it).
``raise_keyboard_interrupt_after(frame)`` is for Python code that C++ code
calls back (a generator pyarrow pulls batches from): it ends quietly on
Ctrl-C, and the consumer gets the KeyboardInterrupt once that C++ call returns.
"""
from __future__ import annotations

import enum

from ndp_core._core import (
    APP_ABI_VERSION,
    APP_CALL_LAYOUT,
    APP_CALL_WORDS,
    APP_OUTPUT_WORDS,
    MAX_PAGES_PER_COMMAND,
    OPCODES,
    STATUSES,
    Completion,
    Engine,
    raise_keyboard_interrupt_after,
    split_request,
)

Status = enum.IntEnum("Status", STATUSES)
Status.__doc__ = """Completion statuses: the app's own (OK, NEEDS_MORE_INPUT, BAD_INPUT,
OUT_OF_SPACE) pass through; engine errors start at 16."""
#: Statuses from here up are an app's own: codes its kernels pass among
#: themselves. Apps number their internal codes from here, so no internal code
#: equals an engine status by accident. The engine completes a command whose
#: app returns any status outside the ABI with APP_ERROR: an app that cannot
#: run a command (arguments it cannot trust) returns one of its own on purpose.
APP_PRIVATE_STATUS_BASE = 64
assert APP_PRIVATE_STATUS_BASE > max(Status), "engine statuses must stay below the app-private range"

Opcode = enum.IntEnum("Opcode", OPCODES)
Opcode.__doc__ = "Command opcodes, named as in the papers (NVMe READ/WRITE, Morpheus, Summarizer)."

_ABI_NAMES = (
    "APP_SIGNATURE",
    "storage_app",
    "app_input",
    "app_at_eof",
    "app_opcode",
    "app_task",
    "app_first_page",
    "app_state",
    "app_counters",
    "app_n_outputs",
    "app_output",
    "app_set_written",
    "app_set_error_offset",
    "app_args",
)

__all__ = [
    "APP_ABI_VERSION",
    "APP_CALL_LAYOUT",
    "APP_CALL_WORDS",
    "APP_PRIVATE_STATUS_BASE",
    "MAX_PAGES_PER_COMMAND",
    "Completion",
    "Engine",
    "Opcode",
    "Status",
    "raise_keyboard_interrupt_after",
    "split_request",
    *_ABI_NAMES,
]


def _build_abi() -> dict:
    """Compile-time helpers for Numba apps (Numba is imported only here)."""
    import numba
    from numba import types
    from numba.extending import intrinsic

    layout = APP_CALL_LAYOUT
    words = APP_CALL_WORDS
    ow = APP_OUTPUT_WORDS
    w_input, w_len, w_eof = layout["input"], layout["input_len"], layout["at_eof"]
    w_state, w_state_size = layout["state"], layout["state_size"]
    w_outputs, w_n_outputs = layout["outputs"], layout["n_outputs"]
    w_counters, w_n_counters = layout["counters"], layout["n_counters"]
    w_error, w_opcode, w_task = layout["error_offset"], layout["opcode"], layout["task"]
    w_first_page = layout["first_page"]
    w_args, w_n_args = layout["args"], layout["n_args"]

    def _pointer_cast(target):
        # The AppCall stores pointers as int64 words; Numba has no built-in
        # int -> pointer cast, so this one-instruction intrinsic provides it.
        @intrinsic
        def cast(typingctx, addr):
            sig = types.CPointer(target)(types.int64)

            def codegen(context, builder, signature, args):
                return builder.inttoptr(args[0], context.get_value_type(types.CPointer(target)))

            return sig, codegen

        return cast

    u8ptr = _pointer_cast(types.uint8)
    i64ptr = _pointer_cast(types.int64)

    @numba.njit(inline="always")
    def app_input(call):
        """The input span (uint8 array, read-only by contract)."""
        w = numba.carray(call, words)
        return numba.carray(u8ptr(w[w_input]), w[w_len])

    @numba.njit(inline="always")
    def app_at_eof(call):
        return numba.carray(call, words)[w_eof] != 0

    @numba.njit(inline="always")
    def app_opcode(call):
        return numba.carray(call, words)[w_opcode]

    @numba.njit(inline="always")
    def app_task(call):
        return numba.carray(call, words)[w_task]

    @numba.njit(inline="always")
    def app_first_page(call):
        return numba.carray(call, words)[w_first_page]

    @numba.njit(inline="always")
    def app_state(call):
        """This instance's private state (uint8 array, zeroed at MINIT)."""
        w = numba.carray(call, words)
        return numba.carray(u8ptr(w[w_state]), w[w_state_size])

    @numba.njit(inline="always")
    def app_counters(call):
        """The work counters (int64 array) the app adds to."""
        w = numba.carray(call, words)
        return numba.carray(i64ptr(w[w_counters]), w[w_n_counters])

    @numba.njit(inline="always")
    def app_args(call):
        """The command's parameters (int64 array; empty when none were given)."""
        w = numba.carray(call, words)
        return numba.carray(i64ptr(w[w_args]), w[w_n_args])

    @numba.njit(inline="always")
    def app_n_outputs(call):
        return numba.carray(call, words)[w_n_outputs]

    @numba.njit(inline="always")
    def app_output(call, k):
        """Output buffer k as a uint8 array of its full capacity."""
        w = numba.carray(call, words)
        o = numba.carray(i64ptr(w[w_outputs]), ow * w[w_n_outputs])
        return numba.carray(u8ptr(o[ow * k]), o[ow * k + 1])

    @numba.njit(inline="always")
    def app_set_written(call, k, n):
        """Report bytes written to output k (or, with OUT_OF_SPACE, bytes needed)."""
        w = numba.carray(call, words)
        o = numba.carray(i64ptr(w[w_outputs]), ow * w[w_n_outputs])
        o[ow * k + 2] = n

    @numba.njit(inline="always")
    def app_set_error_offset(call, offset):
        """Byte offset in the input of the bad byte (with BAD_INPUT)."""
        numba.carray(call, words)[w_error] = offset

    signature = types.int32(types.CPointer(types.int64))

    def storage_app(func=None, *, cache=False):
        """Compile ``func(call) -> int`` into a StorageApp (a Numba cfunc); pass
        ``.address`` to ``Engine.minit``."""

        def wrap(f):
            return numba.cfunc(signature, nopython=True, cache=cache)(f)

        return wrap if func is None else wrap(func)

    names = dict(locals())
    helpers = {name: names[name] for name in _ABI_NAMES if name in names}
    helpers["APP_SIGNATURE"] = signature
    return helpers


def __getattr__(name):  # PEP 562: build the Numba helpers on first use
    if name in _ABI_NAMES:
        globals().update(_build_abi())
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
