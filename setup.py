"""Build script: the only compiled piece is the C++ engine ``ndp_core._core`` (pybind11)."""
from glob import glob

from pybind11.setup_helpers import Pybind11Extension, build_ext
from setuptools import setup

core = Pybind11Extension(
    "ndp_core._core",
    sorted(glob("ndp_core/src/*.cpp")),
    include_dirs=["ndp_core/src"],
    cxx_std=17,
    extra_compile_args=["-O2"],
)

setup(ext_modules=[core], cmdclass={"build_ext": build_ext})
