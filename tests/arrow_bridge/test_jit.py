"""Kernels declared through arrow_bridge.jit: Numba only when one runs, and typed like Numba's own."""
import os
import pickle
import subprocess
import sys

import numba
import numpy as np

from arrow_bridge.jit import Kernel, load_numba, njit
from arrow_bridge.kernels.tokenizer import count_line_breaks
from arrow_bridge.numbers import eisel_lemire, swar


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_importing_the_reader_imports_no_numba():
    out = _run("import sys, arrow_bridge, dask_plugin; print('numba' in sys.modules, 'llvmlite.binding' in sys.modules)")
    assert out.split() == ["False", "False"]


def test_intrinsics_wait_for_numba_then_every_module_holds_the_built_one():
    out = _run(
        "import arrow_bridge.numbers.eisel_lemire as el, arrow_bridge.numbers.swar as sw\n"
        "print(type(sw.mul128).__name__, el.mul128 is sw.mul128)\n"
        "try:\n    sw.mul128(1, 2)\nexcept NotImplementedError as e:\n    print('refused')\n"
        "from arrow_bridge.jit import load_numba\nload_numba()\n"
        "print(type(sw.mul128).__name__, el.mul128 is sw.mul128)\n")
    assert out.split() == ["_IntrinsicPlaceholder", "True", "refused", "_Intrinsic", "True"]


def test_a_kernel_is_typed_inside_numba_functions_and_other_kernels():
    load_numba()
    data = np.frombuffer(b"a\nb\r\nc\n", dtype=np.uint8)

    @numba.njit
    def through_numba(buf):
        return count_line_breaks(buf, 0, buf.size)

    @njit(cache=False)
    def through_a_kernel(buf):
        return count_line_breaks(buf, 0, buf.size) + 1

    assert isinstance(count_line_breaks, Kernel)
    assert through_numba(data) == count_line_breaks(data, 0, data.size) == 3
    assert through_a_kernel(data) == 4


def test_intrinsics_and_inlined_kernels_compile_in_numba_functions():
    load_numba()
    assert swar.digits_value.targetoptions["inline"] == "always"  # the dispatcher's options, made on demand

    @numba.njit
    def high_word(a, b):
        return swar.mul128(a, b)[0], eisel_lemire.bits_to_float64(np.uint64(0x3FF0000000000000))

    hi, one = high_word(np.uint64(1 << 63), np.uint64(4))
    assert (int(hi), one) == (2, 1.0)


def test_a_kernel_pickles_as_a_reference_and_reads_like_its_function():
    assert pickle.loads(pickle.dumps(count_line_breaks)) is count_line_breaks
    assert count_line_breaks.__name__ == "count_line_breaks"
    assert count_line_breaks.__doc__ == count_line_breaks.py_func.__doc__
    assert repr(count_line_breaks) == "<kernel arrow_bridge.kernels.tokenizer.count_line_breaks>"


def test_a_numba_cfunc_compiled_first_types_kernels_and_their_intrinsics(tmp_path):
    # Numba imported by the caller, nothing cached: inlining a kernel into the caller builds our
    # intrinsics in the middle of the caller's compile, which then types one of them
    # (this once failed: "name 'word_at' is not defined").
    code = ("import numba, numpy as np\n"
            "from arrow_bridge.kernels.search import int_at\n"
            "@numba.cfunc('int64(int64)')\n"
            "def first_word(address):\n"
            "    return int_at(address, 8)\n"
            "words = np.array([5, 90], dtype=np.int64)\n"
            "print(first_word.ctypes(words.ctypes.data))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["90"]


def _kernel_made_inside(factor):
    @njit(nogil=True)
    def scaled(x):
        return factor * x

    return scaled


def test_a_kernel_made_inside_a_function_pickles_by_value():
    import cloudpickle

    made = _kernel_made_inside(3)
    assert "<locals>" in made.__qualname__
    copy = cloudpickle.loads(cloudpickle.dumps(made))
    assert isinstance(copy, Kernel) and copy.options == made.options
    assert copy.py_func.__code__.co_code == made.py_func.__code__.co_code and copy(7) == 21


def test_a_kernel_named_by_its_module_pickles_by_name():
    """The fused loop is made inside a function, twice, and named by the module for each."""
    from arrow_bridge.kernels.fused import _BOUNDED_RECORDS, parse_every_record

    for kernel in (parse_every_record, _BOUNDED_RECORDS):
        assert pickle.loads(pickle.dumps(kernel)) is kernel


def test_numba_cache_saves_take_a_lock_once_a_kernel_loads_numba():
    """Processes compiling one kernel at new types at once (Dask's workers on their
    first partition) must not interleave their writes of Numba's cache index."""
    code = ("from numba.core import caching\n"
            "before = getattr(caching.IndexDataCacheFile.save, 'locked', False)\n"
            "from arrow_bridge.kernels.tokenizer import count_line_breaks\n"
            "count_line_breaks.dispatcher\n"
            "print(before, caching.IndexDataCacheFile.save.locked)\n")
    assert _run(code).split() == ["False", "True"]
