"""Bad-input corpus, temporal-logic surface: malformed, unknown, oversized or contradictory
formulas and law files through `regula laws check` and `regula laws dot` (and the library where
the CLI does not reach). Each ends in exit 2 and one `error:` line naming the file, the law and
what is wrong; no traceback, no file changed."""
import json

import pytest

from cli_run import check_bad_input, invoke
from regula import envs
from regula.logic import FormulaError, Law, LawError, Shield, load_laws
from regula.logic.laws import MAX_FILE_BYTES

STATE, ACTIONS = envs.get("crafter").atoms()
NESTED_X = "G(!has_wood | " + "X" * 18 + " !place_table)"  # issue 14's law: 2^18 states, 56 s and 1.1 GB then
ANY_17 = "(" + " | ".join(STATE[:17]) + ")"
WIDE = f"{ANY_17} & X {ANY_17}"  # two states, each tried on 2^17 letters
ALPHABET_18 = " | ".join(STATE[:18])  # 2^18 letters from one state
PAIRS_OF_10 = " & ".join(f"({a} | {b})" for a, b in zip(STATE[14:34:2], STATE[15:34:2]))  # 2^10 clauses

def formula(text) -> str:
    """A law file (JSON, so any text survives) holding one law with this formula."""
    return json.dumps([{"formula": text}])


# (id, formula, what the error line says after "<file>: law 1")
FORMULAS = [
    ("extra-paren", "G(has_wood))", ": unexpected ')' at column 12 of 'G(has_wood))'"),
    ("missing-paren", "G(has_wood", ": missing ')' at column 11 of 'G(has_wood'"),
    ("ends-early", "G(has_wood ->", ": formula ends too early at column 14 of 'G(has_wood ->'"),
    ("empty", "", ": empty formula at column 1 of ''"),
    ("blank", "   ", ": empty formula at column 4 of '   '"),
    ("bad-character", "has_wood $ collect_wood", ": unexpected character '$' at column 10"),
    ("upper-case-atom", "G(Has_wood)", ": 'Has_wood' is not an atom (atoms are lower case: [a-z_][a-z0-9_]*) "
                                       "at column 3"),
    ("operator-without-left", "U has_wood", ": operator 'U' needs a formula on its left at column 1"),
    ("xor-without-left", "xor has_wood", ": operator 'xor' needs a formula on its left at column 1"),
    ("two-atoms", "has_wood collect_wood", ": unexpected 'collect_wood' at column 10"),
    ("empty-parens", "G()", ": unexpected ')' at column 3 of 'G()'"),
    ("dangling-and", "G(has_wood & )", ": unexpected ')' at column 14"),
    ("leading-arrow", "-> has_wood", ": unexpected '->' at column 1"),
    ("broken-strong-next", "X[ has_wood", ": unexpected character '[' at column 2"),
    ("unicode-atom", "G(hás_wood)", ": unexpected character 'á' at column 4"),
    ("emoji", "G(has_wood 🙂)", ": unexpected character '🙂' at column 12"),
    ("control-characters", "\x00\x01", ": unexpected character '\\x00' at column 1"),
    ("not-text-number", 3, ": a formula must be text, got int"),
    ("not-text-null", None, ": a formula must be text, got NoneType"),
    ("not-text-list", ["G has_wood"], ": a formula must be text, got list"),
    ("not-text-bool", True, ": a formula must be text, got bool"),
    ("too-long", "has_wood" + " | has_wood" * 100, ": formula is 1,108 characters long; the limit is 1,000"),
    ("too-deep-parens", "(" * 99 + "has_wood" + ")" * 99, ": formula nests deeper than 50 operators (the limit)"),
    ("too-deep-negations", "!" * 188 + "has_wood", ": formula nests deeper than 50 operators (the limit)"),
    ("too-deep-chain", "has_wood" + " & has_wood" * 60, ": formula nests 60 operators deep (`a & b & c` nests 2); "
                                                        "the limit is 50"),
    ("nested-x", NESTED_X, f" ({NESTED_X}): its automaton passes 10,000 states (the limit): "
                           "'G(!has_wood | X X X X X X X X X X X X X X X X X X !place_tab...'"),
    ("nested-temporal", "G(" * 188 + "has_wood" + ")" * 188, ": formula nests deeper than 50 operators (the limit)"),
    ("too-many-moves", WIDE, f" ({WIDE}): its automaton passes 250,000 moves (the limit)"),
    ("too-many-letters", ALPHABET_18, f" ({ALPHABET_18}): a state of its automaton reads 18 atoms, 262,144 letters, "
                                      "more than the 250,000 automaton moves a monitor may compute (the limit)"),
    ("normal-form-too-large", " xor ".join(STATE[:11]),
     f" ({' xor '.join(STATE[:11])}): a conjunction in its normal form forms 66,049 clause pairs, more than 20,000 "
     "(the limit)"),
    ("normal-form-too-many-clauses", PAIRS_OF_10,
     f" ({PAIRS_OF_10}): its normal form passes 1,000 clauses (the limit;"),
    ("dead-after-five-steps", "(" + " | ".join(STATE[:12]) + ") & X[!] X[!] X[!] X[!] X[!] false",
     " ((" + " | ".join(STATE[:12]) + ") & X[!] X[!] X[!] X[!] X[!] false) can never be satisfied"),
    ("unknown-atom", "G(!has_pickaxe -> !collect_stone)",
     " (G(!has_pickaxe -> !collect_stone)) uses unknown atom has_pickaxe; the environment defines: "),
    ("unknown-action", "G(!has_wood -> !chop_tree)", " (G(!has_wood -> !chop_tree)) uses unknown atom chop_tree;"),
    ("never-satisfied", "has_wood & !has_wood", " (has_wood & !has_wood) can never be satisfied"),
    ("two-actions-at-once", "F(collect_wood & collect_stone)",  # one action per step
     " (F(collect_wood & collect_stone)) can never be satisfied"),
]


@pytest.fixture
def root(tmp_path):
    (tmp_path / "trace.json").write_text('[["has_wood"], ["tree_on_map", "collect_wood"]]')
    return tmp_path


def commands(root, file):
    trace = root / "trace.json"
    return {"check": ["laws", "check", file, "--trace", trace],
            "dot": ["laws", "dot", file, "--out", root / "dot"]}


@pytest.mark.parametrize("command", ["check", "dot"])
@pytest.mark.parametrize("text,expected", [case[1:] for case in FORMULAS], ids=[case[0] for case in FORMULAS])
def test_bad_formulas(root, command, text, expected):
    file = root / "laws.json"
    file.write_text(formula(text))
    check_bad_input(commands(root, file)[command], root, f"error: {file}: law 1{expected}")
    assert not (root / "dot").exists()


# (id, file name, content: text, bytes, or None for no file, what the error line says after "<file>")
FILES = [
    ("missing", "laws.yaml", None, "law file {file} not found"),
    ("folder", "laws.yaml", "folder", "cannot read law file {file}: Is a directory"),
    ("empty", "laws.yaml", "", "law file {file} is empty"),
    ("blank", "laws.yaml", " \n\n\t\n", "law file {file} is empty"),
    ("not-yaml", "laws.yaml", "laws: [\n", "{file}: not valid YAML at line 2, column 1: expected the node content"),
    ("yaml-tabs", "laws.yaml", "laws:\n\t- G has_wood\n",
     "{file}: not valid YAML at line 2, column 1: found character"),
    ("not-json", "laws.json", '{"laws": [', "{file}: not valid JSON at line 1, column 11: Expecting value"),
    ("yaml-as-json", "laws.json", "- G has_wood\n", "{file}: not valid JSON at line 1, column 1"),
    ("unhashable-key", "laws.yaml", "? [a]\n: b\n", "{file}: not valid YAML at line 1, column 3: found unhashable key"),
    ("deep-yaml", "laws.yaml", "[" * 5000 + "]" * 5000, "{file}: nests too deeply to read as YAML"),
    ("deep-json", "laws.json", "[" * 5000 + "]" * 5000, "{file}: nests too deeply to read as JSON"),
    ("binary", "laws.yaml", bytes(range(128, 256)) * 4, "{file}: not UTF-8 text (byte 1)"),
    ("nul-bytes", "laws.yaml", b"- G has_wood\x00\n", "{file}: not valid YAML: unacceptable character #x0000"),
    ("huge", "laws.yaml", "- G has_wood\n" + "#" * MAX_FILE_BYTES, "law file {file} is larger than 1,000,000 bytes"),
    ("too-many-laws", "laws.yaml", "".join(f"- G(has_wood | {a})\n" for a in STATE[:51]) * 4 + "- G has_wood\n",
     "{file}: 205 laws; the limit is 200"),
    ("scalar", "laws.yaml", "42\n", "{file}: expected a list of laws (or a mapping with a `laws` list), got int"),
    ("text", "laws.yaml", "G has_wood\n", "{file}: expected a list of laws (or a mapping with a `laws` list), got str"),
    ("null", "laws.yaml", "~\n", "{file}: expected a list of laws (or a mapping with a `laws` list), got nothing"),
    ("empty-list", "laws.yaml", "laws: []\n", "{file}: expected a list of laws (or a mapping with a `laws` list), "
                                              "got an empty list"),
    ("empty-mapping", "laws.json", '{"laws": {}}', "{file}: expected a list of laws (or a mapping with a `laws` list), "
                                                   "got an empty dict"),
    ("laws-not-a-list", "laws.yaml", "laws: G has_wood\n", "{file}: expected a list of laws (or a mapping with a "
                                                           "`laws` list), got str"),
    ("unknown-top-key", "laws.yaml", "rules:\n  - G has_wood\n",
     "{file}: unknown key rules; a law file is a list of laws or a mapping with a `laws` list"),
    ("law-is-number", "laws.yaml", "- 3\n", "{file}: law 1 is int: a law is a formula or a mapping with a `formula`"),
    ("law-is-list", "laws.yaml", "- G has_wood\n- [G has_wood]\n", "{file}: law 2 is list: a law is a formula"),
    ("law-is-null", "laws.yaml", "- G has_wood\n-\n", "{file}: law 2 is nothing: a law is a formula"),
    ("no-formula", "laws.yaml", "- {kind: hard}\n", "{file}: law 1 has no `formula`"),
    ("unknown-field", "laws.yaml", "- {formula: G has_wood, weight: 2}\n",
     "{file}: law 1 has unknown field weight; the fields are formula, kind, source, explanation, name, provenance"),
    ("unknown-kind", "laws.yaml", "- {formula: G has_wood, kind: strict}\n",
     "{file}: law 1: kind must be one of hard, soft, got 'strict'"),
    ("kind-not-text", "laws.yaml", "- {formula: G has_wood, kind: [hard]}\n",
     "{file}: law 1: kind must be text, got list"),
    ("unknown-source", "laws.yaml", "- {formula: G has_wood, source: oracle}\n",
     "{file}: law 1: source must be one of hand, environment_failure, efficiency, over_constraint, got 'oracle'"),
    ("explanation-not-text", "laws.yaml", "- {formula: G has_wood, explanation: 7}\n",
     "{file}: law 1: explanation must be text, got int"),
    ("name-not-text", "laws.yaml", "- {formula: G has_wood, name: [a, b]}\n",
     "{file}: law 1: name must be text, got list"),
    ("provenance-not-mapping", "laws.yaml", "- {formula: G has_wood, provenance: run 3}\n",
     "{file}: law 1: provenance must be a mapping, got str"),
    ("duplicate-law", "laws.yaml", "- G has_wood\n- F has_wood\n- G has_wood\n",
     "{file}: law 3 (G has_wood) repeats law 1 (G has_wood)"),
    ("duplicate-written-apart", "laws.yaml", "- G has_wood\n- G((has_wood))\n",
     "{file}: law 2 (G((has_wood))) repeats law 1 (G has_wood)"),
    ("duplicate-name", "laws.yaml", "- {formula: G has_wood, name: wood}\n- {formula: F has_wood, name: wood}\n",
     "{file}: law 2 has the same name as law 1 (wood)"),
    ("contradicting-pair", "laws.yaml", "- G has_wood\n- F !has_wood\n",
     "{file}: hard laws 1 (G has_wood) and 2 (F !has_wood) contradict each other"),
    ("contradicting-three", "laws.yaml", "- G(has_wood -> X has_stone)\n- G(has_stone -> X near_table)\n- F has_wood\n"
                                         "- G !near_table\n- F(has_wood & X[!] X[!] true)\n",
     "{file}: the 5 hard laws together can never be satisfied"),
]


@pytest.mark.parametrize("command", ["check", "dot"])
@pytest.mark.parametrize("name,content,expected", [case[1:] for case in FILES], ids=[case[0] for case in FILES])
def test_bad_law_files(root, command, name, content, expected):
    file = root / name
    if content == "folder":
        file.mkdir()
    elif isinstance(content, bytes):
        file.write_bytes(content)
    elif content is not None:
        file.write_text(content)
    check_bad_input(commands(root, file)[command], root, f"error: {expected.format(file=file)}")
    assert not (root / "dot").exists()


def test_dot_writes_nothing_when_a_later_law_cannot_be_drawn(root):
    # Law 2 is built in a moment (2 states x 4,096 letters) but one edge of its drawing carries
    # 4,095 letters to merge into a label: law 1's drawing must not be left behind either.
    big = "F(" + " | ".join(STATE[:12]) + ")"
    file = root / "laws.yaml"
    file.write_text(f"- G(!has_wood_pickaxe -> !collect_stone)\n- '{big}'\n")
    out = root / "dot"
    check_bad_input(["laws", "dot", file, "--out", out], root,
                    f"error: {file}: law 2 ({big}): drawing its automaton: an edge carries 4,095 letters, more than "
                    "the 1,024 one label may merge (the limit)")
    assert not out.exists()
    assert invoke(["laws", "check", file, "--trace", root / "trace.json"]).exit_code == 0


@pytest.mark.parametrize("args,expected", [
    (["laws", "check", "{laws}", "--trace", "{trace}", "--backend", "nusmv"],
     "error: unknown logic backend 'nusmv'; valid logic backends: auto, native, spot"),
    (["laws", "dot", "{laws}", "--out", "{trace}"], "error: --out {trace} is a file, not a folder"),
    (["laws", "crafter", "{root}"], "error: cannot write {root}: Is a directory"),
    (["laws", "dot", "{odd}", "--out", "{root}/dot"], "error: {odd}: law 1 (G odd_atom) uses unknown atom odd_atom"),
], ids=["unknown-backend", "out-is-a-file", "crafter-out-is-a-folder", "dot-checks-atoms"])
def test_bad_command_lines(root, args, expected):
    laws, odd = root / "laws.yaml", root / "odd.yaml"
    laws.write_text("- G(!has_wood_pickaxe -> !collect_stone)\n")
    odd.write_text("- G odd_atom\n")
    names = {"laws": laws, "trace": root / "trace.json", "root": root, "odd": odd}
    check_bad_input([a.format(**names) for a in args], root, expected.format(**names))


def test_the_library_where_the_cli_does_not_reach(tmp_path):
    with pytest.raises(FormulaError, match="^a formula must be text, got int$"):
        Law(formula=3)
    with pytest.raises(LawError, match="^law G a: explanation must be text, got int$"):
        Law(formula="G a", explanation=3)
    with pytest.raises(LawError, match="^law parity: a conjunction in its normal form forms 66,049 clause pairs"):
        Shield([Law(" xor ".join(f"a{i}" for i in range(11)), name="parity")], ["a0"], backend="native")
    with pytest.raises(LawError, match="^law file .* not found$"):
        load_laws(tmp_path / "nope.yaml")
