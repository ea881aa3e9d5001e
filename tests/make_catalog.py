"""The Chinese catalog: extract autodiff's messages, merge them into the .po, compile the .mo.

The messages are every string literal passed to `_()` or `N_()` in the package, and each
op's `explain=` text (the rule in a learner's words that `autodiff explain` shows), found by
walking the source's syntax trees. The .po is the one a translator edits (standard gettext
format); the .mo beside it is what the package ships and reads (gettext's binary format,
written here with the standard library: GNU msgfmt is not needed).

    python tests/make_catalog.py           # merge new messages into the .po (empty
                                           # translations to fill), drop gone ones, write the .mo
    python tests/make_catalog.py --check   # exit 1 when the .po or the .mo is stale

tests/test_i18n.py fails when the committed files differ from what this writes.
"""

from __future__ import annotations

import ast
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("cli", "parser", "text", "engine", "interpreter")
LOCALE = ROOT / "text" / "locale" / "zh_CN" / "LC_MESSAGES"
PO = LOCALE / "autodiff.po"
MO = LOCALE / "autodiff.mo"
HEADER = ("Project-Id-Version: autodiff\n"
          "Language: zh_CN\n"
          "MIME-Version: 1.0\n"
          "Content-Type: text/plain; charset=UTF-8\n"
          "Content-Transfer-Encoding: 8bit\n")
MARKERS = ("_", "N_")


def extract(root: Path = ROOT) -> dict[str, list[str]]:
    """msgid -> the files that use it, in the order first met."""
    found: dict[str, list[str]] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            where = path.relative_to(root).as_posix()
            for text in messages_in(ast.parse(path.read_text(encoding="utf-8"))):
                files = found.setdefault(text, [])
                if where not in files:
                    files.append(where)
    return found


def messages_in(tree: ast.AST) -> list[str]:
    texts = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Name) and node.func.id in MARKERS and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                texts.append(arg.value)
        for keyword in node.keywords:
            if keyword.arg == "explain" and isinstance(keyword.value, ast.Constant) and \
                    isinstance(keyword.value.value, str):
                texts.append(keyword.value.value)
    return texts


# --- the .po file ------------------------------------------------------------------------

def _quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t")
    lines = escaped.split("\n")
    parts = [line + "\\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    if len(parts) <= 1:
        return f'"{parts[0] if parts else ""}"'
    return '""\n' + "\n".join(f'"{p}"' for p in parts)


def _unquote(literal: str) -> str:
    body = literal.strip()
    assert body.startswith('"') and body.endswith('"'), body
    out, chars, i = [], body[1:-1], 0
    while i < len(chars):
        ch = chars[i]
        if ch == "\\":
            nxt = chars[i + 1]
            out.append({"n": "\n", "t": "\t", '"': '"', "\\": "\\"}[nxt])
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def read_po(text: str) -> dict[str, str]:
    """msgid -> msgstr (the header entry, msgid "", left out)."""
    entries: dict[str, str] = {}
    key, parts = None, {"msgid": [], "msgstr": []}

    def flush() -> None:
        if parts["msgid"] or parts["msgstr"]:
            msgid = "".join(parts["msgid"])
            if msgid:
                entries[msgid] = "".join(parts["msgstr"])
        parts["msgid"], parts["msgstr"] = [], []

    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("msgid "):
            flush()
            key = "msgid"
            parts[key].append(_unquote(line[len("msgid "):]))
        elif line.startswith("msgstr "):
            key = "msgstr"
            parts[key].append(_unquote(line[len("msgstr "):]))
        else:
            parts[key].append(_unquote(line))
    flush()
    return entries


def write_po(messages: dict[str, list[str]], translations: dict[str, str]) -> str:
    out = ["# Chinese (simplified) messages of autodiff. Terms follow the seed tutorials:",
           "# 张量, 梯度, 计算图, 叶子节点, 反向传播, 求导. Edit the msgstr lines, then run",
           "# python tests/make_catalog.py to compile the .mo.",
           'msgid ""', "msgstr " + _quote(HEADER), ""]
    for msgid, files in messages.items():
        out.append("#: " + " ".join(files))
        if "{" in msgid:
            out.append("#, python-brace-format")
        out.append("msgid " + _quote(msgid))
        out.append("msgstr " + _quote(translations.get(msgid, "")))
        out.append("")
    return "\n".join(out)


# --- the .mo file --------------------------------------------------------------------------

def compile_mo(translations: dict[str, str]) -> bytes:
    """gettext's binary catalog: a header, two tables of (length, offset), then the strings,
    keys sorted as the format asks (no hash table: readers search the sorted keys)."""
    pairs = sorted([("", HEADER)] + [(k, v) for k, v in translations.items() if v],
                   key=lambda kv: kv[0].encode("utf-8"))
    ids = [k.encode("utf-8") for k, _ in pairs]
    strs = [v.encode("utf-8") for _, v in pairs]
    count = len(pairs)
    start = 7 * 4 + count * 16  # the header, then both tables
    table_ids, table_strs, blob = [], [], b""
    for data, table in ((ids, table_ids), (strs, table_strs)):
        for item in data:
            table.append((len(item), start + len(blob)))
            blob += item + b"\0"
    head = struct.pack("<7I", 0x950412DE, 0, count, 7 * 4, 7 * 4 + count * 8, 0, start)
    tables = b"".join(struct.pack("<2I", *entry) for entry in table_ids + table_strs)
    return head + tables + blob


def fresh() -> tuple[str, bytes]:
    """The .po and .mo this script writes from the source and the committed translations."""
    translations = read_po(PO.read_text(encoding="utf-8")) if PO.exists() else {}
    messages = extract()
    po = write_po(messages, translations)
    return po, compile_mo({k: v for k, v in read_po(po).items()})


def main(argv: list[str]) -> int:
    po, mo = fresh()
    if "--check" in argv:
        stale = [p for p, want in ((PO, po.encode("utf-8")), (MO, mo))
                 if not p.exists() or p.read_bytes() != want]
        for path in stale:
            print(f"{path.relative_to(ROOT)} is stale: run python tests/make_catalog.py")
        return 1 if stale else 0
    LOCALE.mkdir(parents=True, exist_ok=True)
    PO.write_text(po, encoding="utf-8")
    MO.write_bytes(mo)
    missing = [k for k, v in read_po(po).items() if not v]
    print(f"{len(read_po(po))} messages, {len(missing)} without a translation")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
