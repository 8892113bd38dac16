"""Run a benchmark and keep its output with where and when it was measured.

Run:  python bench/record.py SCRIPT [ARGS ...]      e.g.  python bench/record.py native_fmu --fmus dist

Runs ``bench/SCRIPT.py ARGS`` (its output shown as it comes), then writes ``bench/results/SCRIPT.md``: the
command, the commit (and whether the working tree differed from it), the date, the machine (CPU model,
cores, memory, OS, Python) and the script's output verbatim. The documentation's benchmark page is
generated from these files (``python -m fmu_mb.docs_pages``), so its tables are the last recorded runs,
never pasted by hand. A script that fails records nothing.
"""
from __future__ import annotations

import datetime
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().parent / "results"


def _git(*args) -> str:
    r = subprocess.run(["git", *args], capture_output=True, text=True, cwd=ROOT)
    return r.stdout.strip() if r.returncode == 0 else ""


def machine() -> str:
    """CPU model, cores, memory, OS and Python of this machine, in one line."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        mem = next(int(x.split()[1]) for x in Path("/proc/meminfo").read_text().splitlines()
                   if x.startswith("MemTotal")) / 2 ** 20
        memory = f", {mem:.0f} GiB"
    except (OSError, StopIteration, ValueError):
        memory = ""
    return (f"{cpu}, {os.cpu_count()} cores{memory}; {platform.system()} {platform.release()}; "
            f"Python {platform.python_version()}")


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or not (ROOT / "bench" / f"{argv[0]}.py").is_file():
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    script, args = argv[0], argv[1:]
    command = " ".join(["python", f"bench/{script}.py", *args])
    proc = subprocess.Popen([sys.executable, str(ROOT / "bench" / f"{script}.py"), *args], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)
    lines = []
    for line in proc.stdout:
        sys.stdout.write(line)
        lines.append(line)
    if proc.wait() != 0:
        print(f"record: {command} failed (exit {proc.returncode}): nothing recorded", file=sys.stderr)
        return proc.returncode
    commit = _git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = " (with uncommitted changes)" if _git("status", "--porcelain", "--untracked-files=no", "--", ".",
                                                  ":(exclude)bench/results") else ""     # (its own records)
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"{script}.md"
    out.write_text(f"## {script}\n\n`{command}` — commit {commit}{dirty}, {when}, {machine()}.\n\n"
                   "```text\n" + "".join(lines).rstrip() + "\n```\n")
    print(f"record: {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
