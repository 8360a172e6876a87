"""Test-session set-up shared by every test path (tests/ and the packages' doctests).

Without a CUDA driver, CUDA kernels run on Numba's simulator: set before
anything imports ``numba.cuda``, so ``cuda_p2p``'s tests and doctests run
here as they do on a GPU (slowly: keep their inputs small).
"""
import os

from cuda_p2p.runtime import driver_present

if "NUMBA_ENABLE_CUDASIM" not in os.environ and not driver_present():
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    import numba

    numba.config.ENABLE_CUDASIM = True
