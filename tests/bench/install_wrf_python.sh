#!/bin/sh
# usage: install_wrf_python.sh PYTHON
# Installs wrf-python into the virtual environment of PYTHON, for the
# wrf-python check of the bench's files (tests/python/test_wrf_python.py).
#
# Why not a dependency in python/pyproject.toml: PyPI has wrf-python only as the
# 1.3.4.1 source distribution (no wheels for any Python), whose setup.py
# imports numpy.distutils, so pip's isolated build fails ("No module named
# numpy") and a plain `pip install -r` would break the whole environment.
# It builds (gfortran) with build isolation off, against the environment's
# own NumPy, in a throw-away build environment with setuptools < 60 (which
# numpy.distutils needs); the wheel is then installed with its one run-time
# dependency, wrapt. Takes a few minutes once; does nothing when `import wrf`
# already works.
set -e
py=${1:?usage: install_wrf_python.sh PYTHON}
# (np.float_: wrf-python 1.3.4.1 needs the alias NumPy 2 removed; the test provides it too.)
if "$py" -c "import numpy as np; np.float_ = np.float64; import wrf" 2>/dev/null; then
  echo "install_wrf_python: wrf-python already installed"
  exit 0
fi
numpy=$("$py" -c "import numpy; print(numpy.__version__)")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$py" -m venv "$work/venv"
"$work/venv/bin/pip" install -q "numpy==$numpy" "setuptools<60" wheel
SETUPTOOLS_USE_DISTUTILS=stdlib "$work/venv/bin/pip" wheel -q --no-build-isolation --no-deps \
  -w "$work/wheels" "wrf-python==1.3.4.1"
"$py" -m pip install -q --no-deps "$work"/wheels/wrf_python-*.whl
"$py" -m pip install -q wrapt
echo "install_wrf_python: installed $(ls "$work"/wheels)"
