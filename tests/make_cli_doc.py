"""Fill docs/cli.md's examples from real runs of the commands they show.

Each example in the page is a fenced block right after a marker line

    <!-- example: autodiff graph samples/d2l_detach.tg --format dot -->

whose command runs under bash in the repository root (NO_COLOR=1, COLUMNS=100, LC_ALL=C.UTF-8, the
`autodiff` beside this Python first on PATH); the block becomes `$ COMMAND`, then what it
printed (stdout and stderr, as they came). Everything else in the page is prose, kept as written.

    python tests/make_cli_doc.py           # rewrite docs/cli.md
    python tests/make_cli_doc.py --check   # exit 1 when docs/cli.md is stale

tests/test_cli_doc.py fails when the committed page differs from what this writes.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "cli.md"
MARKER = re.compile(r"^<!-- example: (?P<command>.+?) -->\n```\n(?P<body>.*?)```\n",
                    re.S | re.M)


def run(command: str) -> str:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100", "TERM": "dumb", "LC_ALL": "C.UTF-8",
           "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}
    done = subprocess.run(["bash", "-c", command], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    return done.stdout


def rendered(page: str) -> str:
    def fill(match: re.Match) -> str:
        command = match.group("command")
        output = run(command)
        if "Traceback (most recent call last)" in output:  # never document a crash
            raise SystemExit(f"`{command}` printed a Python traceback:\n{output}")
        if output and not output.endswith("\n"):
            output += "\n"
        return f"<!-- example: {command} -->\n```\n$ {command}\n{output}```\n"

    return MARKER.sub(fill, page)


def main(argv: list[str]) -> int:
    page = PAGE.read_text(encoding="utf-8")
    fresh = rendered(page)
    if "--check" in argv:
        if fresh != page:
            print("docs/cli.md is stale: run python tests/make_cli_doc.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
