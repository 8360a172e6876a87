"""Build script: the only compiled piece is the C++ engine ``ndp_core._core`` (pybind11).

``NDP_SANITIZE=address,undefined`` (or ``thread``) builds it with those
sanitizers, for ``make sanitize``.
"""
import os
from glob import glob

from pybind11.setup_helpers import ParallelCompile, Pybind11Extension, build_ext
from setuptools import setup

# The sources compile in parallel, one per core (NPY_NUM_BUILD_JOBS=N to choose).
ParallelCompile("NPY_NUM_BUILD_JOBS").install()

sanitize = os.environ.get("NDP_SANITIZE", "")
checks = [f"-fsanitize={sanitize}", "-fno-omit-frame-pointer", "-fno-sanitize-recover=all", "-g"] if sanitize else []
core = Pybind11Extension(
    "ndp_core._core",
    sorted(glob("ndp_core/src/*.cpp")),
    include_dirs=["ndp_core/src"],
    cxx_std=17,
    extra_compile_args=(["-O1"] if sanitize else ["-O2"]) + checks,
    extra_link_args=checks,
)

setup(ext_modules=[core], cmdclass={"build_ext": build_ext})
