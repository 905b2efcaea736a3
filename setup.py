"""pip install --no-build-isolation .   (docs/python.md)

Installs the Python package `fieldbrain` built by this repository's CMake: the extension
fieldbrain/_C and the operator library are built with `cmake --build <build> --target
fieldbrain_python` (configuring <build> first when it has no CMakeCache.txt), then the folder
<build>/python/fieldbrain is what gets installed. <build> is $FIELDBRAIN_BUILD_DIR, or build/ of
this checkout (the one scripts/build.sh makes, so an installed package is the tested one).

--no-build-isolation: pip would otherwise fetch setuptools into a fresh environment (no PyPI
here, and the build needs the installed torch anyway). On Debian 12 install into a venv made
with --system-site-packages (it sees Debian's torch) or with --user; the system Python refuses
pip installs (PEP 668).
"""

import os
import shutil
import subprocess
import sys

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.abspath(os.environ.get("FIELDBRAIN_BUILD_DIR", os.path.join(ROOT, "build")))


class BuildWithCMake(build_py):
    """build_py that builds the extension with CMake and copies the built package."""

    def run(self):
        if not os.path.exists(os.path.join(BUILD, "CMakeCache.txt")):
            subprocess.check_call(["cmake", "-S", ROOT, "-B", BUILD, "-G", "Ninja",
                                   "-DCMAKE_BUILD_TYPE=Release", "-DFIELDBRAIN_TESTS=OFF",
                                   f"-DFIELDBRAIN_PYTHON={sys.executable}",
                                   "-DFIELDBRAIN_PYTHON_PACKAGE=ON"])
        subprocess.check_call(["cmake", "--build", BUILD, "--target", "fieldbrain_python"])
        built = os.path.join(BUILD, "python", "fieldbrain")
        target = os.path.join(self.build_lib, "fieldbrain")
        os.makedirs(target, exist_ok=True)
        for name in sorted(os.listdir(built)):
            src = os.path.join(built, name)
            if os.path.isfile(src):
                shutil.copy2(src, os.path.join(target, name))


class BinaryDistribution(Distribution):
    """A wheel with a compiled extension: tagged for this platform and Python."""

    def has_ext_modules(self):
        return True


def version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        for line in f:
            if line.startswith("project(fieldbrain VERSION"):
                return line.split("VERSION")[1].split()[0]
    return "0"


setup(
    name="fieldbrain",
    version=version(),
    description="fieldbrain's brain, HRR library and operators from Python",
    packages=["fieldbrain"],
    package_dir={"fieldbrain": "python/fieldbrain"},
    python_requires=">=3.8",
    cmdclass={"build_py": BuildWithCMake},
    distclass=BinaryDistribution,
    zip_safe=False,
    # setuptools' scratch inside the CMake build folder, not in the checkout (whose build/ is
    # CMake's and whose root stays clean).
    options={"build": {"build_base": os.path.join(BUILD, "setuptools")},
             "egg_info": {"egg_base": os.path.join(BUILD, "setuptools")}},
)
