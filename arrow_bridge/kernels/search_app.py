"""The search StorageApp: :func:`arrow_bridge.kernels.search.search_span` in a
Numba ``cfunc`` the device runs on the pages its engine read.

Apart from the host kernels so that a host search never imports the ABI
helpers (nor Numba) it does not use.
"""
import numba
import numpy as np

from arrow_bridge.jit import load_numba
from arrow_bridge.kernels.search import (COUNT, INVALID_ARGS, LINES, OK, OUT_OF_SPACE, PLAN, PLAN_VERSION, RECORD_WORDS,
                                         RESULT, TASK, int_at, search_span)
from ndp_core.engine import (APP_CALL_LAYOUT, APP_CALL_WORDS, app_args, app_counters, app_output, app_set_written,
                             storage_app)

load_numba()  # the app below is compiled by Numba itself, calling the kernels declared through arrow_bridge.jit

_CALL_INPUT, _CALL_INPUT_LEN, _CALL_AT_EOF = APP_CALL_LAYOUT["input"], APP_CALL_LAYOUT["input_len"], \
    APP_CALL_LAYOUT["at_eof"]
_CALL_STATE, _CALL_STATE_SIZE = APP_CALL_LAYOUT["state"], APP_CALL_LAYOUT["state_size"]
_CALL_N_OUTPUTS = APP_CALL_LAYOUT["n_outputs"]


def _search_app(call):
    """The StorageApp's body (compiled by :func:`search_storage_app`).

    Output 0 takes the result header and records, output 1 the line bytes; the
    plan is the instance state and the task the command's args. INIT_TSK and
    FINAL_TSK (no args) do nothing. What it cannot trust returns ``INVALID_ARGS``.
    """
    args = app_args(call)
    if args.size < TASK.size:
        return OK
    words = numba.carray(call, APP_CALL_WORDS)
    plan, plan_bytes = words[_CALL_STATE], words[_CALL_STATE_SIZE]
    if plan_bytes < 8 * PLAN.size or int_at(plan, 8 * PLAN.version) != PLAN_VERSION or words[_CALL_N_OUTPUTS] < 2:
        return INVALID_ARGS
    head, lines = app_output(call, 0), app_output(call, 1)
    out = head[: head.size // 8 * 8].view(np.int64)
    if (int_at(plan, 8 * PLAN.plan_bytes) != plan_bytes or args[TASK.start] < 0
            or args[TASK.start] < 1 and args[TASK.first_line_at_start] == 0 or args[TASK.length] < 0
            or args[TASK.mode] < COUNT or args[TASK.mode] > LINES or args[TASK.records_capacity] < 0
            or out.size < RESULT.size + RECORD_WORDS * args[TASK.records_capacity]
            or args[TASK.data_capacity] < 0 or lines.size < args[TASK.data_capacity]):
        return INVALID_ARGS
    status = search_span(words[_CALL_INPUT], words[_CALL_INPUT_LEN], words[_CALL_AT_EOF] != 0, plan, args, out,
                         lines.ctypes.data, app_counters(call))
    if status == OUT_OF_SPACE:  # the sizes it needs
        app_set_written(call, 0, 8 * (RESULT.size + RECORD_WORDS * out[RESULT.records_needed]))
        app_set_written(call, 1, out[RESULT.data_needed])
    elif status == OK:
        app_set_written(call, 0, 8 * (RESULT.size + RECORD_WORDS * out[RESULT.records]))
        app_set_written(call, 1, out[RESULT.data_used])
    return status


_COMPILED = []


def search_storage_app():
    """The compiled StorageApp (a Numba ``cfunc``; pass ``.address`` to MINIT),
    compiled or loaded from Numba's cache on first use, so the host path never pays for it.

    >>> search_storage_app().address > 0
    True
    """
    if not _COMPILED:
        _COMPILED.append(storage_app(_search_app, cache=True))
    return _COMPILED[0]
