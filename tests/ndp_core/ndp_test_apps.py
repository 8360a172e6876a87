"""Tiny StorageApps (Numba cfuncs) the engine tests install.

One app, `probe`, covers every path so the tests pay for one compilation
(cached on disk afterwards). On each call it:
  * counts newline bytes into counters[0] and input bytes into counters[1];
  * stops with BAD_INPUT at the first b"X" (error offset = its position);
  * returns 42 (outside the ABI) at the first b"!";
  * claims to have written more than output 0 holds at the first b"?";
  * copies the input into output 0, or returns OUT_OF_SPACE with the size it
    needs when output 0 is too small;
  * bumps state[0] (a call count) and stores the opcode in state[1] and the
    task number in state[2].
Counters and state are changed before the checks, so the tests also see that
the engine rolls them back on failure.

`sleeper` sleeps in C (usleep) so tests can see parallel workers, timeouts
and the GIL being released.
"""
import ctypes

import numba
import numpy as np

from ndp_core.engine import (
    app_args,
    app_counters,
    app_input,
    app_n_outputs,
    app_opcode,
    app_output,
    app_set_error_offset,
    app_set_written,
    app_state,
    app_task,
    storage_app,
)

OUT_OF_SPACE = 5
BAD_INPUT = 2


@storage_app(cache=True)
def probe(call):
    data = app_input(call)
    counters = app_counters(call)
    state = app_state(call)
    if state.size >= 3:
        state[0] += 1
        state[1] = app_opcode(call) & 0xFF
        state[2] = app_task(call) & 0xFF
    newlines = 0
    for i in range(data.size):
        b = data[i]
        if b == 10:
            newlines += 1
        elif b == 88:  # "X"
            app_set_error_offset(call, i)
            return BAD_INPUT
        elif b == 33:  # "!"
            return 42
    if counters.size >= 2:
        counters[0] += newlines
        counters[1] += data.size
    if app_n_outputs(call) > 0:
        out = app_output(call, 0)
        for i in range(data.size):
            if data[i] == 63:  # "?": lie about the bytes written
                app_set_written(call, 0, out.size + 1)
                return 0
        if data.size > out.size:
            app_set_written(call, 0, data.size)
            return OUT_OF_SPACE
        out[: data.size] = data
        app_set_written(call, 0, data.size)
    return 0


@storage_app(cache=True)
def echo(call):
    """Writes its state then its args (as int64 words) to output 0."""
    if app_n_outputs(call) == 0:
        return 0  # INIT_TSK / FINAL_TSK
    state = app_state(call)
    args = app_args(call)
    out = app_output(call, 0)
    n = state.size + 8 * args.size
    if n > out.size:
        return OUT_OF_SPACE
    out[: state.size] = state
    words = out[state.size: n].view(np.int64)
    words[:] = args
    app_set_written(call, 0, n)
    return 0


_libc = ctypes.CDLL(None)
_usleep = _libc.usleep
_usleep.argtypes = [ctypes.c_uint]
_usleep.restype = ctypes.c_int
_clock_gettime = _libc.clock_gettime
_clock_gettime.argtypes = [ctypes.c_int, ctypes.c_void_p]
_clock_gettime.restype = ctypes.c_int
CLOCK_MONOTONIC = 1


@numba.njit
def _monotonic_ns():
    timespec = np.zeros(2, dtype=np.int64)  # tv_sec, tv_nsec
    _clock_gettime(CLOCK_MONOTONIC, timespec.ctypes)
    return timespec[0] * 1_000_000_000 + timespec[1]


@storage_app  # not cacheable: it calls through ctypes pointers
def sleeper(call):
    """Sleeps (state[0] + 1) * 50 ms without holding the GIL, counts calls in
    counters[0]; with 24 bytes of state, records when it started and ended
    (CLOCK_MONOTONIC ns, int64 at state bytes 8 and 16)."""
    state = app_state(call)
    started = _monotonic_ns()
    delay = 1 if state.size == 0 else state[0] + 1
    _usleep(delay * 50_000)
    counters = app_counters(call)
    if counters.size >= 1:
        counters[0] += 1
    if state.size >= 24:
        times = state[8:24].view(np.int64)
        times[0] = started
        times[1] = _monotonic_ns()
    return 0
