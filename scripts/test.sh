#!/usr/bin/env bash
# The README's test command: installs what the suite needs and runs it (from the repository's root).
# System packages, where it can (root with apt; elsewhere their tests skip and say so): Debian's Chromium
# (the report's and the site's browser tests), mingw-w64 and wine64 (the Windows kernel library and running
# it), the AArch64 cross compiler and qemu-user (the AArch64 target).
set -euo pipefail
cd "$(dirname "$0")/.."
(command -v chromium && command -v x86_64-w64-mingw32-gcc && test -x /usr/lib/wine/wine64 \
  && command -v aarch64-linux-gnu-gcc && command -v qemu-aarch64 \
  || (apt-get update -qq && apt-get install -y -qq chromium gcc-mingw-w64-x86-64 gcc-aarch64-linux-gnu \
      && apt-get install -y -qq --no-install-recommends wine64 qemu-user)) >/dev/null 2>&1 || true
python3 -m venv .venv
.venv/bin/pip install -q -e '.[test]'
# One worker per core, each test file whole on one worker (its module fixtures built once), the longest files first
# (tests/conftest.py LONGEST_FIRST; --no-loadscope-reorder: pytest-xdist would hand out the files with the most tests
# first instead); the FMU sets of the session fixtures are built once, in parallel, and shared by the workers
# (tests/conftest.py built_once), the kernel library once (fmu_mb.native.library locks its cache).
.venv/bin/python -m pytest -q -n auto --dist loadfile --no-loadscope-reorder --durations=25 "$@"
