"""Test-session set-up shared by every test path (tests/ and the packages' doctests).

Without a CUDA driver, CUDA kernels run on Numba's simulator: set before
anything imports ``numba.cuda``, so ``cuda_p2p``'s tests and doctests run
here as they do on a GPU (slowly: keep their inputs small).
"""
import os

from arrow_bridge.jit import load_numba
from cuda_p2p.runtime import driver_present

if "NUMBA_ENABLE_CUDASIM" not in os.environ and not driver_present():
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    import numba

    numba.config.ENABLE_CUDASIM = True

# Tests compile Numba functions of their own that call the reader's kernels
# and intrinsics: Numba must know those before any test module imports them. (It also locks
# Numba's cache saves: make test runs the suite in several processes.)
load_numba()
