"""`regula diff` for people: one table per kind (params first; metrics: one per file), then a
line of counts that matches the JSON form's. On a terminal the tables are rich's (`show`); for a
pipe or a file, Markdown tables (`markdown`), one line per row whatever the width."""
from __future__ import annotations

import json

from rich.console import Console
from rich.table import Table
from rich.text import Text

NONE = "-"


def _text(value) -> str:
    if value is None:
        return NONE
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    return str(value)


def _arrow(old, new) -> str:
    return f"{_text(old)} -> {_text(new)}"


def _word(w) -> str:
    if w is None:
        return NONE
    return " ".join(w) if w else "(empty word)"


def _answer(a, width: int = 60) -> str:
    if a is None:
        return NONE
    text = ("unusable: " if a.get("unusable") else "") + " ".join(a["content"].split())
    return text if len(text) <= width else text[:width - 3] + "..."


def _delta(d) -> str:
    if d is None:
        return ""
    return f"{d:+}"


def _rows(result: dict) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, columns, rows of text) per table, in the order they are shown."""
    kinds, out = result["kinds"], []
    if kinds.get("params"):
        out.append(("params", ["key", "old", "new"],
                    [[r["key"], _text(r["old"]), _text(r["new"])] for r in kinds["params"]]))
    if kinds.get("laws"):
        out.append(("laws", ["file", "change", "name", "old", "new", "detail"],
                    [[r["file"], r["change"], r["name"] or NONE, r["old"] or NONE, r["new"] or NONE, r["detail"]]
                     for r in kinds["laws"]]))
    if kinds.get("dfas"):
        out.append(("DFAs", ["file", "change", "states", f"only in {result['a']}", f"only in {result['b']}"],
                    [[r["file"], r["change"], _arrow(r["states_old"], r["states_new"]), _word(r["only_old"]),
                      _word(r["only_new"])] for r in kinds["dfas"]]))
    if kinds.get("dynamics"):
        out.append(("dynamics", ["file", "change", "fact", "part", "value", "status"],
                    [[r["file"], r["change"], r["fact"], r["part"], _arrow(r["value_old"], r["value_new"]),
                      _arrow(r["status_old"], r["status_new"])] for r in kinds["dynamics"]]))
    by_file: dict = {}
    for r in kinds.get("metrics", []):
        by_file.setdefault(r["file"], []).append(r)
    for path, rows in by_file.items():
        out.append((path, ["key", "change", "old", "new", "delta"],
                    [[r["key"], r["change"], _text(r["old"]), _text(r["new"]), _delta(r["delta"])] for r in rows]))
    if kinds.get("caches"):
        out.append(("LLM caches", ["cache", "change", "key", "old answer", "new answer"],
                    [[r["file"], r["change"], r["key"][:16], _answer(r["old"]), _answer(r["new"])]
                     for r in kinds["caches"]]))
    return out


def _table(title: str, columns: list[str], rows: list[list]) -> Table:
    t = Table(title=Text(title), title_justify="left", show_lines=False)
    for c in columns:
        t.add_column(c, overflow="fold")
    for r in rows:  # Text, not markup: a formula's X[!] or an answer's [/x] is shown as written
        t.add_row(*(Text(c) for c in r))
    return t


def tables(result: dict) -> list[Table]:
    return [_table(title, columns, rows) for title, columns, rows in _rows(result)]


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ") or " "


def markdown(result: dict) -> str:
    """The diff as Markdown: a heading and a pipe table per kind, then the counts line."""
    lines = []
    for title, columns, rows in _rows(result):
        lines += [f"### {_cell(title)}", "", "| " + " | ".join(map(_cell, columns)) + " |",
                  "|" + "|".join("---" for _ in columns) + "|"]
        lines += ["| " + " | ".join(map(_cell, r)) + " |" for r in rows]
        lines.append("")
    return "\n".join(lines + [summary(result)])


def summary(result: dict) -> str:
    counts = ", ".join(f"{kind} {len(rows)}" for kind, rows in result["kinds"].items())
    if not any(result["kinds"].values()):
        return f"no difference between {result['a']} and {result['b']} ({', '.join(result['kinds'])})"
    return f"{result['a']} -> {result['b']}: changes by kind: {counts}"


def show(result: dict, console: Console) -> None:
    for table in tables(result):
        console.print(table)
    console.print(summary(result), highlight=False, markup=False, soft_wrap=True)
