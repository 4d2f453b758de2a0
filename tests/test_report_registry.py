"""The report's registry of sections (`regula.report.SECTIONS`): where each section lives, in the
report's order, imported on first use; a line that names nothing stops the report with one message."""
import subprocess
import sys

import pytest

from regula import report
from regula.errors import RegulaError
from regula.stages import Paths

# The report's order (report.md, report.html and the figures depend on it): the shared sections
# and each system's, in the order they were listed before the systems' moved into their packages.
ORDER = ["regula.report.sections.demos:section", "regula.report.sections.minihack:section",
         "regula.report.sections.minihack:shield", "regula.report.sections.minihack:dive",
         "regula.report.sections.minihack:cedar",
         "regula.report.sections.feedback:section",
         "regula.report.sections.laws:section", "regula.report.sections.automata_eval:section",
         "regula.report.sections.specs:section", "regula.ltlcrit.report:section", "regula.dive.report:section",
         "regula.report.sections.attribution:section", "regula.report.sections.readers:section",
         "regula.report.sections.census:section", "regula.cedar.report:section",
         "regula.cedar.report_skills:section", "regula.cedar.report_household:section", "regula.e2cl.report:section",
         "regula.report.sections.llm_runs:section", "regula.report.sections.demos:reference"]


@pytest.fixture
def fresh_sections():
    report.section_functions.cache_clear()
    yield
    report.section_functions.cache_clear()


def test_the_registry_resolves_to_the_sections_in_the_reports_order(fresh_sections):
    found = report.section_functions()
    assert all(callable(f) for f in found)
    assert [f"{f.__module__}:{f.__name__}" for f in found] == ORDER


@pytest.mark.parametrize("entry, message", [
    ("regula.nosuch.report:section", "report section 'regula.nosuch.report:section': no module regula.nosuch.report"),
    ("regula.dive.nosuch:section", "report section 'regula.dive.nosuch:section': no module regula.dive.nosuch"),
    ("regula.dive.report:sectoin", "report section 'regula.dive.report:sectoin': regula.dive.report has no function sectoin"),
    ("regula.dive.report:STAND_INS", "report section 'regula.dive.report:STAND_INS': regula.dive.report has no function STAND_INS"),
    ("regula.dive.report", "report section 'regula.dive.report': write it as 'module:function'"),
])
def test_an_entry_that_names_no_section_is_one_error(entry, message):
    with pytest.raises(RegulaError) as caught:
        report.resolve(entry)
    assert str(caught.value) == message


def test_an_unknown_entry_stops_the_report_before_any_section_runs(fresh_sections, monkeypatch, tmp_path):
    monkeypatch.setattr(report, "SECTIONS", report.SECTIONS + ("regula.nosuch.report:section",))
    with pytest.raises(RegulaError, match=r"^report section 'regula\.nosuch\.report:section': no module"):
        report.build_report(Paths(tmp_path))
    assert not (tmp_path / "reports" / "report.md").exists()


def test_a_section_whose_own_import_fails_is_not_called_unknown(monkeypatch):
    """A missing dependency of a section that exists surfaces as itself, not as a registry typo."""
    def missing(name):
        raise ModuleNotFoundError("No module named 'somelib'", name="somelib")
    monkeypatch.setattr(report.importlib, "import_module", missing)
    with pytest.raises(ModuleNotFoundError, match="somelib"):
        report.resolve("regula.dive.report:section")


def test_the_helpers_import_no_section():
    """A section imports the helpers (`regula.report.tables`, ...); importing them, or the report,
    imports no section, so the two never import each other."""
    code = ("import sys, regula.report, regula.report.tables, regula.report.papers, regula.report.html; "
            "print(sorted(m for m in sys.modules if m.startswith('regula.report.sections') or m.endswith('.report')"
            " and m != 'regula.report' or '.report_' in m))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
