"""CEDAR's skill manager (§3.3) on Crafter: the library of learned skills, learned skills as
letters of later skills' alphabets, and template adaptation.

An entry is the paper's ⟨A, v, n, E, D⟩: the DFA, the verb and noun the skill's name grounds
from (`make_wood_pickaxe`: make, wood_pickaxe), its success event (the achievement) and the
labelled words it was learned from (the teacher's answers and the world's labels).

* **Skills as letters.** A later skill's Σ holds `@s` in place of the letter `s` when the
  library has s learned as more than its own letter: `@make_wood_pickaxe` runs the learned
  DFA as a policy until the achievement happens (gathering wood and a table on the way), where
  the letter `make_wood_pickaxe` only crafts. Skill DFAs are then short words over skills, as
  lifelong learning means them to be; the rules teacher reads `@s` as s done from where the word
  is (its shortest plan by the rules), an LLM teacher by the line the description adds.
* **Retrieval and templating.** A query (v', n') returns the skill with both; with the verb
  only, the stored skill whose description is closest (MiniLM cosine, rounded as RAG's are: the
  stand-in for the paper's LLM choosing among them) is the template. Its letters naming its noun are
  substituted by the new noun's, and so are the words of its D, which become the learner's
  prior answers: the DFA is refined by the active learner, not learned from scratch.
"""
from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from regula import envs
from regula.automata.dfa import DFA
from regula.automata.ops import minimize, shortest_accepted
from regula.errors import DataError
from regula.io import write_json

from .rollout import FIND, FORAGE, STATIONS, play
from .words import ASIDE, MACRO, is_macro

CRAFTER = envs.get("crafter")


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    dfa: DFA
    examples: dict = field(default_factory=dict, compare=False)  # D: word -> label

    @property
    def verb(self) -> str:
        return self.name.partition("_")[0]

    @property
    def noun(self) -> str:
        return self.name.partition("_")[2]

    @property
    def plan(self) -> tuple:
        """The word its policy tries first: a shortest accepted one (empty when none)."""
        return shortest_accepted(self.dfa) or ()

    @property
    def composite(self) -> bool:
        """Learned as more than its own letter: worth calling as `@name`."""
        return self.plan != (self.name,)


class Library:
    def __init__(self, skills=()):
        self.skills: dict[str, Skill] = {}
        for s in skills:
            self.add(s)

    def add(self, skill: Skill) -> None:
        self.skills[skill.name] = skill

    def __contains__(self, name: str) -> bool:
        return name in self.skills

    def __len__(self) -> int:
        return len(self.skills)

    @property
    def key(self) -> str:
        """Names what macros mean (their minimal DFAs): "" while there is none, so the caches of
        a skill learned without callable skills keep their names."""
        used = {n: minimize(s.dfa).dumps() for n, s in sorted(self.skills.items()) if s.composite}
        return hashlib.sha256(json.dumps(used, sort_keys=True).encode()).hexdigest()[:8] if used else ""

    # -- skills as letters -------------------------------------------------------------------------
    def callable(self, letters) -> tuple:
        """`letters` with each composite library skill `s` as `@s`, sorted."""
        return tuple(sorted(f"{MACRO}{a}" if a in self.skills and self.skills[a].composite else a
                            for a in letters))

    def skill(self, name: str) -> Skill:
        if name not in self.skills:
            from regula.errors import UnknownNameError
            raise UnknownNameError("library skill", name, self.skills)
        return self.skills[name]

    def glossary(self, letters) -> str:
        """One line per `@s` among `letters`, for an LLM teacher's description."""
        return "".join(f"\n{a}: the learned skill {a[len(MACRO):]}, run until it is done (it gathers what it "
                       "needs itself)" for a in letters if is_macro(a))

    # -- retrieval and templating ------------------------------------------------------------------
    def template(self, name: str, description: str, letters=None, skills=()) -> Skill | None:
        """The stored skill to adapt for `name`: one with the same verb and another noun, the
        closest by description (None: no stored skill has the verb). Given the new skill's first
        Σ (`letters`) and Crafter's skill names, the one whose adapted letters share most of Σ
        first (overlap coefficient), the description breaking ties: a make_wood_pickaxe speaks
        of wood and a table, make_stone_pickaxe of the pickaxes and stone before it."""
        verb = name.partition("_")[0]
        same = [s for n, s in sorted(self.skills.items()) if s.verb == verb and n != name]
        if not same:
            return None
        from regula.rag.embed import model, rounded
        vectors = model().encode([description] + [s.description for s in same])
        scores = [rounded(x) for x in vectors[1:] @ vectors[0]]  # a tie goes to the first name (`max`)
        if letters is not None:
            sigma = set(letters)
            overlap = [len(sigma & set(self.adapt(s, self.substitution(s, name, skills), self.callable)[0]))
                       / max(1, min(len(sigma), len(s.dfa.alphabet))) for s in same]
            return same[max(range(len(same)), key=lambda i: (round(overlap[i], 9), scores[i]))]
        return same[max(range(len(same)), key=scores.__getitem__)]

    @staticmethod
    def substitution(template: Skill, name: str, skills) -> dict:
        """Letter -> letter: each of the template's letters acting on its noun, to the same verb on
        the new noun where Crafter has that skill (`make_iron_pickaxe` -> `make_iron_sword`)."""
        noun = name.partition("_")[2]
        out = {}
        for a in template.dfa.alphabet:
            prefix = MACRO if is_macro(a) else ""
            verb, _, obj = a[len(prefix):].partition("_")
            if obj == template.noun and f"{verb}_{noun}" in skills:
                out[a] = f"{verb}_{noun}"  # the new skill is not in the library: its own letter
        return out

    @staticmethod
    def adapt(template: Skill, mapping: dict, calls=None) -> tuple[tuple, dict]:
        """The template's letters and its D with `mapping` applied: the new skill's first Σ and
        its learner's prior answers. `calls` (`Library.callable`): a plain letter the library now
        holds as `@s` becomes `@s` too, in Σ and in the words D says do the skill (the call does
        what the letter does, and gathers what it needs first); a word D says does not do it is
        dropped where it had such a letter (the call may well succeed where the letter failed)."""
        def called(a):
            return calls((a,))[0] if calls and not is_macro(a) else a

        letters = tuple(sorted({called(mapping.get(a, a)) for a in template.dfa.alphabet}))
        answers = {}
        for w, y in template.examples.items():
            mapped = tuple(mapping.get(a, a) for a in w)
            now = tuple(called(a) for a in mapped)
            if y:
                answers[now] = True
            elif now == mapped:
                answers.setdefault(now, False)
        return letters, answers

    # -- files ---------------------------------------------------------------------------------------
    def save(self, root: Path, index: list[dict]) -> None:
        """DFAs are saved by the stage; here each skill's D beside it, and the index."""
        for name, s in self.skills.items():
            write_json(root / "skills" / f"{name}.examples.json",
                       [[list(w), y] for w, y in sorted(s.examples.items(), key=lambda e: (len(e[0]), e[0]))])
        write_json(root / "library.json", index)

    @classmethod
    def load(cls, root: Path) -> "Library":
        path = root / "library.json"
        if not path.exists():
            raise DataError(f"{path}: no skill library (run the cedar_skills stage first)")
        lib = cls()
        for entry in json.loads(path.read_text()):
            if not entry.get("reached"):
                continue
            examples = json.loads((root / "skills" / f"{entry['name']}.examples.json").read_text())
            lib.add(Skill(entry["name"], entry["description"], DFA.load(root / entry["dfa"]),
                          {tuple(w): bool(y) for w, y in examples}))
        return lib


def _upkeep(world, survival) -> list:
    """The survival skills due now, run outside the word (a few at most: each may fail); their steps."""
    out = []
    for _ in range(UPKEEP_SKILLS):
        due = survival.survival_skill()
        if due is None or world.done:
            break
        skill, until = due
        out.append(world.run_skill(skill, until=until, interrupt=survival.interrupt(skill, None)))
    return out


UPKEEP_SKILLS = 3  # survival skills before a letter, and retries of a letter a close zombie interrupted
SWORDS = ("wood_sword", "stone_sword")  # `Budget.arm`: made in this order, as the survival layer does


class _Aside:
    """A step run outside the word (upkeep, an interrupted try of the letter): no letter of its
    own, but what its path dug is (`words.dug`), so it is logged when rollouts dig."""

    def __init__(self, step):
        self.step, self.skill, self.cause, self.inventory = step, ASIDE, None, step.inventory
        self.success = True  # never the cause a library skill failed for

    def to_json(self) -> dict:
        return {**self.step.to_json(), "skill": ASIDE, "success": True}


class _Step:
    """A library skill's run as one step of the word above it (what `extract` reads)."""

    def __init__(self, skill: str, success: bool, cause, inventory: dict, props: list, steps: int):
        self.skill, self.success, self.cause = skill, success, cause
        self.inventory, self.props_after, self.steps = inventory, props, steps

    def to_json(self) -> dict:
        return {"skill": self.skill, "success": self.success, "cause": self.cause,
                "inventory": self.inventory, "props_after": self.props_after, "steps": self.steps}


class SkillWorld:
    """A Crafter world whose skills include the library's: `run_skill("@s")` plays s's DFA
    (`rollout.play`) on the same world, its own random choices drawn from `rng`. `events` is
    this level's log; `unlocked` at the top is the game's, below it what succeeded since the
    call began (a second wooden pickaxe is a success of its own)."""

    def __init__(self, base, library: Library, budget, rng: random.Random, start: int | None = None,
                 calls: list | None = None, survival=None, goal: str | None = None, armed: set | None = None):
        self.base, self.library, self.budget, self.rng, self.start = base, library, budget, rng, start
        self.events: list = []
        self.calls = calls if calls is not None else [0]  # Crafter skills run, shared by every level
        if survival is None and budget.upkeep:
            survival = CRAFTER.Survival(base, CRAFTER.SurvivalConfig(swords=(), **(FORAGE if budget.forage else {})))
        self.survival = survival  # the survival layer (`Budget.upkeep`), shared by every level
        self.goal = goal  # the rollout's achievement: arming never gets it (`_arm`)
        self.armed = armed if armed is not None else set()  # ids of the base steps `_arm` ran: no call's success

    def _run(self, letter: str, until=None):
        """A Crafter skill; with the survival layer, survival first, and a close zombie fought and the skill run
        again when it interrupts (the letter fails only for its own reasons). When paths dig (water and
        cows are then within reach), thirst and hunger stop the letter too, as they stop the expert's."""
        if self.survival is None:
            return self.base.run_skill(letter, until=until)
        interrupt = self.survival.danger if self.budget.digs else self.survival.zombie_close
        if self.budget.arm:
            self._arm()
        aside = []
        for _ in range(UPKEEP_SKILLS):
            aside += _upkeep(self.base, self.survival)
            step = self.base.run_skill(letter, until=until, interrupt=interrupt)
            if step.success or (step.cause or {}).get("kind") != "interrupted" or self.base.done:
                break
            aside.append(step)
        if self.budget.digs:
            self.events += [_Aside(s) for s in aside]
        return step

    def _arm(self) -> None:
        """The next sword the agent lacks, made at a table it stands by from wood and stone gathered for it here.
        Environment-level control like the rest of the survival layer (the expert arms itself the same way, and neither
        reads anything a learner should not have: the inventory, the seen map). Net of the sword, the inventory
        the word counts is unchanged, so these steps stay out of the word and out of every call's success (a
        sword is not what any curriculum word is for; a rollout whose goal a step here would get skips it)."""
        world = self.base
        if not world.props().get("near_table"):
            return
        for sword in SWORDS:
            if world.inventory.get(sword, 0):
                continue
            recipe = CRAFTER.rules.recipes[f"make_{sword}"]
            gather = [f"collect_{item}" for item, n in sorted(recipe.uses.items()) for _ in range(n)]
            plan = gather + [recipe.skill]
            ready = all(world.inventory.get(k, 0) >= v
                        for g in gather for k, v in CRAFTER.rules.recipes[g].require.items())
            seen = all(world.memory.seen(CRAFTER.rules.recipes[g].target) for g in gather)
            if not ready or not seen or (self.goal in plan and self.goal not in world.unlocked):
                return
            for skill in plan:
                step = world.run_skill(skill, interrupt=self.survival.zombie_close)
                self.armed.add(id(step))
                if not step.success or world.done:
                    return

    def _held(self, name: str) -> bool:
        """What skill `name` is for is had already (`Budget.call_held`): the tool it makes is held, or a station
        like the one it places is on the seen map. What the agent sees, never the world's hidden state."""
        recipe = CRAFTER.rules.recipes.get(name)
        if recipe is None:
            return False
        if recipe.kind == "make":
            return all(self.base.inventory.get(item, 0) >= 1 for item in recipe.gives)
        if recipe.kind == "place" and recipe.target in STATIONS:
            return self.base.memory.seen(recipe.target)
        return False

    @property
    def done(self) -> bool:
        """The episode is over, or the rollout has run `budget.max_calls` Crafter skills."""
        return self.base.done or self.calls[0] >= self.budget.max_calls

    @property
    def steps(self) -> int:
        return self.base.steps

    @property
    def unlocked(self):
        if self.start is None:
            return self.base.unlocked
        return {e.skill for e in self.base.events[self.start:] if e.success and id(e) not in self.armed}

    def run_skill(self, letter: str, until=None):
        """`until` (a Crafter skill only: an explore that found its target) as `CrafterWorld.run_skill`'s."""
        if not is_macro(letter):
            self.calls[0] += 1
            step = self._run(letter, until)
            self.events.append(step)
            return step
        skill = self.library.skill(letter[len(MACRO):])
        if self.budget.call_held and self._held(skill.name):
            props = list(self.base.events[-1].props_after) if self.base.events else []
            step = _Step(letter, True, None, self.base.inventory, props, 0)
            self.events.append(step)
            return step
        below = SkillWorld(self.base, self.library, self.budget, random.Random(self.rng.getrandbits(64)),
                           start=len(self.base.events), calls=self.calls, survival=self.survival, goal=self.goal,
                           armed=self.armed)
        before = self.base.steps
        record = play(below, skill.dfa, skill.name, self.budget, below.rng, call=True)
        failed = [e for e in below.events if not e.success]
        cause = None
        if not record["label"]:
            last = (failed[-1].cause or {}) if failed else {}
            # Not found: exploring may cure it; anything else is the skill's own failure, which
            # refutes no word above it (the skill gathers what it needs itself).
            cause = last if last.get("kind") in FIND else {"kind": "no_effect", "skill": letter}
        props = list(self.base.events[-1].props_after) if self.base.events else []
        step = _Step(letter, bool(record["label"]), cause, self.base.inventory, props, self.base.steps - before)
        self.events.append(step)
        return step
