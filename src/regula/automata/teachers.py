"""Membership teachers (the `teacher` role, `regula.roles.Teacher`): the rule-grounded Crafter
teacher (`rules`) and the LLM teacher (`openai`, through the LLM layer's cache), and the noisy
wrapper evaluation puts around a known language.

`NoisyTeacher` is not a backend of the role: it answers from a truth function the caller
hands it (a random target DFA in `automata_eval`), so it has no knowledge of its own to choose
by name; it is the noise model the `rules` teacher inherits.

`FormulaTeacher` is the teacher in another form, not another backend: asked once per task for
LTLf clauses (its source: `RulesFormula`, the stand-in's from data.yaml's recipes, or
`LLMFormula`), compiled by the logic core, and evaluated for every word.
"""
from __future__ import annotations

import hashlib
import re
from typing import Callable

from regula import roles

NOISE_KINDS = ("independent", "persistent")


def unit(*parts) -> float:
    """A reproducible number in [0, 1) from the parts (no global RNG, no str-hash salt)."""
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2 ** 64


class NoisyTeacher:
    """Answers `truth(word)`, wrong with probability `noise`: afresh at each asking
    (independent) or for a fixed set of words every time (persistent)."""

    def __init__(self, truth: Callable[[tuple], bool], noise: float, kind: str = "independent", seed: int = 0):
        if kind not in NOISE_KINDS:
            from regula.errors import UnknownNameError
            raise UnknownNameError("noise kind", kind, NOISE_KINDS)
        if not 0 <= noise < 0.5:
            from regula.errors import ParamsError
            raise ParamsError(f"teacher noise must be in [0, 0.5), got {noise}")
        self.truth, self.noise, self.kind, self.seed = truth, noise, kind, seed
        self.asked = 0

    def member(self, word: tuple, sample: int = 0) -> bool:
        self.asked += 1
        key = (self.seed, tuple(word)) if self.kind == "persistent" else (self.seed, tuple(word), sample)
        answer = bool(self.truth(tuple(word)))
        return (not answer) if unit(*key) < self.noise else answer


def _had(crafter, state, skill: str) -> bool:
    """What `skill` is for is had in abstract `state` (None: a fresh start): the tool it makes, or
    the station it places (`library.SkillWorld._held`, read off the abstract state)."""
    if state is None:
        return False
    recipe = crafter.rules.recipe(skill)
    if recipe.kind == "make":
        return all(state.count(item) > 0 for item in recipe.gives)
    return recipe.kind == "place" and recipe.target in crafter.rules.stations and recipe.target in state.placed


@roles.register("teacher", "rules")
class CrafterRulesTeacher(NoisyTeacher):
    """Does a word of skills accomplish `goal` from a fresh start, by data.yaml's abstract
    rules? (Every skill applicable in turn, and the goal's skill among them.) Letters in
    `ignore` are read past: CEDAR's events (`has_wood`, read off the log) and skills that
    change nothing a recipe needs (`eat_cow`). A letter starting with `calls` (CEDAR's `@s`) calls
    the learned skill s, read as s done from where the word is, by data.yaml's shortest plan
    (a skill gathers what it needs itself). `held`: a call whose tool is held or whose station is
    placed already is done at once, as the executor runs it (`cedar.call_held`); read as a plan, a
    second wooden pickaxe gathers a log the abstract rules never spend, and the teacher said yes to
    make_iron_pickaxe words taking their wood from `@make_wood_pickaxe`, which the world refuted."""

    uses_llm = False

    def __init__(self, goal: str, noise: float = 0.0, kind: str = "independent", seed: int = 0, ignore=(),
                 calls: str = "", held: bool = False):
        from regula import envs
        crafter = envs.get("crafter")
        crafter.rules.recipe(goal)  # an unknown goal fails here, not at the first question
        ignore = frozenset(ignore)
        done = crafter.rules.recipe(goal).skill

        def truth(word):
            state = None  # a fresh start
            for a in word:
                if a in ignore:
                    continue
                steps = [a]
                if held and calls and a.startswith(calls) and _had(crafter, state, a[len(calls):]):
                    continue
                if calls and a.startswith(calls):
                    try:
                        steps = crafter.shortest_plan(a[len(calls):], state)
                    except ValueError:  # no plan from here: the call cannot succeed
                        return False
                for b in steps:
                    state = crafter.after(state, b)
                    if state is None:
                        return False
                    if b == done:
                        return True
            return False

        super().__init__(truth, noise, kind, seed)
        self.goal = goal


@roles.register("teacher", "openai")
class LLMTeacher:
    """Asks an LLM (through `regula.llm`, cached per sample index) whether a word of symbols
    accomplishes a described skill or satisfies a described specification."""

    uses_llm = True

    def __init__(self, client, description: str, role: str = "teacher"):
        self.client, self.description, self.role = client, description, role

    def member(self, word: tuple, sample: int = 0) -> bool:
        from regula import prompts
        msgs = prompts.messages("membership", description=self.description,
                                word=", ".join(word) if word else "(nothing)")
        return self.client.ask_yes_no(msgs, self.role, sample=sample)


# -- the teacher as a formula (seed 000's few-queries point: one call per task) ----------------

class FormulaTeacher:
    """A teacher asked ONCE per task for a formula in the law syntax (LTLf, `regula.logic`) over
    the task's alphabet, each letter of a word one action (the logic core's `actions`: exactly
    one holds a step); every membership query is then the compiled monitor's verdict on the
    word (accepted at its last letter; the empty word is no trace, so no). The answer is text
    the logic core parses and compiles, never code run.

    `source` writes the formula: `formula()` (the first call) and `refine(clauses, word, label)`
    (asked again with a counterexample); each returns clauses, one formula each, taken
    together (a conjunction). An answer that does not parse, names a letter outside the
    alphabet or compiles past the logic core's bounds is unusable: counted (`unusable`, with
    `reason`), and the teacher keeps the formula it had; with none, `member` raises
    UnusableAnswer for every word, as the LLM teacher does for an answer that never parsed
    (the membership stage scores it as no answer). `calls` counts the source's calls: 1 per task, 1 per refinement."""

    def __init__(self, source, alphabet, backend: str = "native"):
        self.source, self.alphabet, self.backend = source, tuple(alphabet), backend
        self.calls = self.unusable = 0
        self.reason: str | None = None
        self.clauses: list[str] | None = None
        self._monitor = None
        self._answers: dict = {}
        self._take(source.formula)

    @property
    def uses_llm(self) -> bool:
        return self.source.uses_llm

    def _take(self, ask) -> bool:
        """One call of the source; its clauses replace the formula if usable."""
        from regula.llm import UnusableAnswer
        from regula.logic import FormulaError
        self.calls += 1
        try:
            clauses = list(ask())
            mon = compile_clauses(clauses, self.alphabet, self.backend)
        except (UnusableAnswer, FormulaError) as exc:
            self.unusable += 1
            self.reason = str(exc)
            return False
        self.clauses, self._monitor, self._answers = clauses, mon, {}
        return True

    def member(self, word: tuple, sample: int = 0) -> bool:
        word = tuple(word)
        if self._monitor is None:
            from regula.llm import UnusableAnswer
            raise UnusableAnswer(f"the formula teacher has no usable formula: {self.reason}")
        got = self._answers.get(word)
        if got is None:
            got = self._answers[word] = accepts(self._monitor, word)
        return got

    def dfa(self):
        """The formula's language as a minimal DFA over the alphabet (`formula_dfa`), for a
        learner to start from or compare against; None without a usable formula."""
        return None if self._monitor is None else monitor_dfa(self._monitor, self.alphabet)

    def refine(self, word: tuple, label: bool) -> bool:
        """Asks the source again with the counterexample `word` (`label`: whether it belongs):
        one more call. True when the formula now answers `label` on it."""
        word = tuple(word)
        self._take(lambda: self.source.refine(self.clauses, word, bool(label)))
        return self._monitor is not None and self.member(word) == bool(label)


def check_clauses(clauses, alphabet) -> list:
    """Each clause parsed (`regula.logic.parse`), its atoms within `alphabet`: the Formulas, or
    FormulaError naming the first clause that fails."""
    from regula.logic import FormulaError, parse
    if not clauses:
        raise FormulaError("the answer holds no formula")
    out, known = [], set(alphabet)
    for text in clauses:
        f = parse(text)
        unknown = sorted(f.atoms() - known)
        if unknown:
            raise FormulaError(f"it names letters outside the alphabet ({', '.join(unknown)}); the letters are "
                               f"{', '.join(sorted(known))}", text)
        out.append(f)
    return out


def compile_clauses(clauses, alphabet, backend: str = "native"):
    """The conjunction of the clauses compiled once to a monitor over `alphabet` as actions
    (balanced, so that many clauses nest shallowly)."""
    from regula.logic import monitor
    from regula.logic.formula import binary
    parts = check_clauses(clauses, alphabet)
    while len(parts) > 1:
        parts = [binary("and", parts[i], parts[i + 1]) if i + 1 < len(parts) else parts[i]
                 for i in range(0, len(parts), 2)]
    # whole, never lazily: a teacher's formula is made a DFA (`monitor_dfa`), and past the bounds is unusable here
    return monitor(parts[0], backend=backend, actions=frozenset(alphabet), lazy=False)


def monitor_dfa(mon, alphabet):
    """A compiled monitor's language as a minimal DFA over `alphabet` (each letter the action
    it names; the empty word, no trace, rejected as `accepts` does)."""
    from .dfa import DFA
    from .ops import minimize
    _, start, edges, accepting, _ = mon.transitions()
    atoms = mon.atoms
    by_letter: dict = {}
    for a in alphabet:  # letters outside the formula all read as the empty letter
        by_letter.setdefault(frozenset([a]) & atoms, []).append(a)
    table: dict = {}
    for (src, dst), letters in edges.items():
        for letter in letters:
            for a in by_letter.get(letter, ()):
                table.setdefault(src, {})[a] = dst
    return minimize(DFA.from_table(tuple(alphabet), table, start, accepting))


def formula_dfa(clauses, alphabet, backend: str = "native"):
    """The minimal DFA of the clauses' conjunction over `alphabet` (a specification given as a
    formula); FormulaError names a clause that does not parse or names a letter outside it."""
    return monitor_dfa(compile_clauses(clauses, alphabet, backend), alphabet)


def accepts(mon, word) -> bool:
    """Does the word (a trace, one action a step) satisfy the monitor's formula?"""
    if not word:
        return False
    mon.reset()
    verdict = None
    for a in word:
        verdict = mon.step(frozenset([a]))
    return verdict == "accepting"


def _any(skills) -> str:
    return skills[0] if len(skills) == 1 else "(" + " | ".join(skills) + ")"


def _at_least(n: int, before: str, providers: list[str], escape: str | None) -> str:
    """`before` not until `providers` happened n times (or, `escape` given, the goal first):
    `!b U (g | a & X(!b U (g | a)))` for n = 2, one nested clause a count."""
    right = _any(providers)
    inner = right if n == 1 else f"{right} & X({_at_least(n - 1, before, providers, escape)})"
    if escape:
        inner = f"{escape} | {inner}" if n == 1 else f"{escape} | ({inner})"
    return f"!{before} U ({inner})"


def recipe_clauses(goal: str, alphabet, ignore=(), calls: str | None = None) -> list[dict]:
    """The formula a careful person writes from data.yaml's recipes for "the word accomplishes
    `goal`", as clauses {why, text}: the goal's skill eventually; a letter with no recipe (sleep,
    explore, defeat_zombie: the abstract rules never apply it) not before the goal; and for
    every recipe letter and each thing it needs (an item required or used, a station nearby),
    the letter not before that thing's providers in the alphabet have happened (`!b U a`), as
    often as needed: a skill of the shortest plan needs what the plan spends up to it
    (place_table 2 wood, make_wood_pickaxe 3, make_stone_pickaxe 4), a letter off the plan what
    its own recipe uses. Before the goal only: a letter after it does not matter.

    `calls`: the prefix of a letter that calls a learned skill (CEDAR's `call_`: `call_s` runs s
    until it is done); None, no letter is a call. A call needs nothing (it gathers what it needs
    itself) and gives what s's shortest plan from a fresh start ends with (items held, stations
    placed); a plan step made only for what a call gives spends nothing of the word's (a table
    from `call_place_table` spent no wood of the word's).

    Where it is wrong (measured by the membership stage, pinned in tests): counts off the plan's
    order. A clause holds at a letter's FIRST occurrence, so a second make or place of a word
    that spends the wood again (`place_table` twice, a wood sword between) is not counted,
    nor is wood spent by a letter off the plan before the goal's skill."""
    from regula import envs
    crafter = envs.get("crafter")
    rules = crafter.rules
    recipes = rules.recipes
    g = rules.recipe(goal).skill
    letters = sorted(set(alphabet) - set(ignore))
    if g not in letters:
        from regula.errors import RegulaError
        raise RegulaError(f"the goal's skill {g} is not a letter of the alphabet ({', '.join(letters)})")

    def is_call(x: str) -> bool:
        return calls is not None and x.startswith(calls)

    providers: dict[str, list[str]] = {}  # letters in sorted order: each list sorted
    for x in letters:
        if is_call(x):
            state = None
            for step in crafter.shortest_plan(x[len(calls):]):
                state = crafter.after(state, step)
            held = tuple(rules.resources) + tuple(rules.tools)  # the abstract state's items
            gives = [i for i in held if state.count(i) > 0] + sorted(state.placed)
        else:
            r = recipes.get(x)
            if r is None:
                gives = ()
            elif r.kind != "place":
                gives = r.gives
            else:  # a placed station provides itself
                gives = [r.target] if r.target in rules.stations else ()
        for thing in gives:
            providers.setdefault(thing, []).append(x)
    called = {thing for thing, got in providers.items() if any(is_call(p) for p in got)}

    def covered(s):  # what plan step s is for, a call of the alphabet gives: s spends nothing of the word's
        r = recipes[s]
        made = set(r.gives) if r.kind != "place" else {r.target}
        return bool(made) and made <= called

    spent: dict[str, dict[str, int]] = {}  # plan skill -> what the plan spent up to it, itself included
    total: dict[str, int] = {}
    for s in crafter.shortest_plan(goal):
        if not covered(s):
            for k, v in recipes[s].uses.items():
                total[k] = total.get(k, 0) + v
        spent.setdefault(s, dict(total))
    out = [{"why": f"the goal: {g} eventually", "text": f"F {g}"}]
    for x in letters:
        escape = None if x == g else g
        r = None if is_call(x) else recipes.get(x)
        if r is None:
            if x != g and not is_call(x):
                out.append({"why": f"{x} has no recipe: not before the goal", "text": f"!{x} U {g}"})
            continue
        needs = {k: max(v, spent.get(x, {}).get(k, 0)) for k, v in r.uses.items()}
        for k, v in r.require.items():
            needs[k] = max(needs.get(k, 0), v)
        for station in r.nearby:
            needs[station] = 1
        for thing, n in sorted(needs.items()):
            got = [p for p in providers.get(thing, ()) if p != escape]  # the goal first: no matter
            if not got:  # nothing else in the alphabet gives it: not before the goal
                out.append({"why": f"{x} needs {thing}, which no letter gives before the goal", "text": f"!{x} U {g}"
                            if escape else "false"})
                continue
            out.append({"why": f"{x} needs {thing}" + (f" x{n}" if n > 1 else "") + f" ({', '.join(got)})",
                        "text": _at_least(n, x, got, escape)})
    return out


class RulesFormula:
    """The stand-in's formula (`rules` source): `recipe_clauses` for the goal, wrong on a declared
    share `noise` of its clauses: round(noise x clauses) of them, chosen reproducibly by `seed`
    (the smallest `unit(seed, goal, clause)`), each dropped or negated (a second draw). Refined
    with a counterexample, it restores the wrong clauses the counterexample refutes (a member
    refused: the negated clauses that refuse it; a non-member taken: the first wrong clause whose
    true text refuses it) where that gives the word its label; when no wrong clause explains it (an
    honest count error), it adds the word itself as an exception clause."""

    uses_llm = False

    def __init__(self, goal: str, alphabet, noise: float = 0.0, seed: int = 0, ignore=()):
        if not 0 <= noise < 0.5:
            from regula.errors import ParamsError
            raise ParamsError(f"teacher noise must be in [0, 0.5), got {noise}")
        self.goal, self.alphabet, self.noise, self.seed = goal, tuple(alphabet), noise, seed
        self.truth = recipe_clauses(goal, self.alphabet, ignore)
        n = round(noise * len(self.truth))
        order = sorted(range(len(self.truth)), key=lambda i: unit(seed, goal, self.truth[i]["text"]))
        self.wrong = {i: "dropped" if unit(seed, goal, self.truth[i]["text"], "how") < 0.5 else "negated"
                      for i in order[:n]}

    def _clauses(self, wrong: dict) -> list[str]:
        out = []
        for i, c in enumerate(self.truth):
            how = wrong.get(i)
            if how is None:
                out.append(c["text"])
            elif how == "negated":
                out.append(f"!({c['text']})")
        return out

    def formula(self) -> list[str]:
        return self._clauses(self.wrong)

    def _holds(self, text: str, word: tuple) -> bool:
        return accepts(compile_clauses([text], self.alphabet), word)

    def refine(self, clauses, word: tuple, label: bool) -> list[str]:
        if label:  # a member refused: every wrong clause that refuses it, restored
            refuting = {i for i, how in self.wrong.items() if how == "negated"
                        and not self._holds(f"!({self.truth[i]['text']})", word)}
        else:  # a non-member taken: the first wrong clause whose true text refuses it
            refuting = {next((i for i in sorted(self.wrong) if not self._holds(self.truth[i]["text"], word)), None)}
        fixed = {i: how for i, how in self.wrong.items() if i not in refuting}
        if fixed != self.wrong and accepts(compile_clauses(self._clauses(fixed), self.alphabet), word) == label:
            self.wrong = fixed
            return self._clauses(fixed)
        clauses = list(clauses or [])
        if not word:  # no trace: the logic has nothing to say of it
            return clauses
        exact = word_formula(word)
        if label:  # the word belongs: each clause, or exactly this word (the conjunction, or the word)
            return [f"({c}) | {exact}" for c in clauses] or [exact]
        return clauses + [f"!{exact}"]


def word_formula(word) -> str:
    """Exactly the trace `word`: `a & X[!](b & X false)` for (a, b)."""
    text = f"{word[-1]} & X false"
    for a in reversed(word[:-1]):
        text = f"{a} & X[!]({text})"
    return f"({text})"


class LLMFormula:
    """The LLM's formula (`openai` source): asked once through `regula.llm` (cached) with the
    prompt `membership_formula`, the task and the letters listed, for JSON {"clauses": [...]}, each
    clause an LTLf formula, all of them to hold. A clause that does not parse or names a letter
    outside the alphabet fails the answer's schema: the client re-asks with the reason
    (`llm.reasks`), then gives up (UnusableAnswer, counted by the client and the teacher).
    Refined, it is asked again with its formula and the counterexample in the prompt."""

    uses_llm = True

    def __init__(self, client, description: str, alphabet, role: str = "teacher_formula"):
        self.client, self.description, self.alphabet, self.role = client, description, tuple(alphabet), role

    def _ask(self, counterexample: str) -> list[str]:
        from regula import prompts
        msgs = prompts.messages("membership_formula", description=self.description,
                                letters=", ".join(self.alphabet), counterexample=counterexample)
        return list(self.client.ask_json(msgs, clauses_schema(self.alphabet), self.role).clauses)

    def formula(self) -> list[str]:
        return self._ask("")

    def refine(self, clauses, word: tuple, label: bool) -> list[str]:
        said = " & ".join(f"({c})" for c in clauses) if clauses else "(none usable)"
        seq = ", ".join(word) if word else "(nothing)"
        return self._ask(f"Your formula was: {said}\nIt is wrong on this sequence: {seq}. That sequence "
                         f"{'does' if label else 'does not'} accomplish the task. Correct the formula.\n")


def clause_pattern(alphabet) -> str:
    """A regular expression for clauses over `alphabet` in the law syntax, parentheses nested at
    most twice: sent as the schema's `pattern`, so a server that decodes by grammar (llama.cpp)
    can only write such clauses; it is not checked on the answer (the parser is), so a model
    that writes deeper formulas elsewhere is not refused for it."""
    atom = "(" + "|".join(re.escape(a) for a in sorted(alphabet)) + "|true|false)"
    prefix, op = "(!|[FGX] )*", " (&|[|]|->|U|W|R) "
    term = prefix + atom
    for _ in range(2):
        term = f"{prefix}({atom}|[(]{term}({op}{term})*[)])"
    return f"^{term}({op}{term})*$"


def clauses_schema(alphabet):
    """The answer's pydantic model: {"clauses": [str, ...]}, each clause checked by the logic
    core (`check_clauses`) over `alphabet` as it is validated, so a bad one is re-asked; the
    schema's items carry `clause_pattern`."""
    from typing import Annotated

    from pydantic import BaseModel, Field, WithJsonSchema, field_validator

    known = tuple(alphabet)
    clause = Annotated[str, WithJsonSchema({"type": "string", "pattern": clause_pattern(known)})]

    class FormulaAnswer(BaseModel):
        clauses: list[clause] = Field(min_length=1)

        @field_validator("clauses")
        @classmethod
        def _usable(cls, clauses):
            from regula.logic import FormulaError
            try:
                check_clauses(clauses, known)
            except FormulaError as exc:
                raise ValueError(str(exc)) from None
            return clauses

    return FormulaAnswer
