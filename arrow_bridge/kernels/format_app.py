"""The writer as a StorageApp (Morpheus MWRITE): format one batch inside the device.

A module-level cfunc, so Numba's cache finds it again in every process (a
cfunc built inside a function is keyed by its closure and recompiled).
"""
from arrow_bridge.kernels.formatting import BAD_VALUE, mwrite_step
from ndp_core.engine import (
    app_counters,
    app_input,
    app_n_outputs,
    app_output,
    app_set_error_offset,
    app_set_written,
    app_state,
    storage_app,
)

BAD_INPUT = 2


@storage_app(cache=True)
def csv_format(call):
    if app_n_outputs(call) < 1:
        return BAD_INPUT  # nowhere to put the text
    status, written, bad = mwrite_step(app_input(call), app_state(call), app_output(call, 0),
                                       app_counters(call))
    app_set_written(call, 0, written)
    if status == BAD_VALUE:
        app_set_error_offset(call, bad)
        return BAD_INPUT
    return status  # OK (0) or OUT_OF_SPACE (5): the ABI's numbers
