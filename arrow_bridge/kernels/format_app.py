"""The writer as a StorageApp (Morpheus MWRITE): format one batch inside the device.

Input: one batch (:mod:`arrow_bridge.kernels.formatting`); output 0: the text
to store at the command's page (whole pages, all of it for the ``F_LAST``
batch); state: ``STATE_HEADER + page_size`` bytes; work counters:
``WRITER_COUNTERS``. Returns only ABI statuses: OK, OUT_OF_SPACE (output 0's
``written`` holds the size needed) or BAD_INPUT (``error_offset`` holds the
bad field's index, -1 for a malformed batch or state).

A module-level cfunc, so Numba's cache finds it again in every process (a
cfunc built inside a function is keyed by its closure and recompiled). Only
the device path imports this module, so the host path never compiles it.

>>> csv_format.address > 0
True
"""
from arrow_bridge.jit import load_numba
from arrow_bridge.kernels.formatting import mwrite_step
from arrow_bridge.kernels.status import BAD_VALUE, OK
from ndp_core.engine import (
    Status,
    app_counters,
    app_input,
    app_n_outputs,
    app_output,
    app_set_error_offset,
    app_set_written,
    app_state,
    storage_app,
)

load_numba()  # the app below is compiled by Numba itself, calling the kernels declared through arrow_bridge.jit


@storage_app(cache=True)
def csv_format(call):
    if app_n_outputs(call) < 1:
        return Status.BAD_INPUT  # nowhere to put the text
    status, written, bad = mwrite_step(app_input(call), app_state(call), app_output(call, 0),
                                       app_counters(call))
    app_set_written(call, 0, written)
    if status == OK:
        return Status.OK
    if status == BAD_VALUE:
        app_set_error_offset(call, bad)
        return Status.BAD_INPUT
    return Status.OUT_OF_SPACE  # the only other status format_batch returns
