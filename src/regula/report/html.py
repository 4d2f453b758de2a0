"""reports/report.html: report.md as one page that opens offline anywhere.

The Markdown is rendered by markdown-it-py (CommonMark with tables; raw HTML in it is escaped).
Every picture is embedded as a data URI: the Markdown's images, and the local pictures it links
to (a link to `.svg`/`.png`, such as a skill's automaton, shows the picture in place of the link).
Nothing else leaves the page: links to anything but an in-page `#anchor` keep their text only,
and a Content-Security-Policy forbids any load but data-URI images and the inline stylesheet.
The same Markdown and pictures give the same bytes.
"""
from __future__ import annotations

import base64
import re
from html import escape
from pathlib import Path
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.token import Token

from regula.errors import DataError
from regula.io import write_atomic

MEDIA = {".png": "image/png", ".svg": "image/svg+xml"}
POLICY = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
STYLE = """
body { font: 15px/1.5 system-ui, sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem; color: #1b1b1b; }
h1, h2, h3 { line-height: 1.25; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2rem; margin-top: 2.5rem; }
table { border-collapse: collapse; display: block; overflow-x: auto; margin: 1rem 0; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: .25rem .5rem; text-align: left; vertical-align: top; }
th { background: #f1f3f5; position: sticky; top: 0; } tr:nth-child(even) td { background: #fafafa; }
code { background: #f1f3f5; padding: 0 .2rem; border-radius: 3px; font-size: 90%; }
img { max-width: 100%; height: auto; } img.linked { display: block; margin: .4rem 0 1rem; }
nav ul { columns: 2; } a { color: #0b57d0; }
"""


def data_uri(path: Path) -> str:
    """A local picture as a data URI (PNG or SVG)."""
    media = MEDIA.get(path.suffix.lower())
    if media is None:
        raise DataError(f"{path}: a report picture must be one of {', '.join(MEDIA)}")
    try:
        return f"data:{media};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"
    except FileNotFoundError:
        raise DataError(f"{path}: the report refers to this picture, which is missing; "
                        "rerun the stage that draws it (dvc repro)") from None


def _local(base: Path, target: str) -> Path | None:
    """The file a relative link or image source names, or None for a URL or an anchor."""
    if not target or target.startswith("#") or re.match(r"^([a-z][a-z0-9+.-]*:|//)", target, re.I):
        return None
    return base / unquote(target)  # markdown-it percent-encodes what it parses


def _slug(text: str, seen: set[str]) -> str:
    """A heading's anchor: lower case words joined by `-`, numbered when taken (GitHub's way)."""
    base = re.sub(r"[^\w\- ]", "", text.lower()).strip().replace(" ", "-") or "section"
    slug, n = base, 1
    while slug in seen:
        slug, n = f"{base}-{n}", n + 1
    seen.add(slug)
    return slug


def _inline(children: list[Token], base: Path) -> list[Token]:
    """An inline run with images embedded, links to local pictures replaced by the picture, and
    other links that leave the page reduced to their text."""
    out: list[Token] = []
    i = 0
    while i < len(children):
        tok = children[i]
        if tok.type == "image":
            path = _local(base, tok.attrGet("src") or "")
            if path is None:
                raise DataError(f"report.md: the image {tok.attrGet('src')!r} is not a local file")
            tok.attrSet("src", data_uri(path))
        elif tok.type == "link_open" and not (tok.attrGet("href") or "").startswith("#"):
            end = next(j for j in range(i, len(children)) if children[j].type == "link_close")
            label = children[i + 1:end]
            path = _local(base, tok.attrGet("href") or "")
            if path is not None and path.suffix.lower() in MEDIA:
                alt = "".join(t.content for t in label)
                img = Token("html_inline", "", 0)
                img.content = f'<img class="linked" src="{data_uri(path)}" alt="{escape(alt)}" title="{escape(alt)}">'
                label = [img]
            out += label
            i = end + 1
            continue
        out.append(tok)
        i += 1
    return out


def render(markdown: str, base: Path) -> str:
    """The HTML page of a report's Markdown, with pictures resolved against `base` (the folder
    the Markdown lies in)."""
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = md.parse(markdown)
    seen: set[str] = set()
    contents: list[tuple[str, str]] = []
    for i, tok in enumerate(tokens):
        if tok.type == "inline" and tok.children is not None:
            tok.children = _inline(tok.children, base)
        if tok.type == "heading_open":
            text = "".join(c.content for c in tokens[i + 1].children or [] if c.type in ("text", "code_inline"))
            tok.attrSet("id", _slug(text, seen))
            if tok.tag == "h2":
                contents.append((tok.attrGet("id"), text))
    title = next((tokens[i + 1].content for i, t in enumerate(tokens) if t.tag == "h1"), "report")
    body = md.renderer.render(tokens, md.options, {})
    if contents:  # the sections' index, under the page's title
        nav = "".join(f'<li><a href="#{escape(a)}">{escape(t)}</a></li>' for a, t in contents)
        at = body.find("</h1>\n") + len("</h1>\n") if "</h1>\n" in body else 0
        body = body[:at] + f"<nav><ul>{nav}</ul></nav>\n" + body[at:]
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n")


def write(markdown_path: Path) -> Path:
    """report.html beside report.md; returns its path."""
    markdown_path = Path(markdown_path)
    return write_atomic(markdown_path.with_suffix(".html"), render(markdown_path.read_text(), markdown_path.parent))
