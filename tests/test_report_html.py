"""reports/report.html: report.md on one page that opens offline.

Without a browser: every figure of the Markdown is inside the page as a data URI, no src or
href leaves it, and the same inputs give the same bytes. With Debian's headless Chromium: the
committed page loads every figure and asks for nothing remote.
"""
import base64
import html
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from regula import report
from regula.errors import DataError
from regula.report import html as report_html
from regula.stages import Paths

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
# A picture that is a real file (a 1x1 PNG) and a small drawing, as the stages would write them.
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="40pt" height="20pt"><circle cx="10" cy="10" r="8"/></svg>\n'


class Refs(HTMLParser):
    """Every src and href of a page, and its <img> sources."""

    def __init__(self):
        super().__init__()
        self.refs, self.imgs = [], []

    def handle_starttag(self, tag, attrs):
        for key, value in attrs:
            if key in ("src", "href"):
                self.refs.append(value)
                if tag == "img":
                    self.imgs.append(value)


def refs(page: str) -> Refs:
    parser = Refs()
    parser.feed(page)
    return parser


def figures(markdown: str, base: Path) -> list[Path]:
    """The pictures a report's Markdown shows: its images and its links to local SVG/PNG files."""
    targets = re.findall(r"!?\[[^\]]*\]\(([^)\s]+)\)", markdown)
    return [base / t for t in targets if Path(t).suffix in (".png", ".svg") and "://" not in t]


def uri(path: Path) -> str:
    media = "image/png" if path.suffix == ".png" else "image/svg+xml"
    return f"data:{media};base64,{base64.b64encode(path.read_bytes()).decode()}"


def assert_offline(page: str, markdown: str, base: Path):
    """Every figure of the Markdown is an <img> of its exact bytes, and nothing else is loaded or linked."""
    found = refs(page)
    want = [uri(p) for p in figures(markdown, base)]
    assert want and found.imgs == want
    leaving = [r for r in found.refs if not (r.startswith("#") or r.startswith("data:image/"))]
    assert leaving == []
    assert report_html.POLICY in page and "<script" not in page.lower()


def test_pictures_are_embedded_and_links_stay_in_the_page(tmp_path):
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "plot.png").write_bytes(PNG)
    (tmp_path / "skills").mkdir()
    (tmp_path / "skills" / "a b.svg").write_text(SVG)
    markdown = ("# Title\n\n## Plots & <tables>\n\n![plot](plot.png)\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
                "## Plots & <tables>\n\n- skill: [a b.svg](../skills/a%20b.svg)\n\n"
                "[the paper](https://example.org/paper) and <https://example.org/x>, [up](#title)\n\n"
                "<script>alert(1)</script>\n")
    page = report_html.render(markdown, tmp_path / "reports")
    found = refs(page)
    assert found.imgs == [uri(tmp_path / "reports" / "plot.png"), uri(tmp_path / "skills" / "a b.svg")]
    assert [r for r in found.refs if not r.startswith("data:")] == ["#plots--tables", "#plots--tables-1", "#title"]
    assert "<p>the paper and https://example.org/x, <a href=\"#title\">up</a></p>" in page  # text kept, no link
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script" not in page
    assert '<h2 id="plots--tables">Plots &amp; &lt;tables&gt;</h2>' in page
    assert "<th>a</th>" in page and "<td>2</td>" in page  # the table extension is on
    assert report_html.render(markdown, tmp_path / "reports") == page


def test_a_missing_picture_is_one_error_naming_it(tmp_path):
    with pytest.raises(DataError, match=r"gone\.png: the report refers to this picture, which is missing"):
        report_html.render("![x](gone.png)\n", tmp_path)
    with pytest.raises(DataError, match=r"the image 'https://example.org/x.png' is not a local file"):
        report_html.render("![x](https://example.org/x.png)\n", tmp_path)


def _project(tmp_path: Path) -> Path:
    """A project with the committed records of the demos and cedar_skills stages and a drawing per skill."""
    for name in ("demos_detail.json", "demos_episodes.csv", "demos_achievements.csv", "cedar_skills_detail.json"):
        (tmp_path / "metrics").mkdir(exist_ok=True)
        shutil.copy(ROOT / "metrics" / name, tmp_path / "metrics" / name)
    skills = tmp_path / "data" / "cedar_skills" / "skills"
    skills.mkdir(parents=True)
    for run in json.loads((ROOT / "metrics" / "cedar_skills_detail.json").read_text())["skills"]:
        (skills / f"{run['skill']}.svg").write_text(SVG.replace("<circle", f"<title>{run['skill']}</title><circle"))
    return tmp_path


def test_the_stage_writes_the_page_with_every_skill_drawing_and_again_the_same_bytes(tmp_path):
    root = _project(tmp_path)
    path = report.build_report(Paths(root))
    markdown, page = path.read_text(), (root / "reports" / "report.html").read_bytes()
    assert_offline(page.decode(), markdown, root / "reports")
    skills = sorted((root / "data" / "cedar_skills" / "skills").glob("*.svg"))
    assert len(skills) == 10 and all(uri(s) in page.decode() for s in skills)
    assert "## Learned skill automata" in markdown
    assert "- **collect_wood** (\"chop a tree for wood\"): 2 states, learned in 2 EQ rounds; drawing: " \
           "[collect_wood.svg](../data/cedar_skills/skills/collect_wood.svg)" in markdown
    report.build_report(Paths(root))
    assert (root / "reports" / "report.html").read_bytes() == page
    (root / "data" / "cedar_skills" / "skills" / "place_table.svg").unlink()
    with pytest.raises(DataError, match=r"place_table\.svg missing beside metrics/cedar_skills_detail\.json"):
        report.build_report(Paths(root))


def test_the_committed_page_holds_every_figure_of_the_committed_markdown():
    markdown = (ROOT / "reports" / "report.md").read_text()
    page = (ROOT / "reports" / "report.html").read_text()
    found = refs(page)
    pngs = [p for p in figures(markdown, ROOT / "reports") if p.suffix == ".png"]
    assert pngs and all(uri(p) in found.imgs for p in pngs)
    # The skill drawings are DVC outputs, absent from a plain clone: count them.
    svgs = [i for i in found.imgs if i.startswith("data:image/svg+xml;base64,")]
    assert svgs and len(svgs) == len(figures(markdown, ROOT / "reports")) - len(pngs)
    assert len(found.imgs) == len(set(found.imgs)) == len(figures(markdown, ROOT / "reports"))
    assert [r for r in found.refs if not (r.startswith("#") or r.startswith("data:image/"))] == []


# Injected into a copy of the page: on load, which <img> did not load (naturalWidth 0), and what
# the page asked for that the policy refused or the network fetched (anything but a data URI).
PROBE = """<script>
const asked = [];
document.addEventListener("securitypolicyviolation", e => asked.push(e.blockedURI));
window.addEventListener("load", () => {
  const imgs = [...document.images];
  for (const e of performance.getEntriesByType("resource")) if (!e.name.startsWith("data:")) asked.push(e.name);
  const out = document.createElement("pre");
  out.id = "figure-check";
  out.textContent = JSON.stringify({images: imgs.length, loaded: imgs.filter(i => i.complete && i.naturalWidth > 0).length,
    failed: imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.alt), asked: [...new Set(asked)].sort()});
  document.body.append(out);
});
</script>"""
# A figure that cannot load and one from the network: the probe must name both.
CONTROLS = '<img alt="control: broken" src="data:image/png;base64,AAAA"><img alt="control: remote" src="http://127.0.0.1:9/x.png">'


def test_chromium_loads_every_figure_and_nothing_remote(tmp_path):
    assert CHROMIUM.exists(), (f"{CHROMIUM} is missing: Debian's chromium renders the HTML report here; "
                               "`make test` installs it (apt-get install chromium, as root)")
    page = (ROOT / "reports" / "report.html").read_text()
    policy = f'<meta http-equiv="Content-Security-Policy" content="{report_html.POLICY}">'
    assert page.count(policy) == 1
    probe = policy.replace("'none';", "'none'; script-src 'unsafe-inline';") + PROBE
    copy = tmp_path / "report.html"
    copy.write_text(page.replace(policy, probe).replace("</body>", CONTROLS + "</body>"))
    out = subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", "--virtual-time-budget=5000", copy.as_uri()],
        capture_output=True, text=True, timeout=120)
    check = re.search(r'<pre id="figure-check">(.*?)</pre>', out.stdout, re.S)
    assert check, f"chromium wrote no check (exit {out.returncode}): {out.stderr[-2000:]}"
    result = json.loads(html.unescape(check.group(1)))
    figures_in_page = len(refs(page).imgs)
    assert figures_in_page == len(figures((ROOT / "reports" / "report.md").read_text(), ROOT / "reports")) > 0
    assert result == {"images": figures_in_page + 2, "loaded": figures_in_page,
                      "failed": ["control: broken", "control: remote"], "asked": ["http://127.0.0.1:9/x.png"]}
