"""What `autodiff test` found: each program's result, the suite, and its reports (the text
report with its diffs, JUnit XML, the JSON summary).

Every text of a program in them (its output, its error, its file name) is shown as
readers can take it: on a terminal with control characters made visible (cli/terminal.py),
in XML with what XML cannot hold escaped the same way, in JSON as JSON escapes it.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TextIO

from autodiff.text.display import escape_char, visible
from autodiff.text.i18n import _

PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"
_NOT_XML = re.compile("[\ufffe\uffff]")  # what `visible` leaves and XML 1.0 refuses


@dataclass
class CaseResult:
    program: str
    status: str  # passed | failed | skipped
    reason: str = ""  # one line: why it failed or was skipped
    diff: str = ""  # plain unified diff of expected against actual
    seconds: float = 0.0
    stderr: str = ""  # warnings the program printed (not compared)


@dataclass
class Suite:
    results: list[CaseResult]
    seconds: float
    jobs: int

    def count(self, status: str) -> int:
        return sum(r.status == status for r in self.results)

    @property
    def ok(self) -> bool:
        return self.count(FAILED) == 0

    def summary(self) -> str:
        """The plain last line: `N passed, M failed`, plus `, K skipped` when some were."""
        skipped = self.count(SKIPPED)
        line = _("{passed} passed, {failed} failed, {skipped} skipped") if skipped else \
            _("{passed} passed, {failed} failed")
        return line.format(passed=self.count(PASSED), failed=self.count(FAILED), skipped=skipped)


def _xml_text(text: str) -> str:
    """`text` as XML 1.0 can hold it: a control character, a lone surrogate (a file name that
    is not UTF-8) or a noncharacter shown as its escape, as on a terminal."""
    return _NOT_XML.sub(lambda m: escape_char(m.group()), visible(text, keep="\t\n"))


def junit_xml(suite: Suite, name: str = "autodiff test") -> str:
    """A JUnit XML report in the common (Jenkins) schema: one testcase per program."""
    import socket
    import xml.etree.ElementTree as ET
    from datetime import datetime, timezone

    counts = {"tests": str(len(suite.results)), "failures": str(suite.count(FAILED)),
              "errors": "0", "skipped": str(suite.count(SKIPPED)), "time": f"{suite.seconds:.3f}"}
    root = ET.Element("testsuites", name=name, **counts)
    stamp = datetime.now(timezone.utc).replace(microsecond=0, tzinfo=None).isoformat()
    testsuite = ET.SubElement(root, "testsuite", name=name, **counts, timestamp=stamp,
                              hostname=socket.gethostname())
    for r in suite.results:
        path = Path(r.program)
        case = ET.SubElement(testsuite, "testcase", name=path.name,
                             classname=path.parent.as_posix().strip("/").replace("/", ".")
                             or ".", time=f"{r.seconds:.3f}")  # no `file`: not in the schema
        if r.status == SKIPPED:
            ET.SubElement(case, "skipped", message=_xml_text(r.reason))
        elif r.status == FAILED:
            failure = ET.SubElement(case, "failure", message=_xml_text(r.reason),
                                    type="OutputMismatch")
            failure.text = _xml_text(r.diff)
        if r.stderr:
            ET.SubElement(case, "system-err").text = _xml_text(r.stderr)
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{body}\n'


def json_summary(suite: Suite) -> dict[str, Any]:
    """The `--json` document (schema autodiff.test/1, see docs/golden-testing.md)."""
    return {"schema": "autodiff.test/1", "passed": suite.count(PASSED),
            "failed": suite.count(FAILED), "skipped": suite.count(SKIPPED),
            "seconds": round(suite.seconds, 3), "jobs": suite.jobs,
            "results": [{**asdict(r), "seconds": round(r.seconds, 3)} for r in suite.results]}


def print_failures(suite: Suite, out: TextIO, no_color: bool) -> None:
    """Each failure: `FAILED PROGRAM: reason`, then its diff (coloured on a terminal)."""
    failures = [r for r in suite.results if r.status == FAILED]
    if not failures:
        return
    from rich.text import Text

    from .console import draws_in_colour, make_console

    console = make_console(out, no_color=no_color)
    if not draws_in_colour(console):  # raw: Rich would expand the tabs of a diff
        for r in failures:
            out.write(f"FAILED {r.program}: {r.reason}\n{r.diff}")
        return
    styles = {"+": "green", "-": "red", "@": "cyan", "\\": "dim"}
    for r in failures:
        console.print(Text.assemble(("FAILED", "fail"), f" {r.program}: {r.reason}"))
        for line in r.diff.splitlines():
            head = "bold" if line.startswith(("--- ", "+++ ")) else styles.get(line[:1], "")
            # visible first: Rich's Text drops \r and BEL, which the plain diff shows
            console.print(Text(visible(line), style=head))


