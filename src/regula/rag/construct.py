"""Sub-alphabets for tasks (CEDAR §3.1): the k best nouns by retrieval, the verbs by the
`alphabet` role, and wider ones when the world shows Σ too small.

Widening level s takes k + s * `rag.expand_step` nouns and adds the s next verbs by score to the
chosen ones; skills the world showed outside Σ (`seen`) add their verb and object. `letters`
steps through the levels so that each step's letters strictly contain the last's, until
Σ_global is exhausted.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from regula import roles

from .alphabet import GlobalAlphabet, SubAlphabet
from .evaluate import Retrieved, targets
from .retrieve import NOUN_KINDS, Retriever

if TYPE_CHECKING:  # the validated params (`regula.params.validate`)
    from regula.cedar.params import Rag


def uses_llm(cfg: Rag) -> bool:
    """Whether the verb chooser `rag.verbs` asks an LLM (then `SkillAlphabets` needs a client)."""
    return roles.uses_llm("alphabet", cfg.verbs)


class SkillAlphabets:
    """`retrieve(task, level)` and, for a skill's task text, `letters(skill, step)`."""

    def __init__(self, cfg: Rag, client=None, env: str = "crafter"):
        from regula import envs
        self.env = envs.get(env)
        self.alphabet = GlobalAlphabet.of(env)
        self.retriever = Retriever(self.alphabet, cfg.lexical_weight)
        self.chooser = roles.make("alphabet", cfg.verbs, client=client, threshold=cfg.verb_threshold)
        self.k, self.step = cfg.k, cfg.expand_step
        self.texts = {t.id: t.text for t in targets(env)}
        self._chosen: dict[str, tuple] = {}
        self._levels: dict[tuple, list[int]] = {}
        nouns = sum(len(self.alphabet.names(k)) for k in NOUN_KINDS)
        self.top_level = max(-(-max(nouns - self.k, 0) // self.step), len(self.alphabet.names("actions")))

    def task_text(self, skill: str) -> str:
        """The annotated task text whose id is the skill, else the skill's own description."""
        return self.texts.get(skill) or self.env.describe(skill)

    def retrieve(self, task: str, level: int = 0, seen=()) -> Retrieved:
        verbs = self.retriever.rank(task, ("actions",))
        ranked = self.retriever.rank(task, NOUN_KINDS)
        nouns = ranked[:self.k + level * self.step]
        if task not in self._chosen:
            self._chosen[task] = tuple(self.chooser.choose(task, verbs, ranked[:self.k]))
        chosen = self._chosen[task]
        extra = [v.name for v in verbs if v.name not in chosen][:level]
        sub = SubAlphabet(actions=chosen + tuple(extra),
                          objects=tuple(n.name for n in nouns if n.kind == "objects"),
                          events=tuple(n.name for n in nouns if n.kind == "events"))
        for skill in seen:
            sub = sub | self.alphabet.split_skill(skill)
        similarity = {s.name: s.cosine for s in verbs + ranked}
        return Retrieved(sub, {s: similarity[s] for s in sub.symbols()})

    def letters(self, skill: str, step: int = 0, seen=()) -> tuple[str, ...]:
        """The letters of the skill's Σ after `step` widenings, each strictly more than the last
        (the same as the last once Σ_global is exhausted)."""
        task = self.task_text(skill)
        levels = self._levels.setdefault((task, tuple(seen)), [0])
        while len(levels) <= step:
            last = set(self._letters(task, levels[-1], seen))
            level = levels[-1] + 1
            while level < self.top_level and set(self._letters(task, level, seen)) <= last:
                level += 1
            levels.append(min(level, self.top_level))
        return self._letters(task, levels[step], seen)

    def _letters(self, task: str, level: int, seen) -> tuple[str, ...]:
        return self.alphabet.letters(self.retrieve(task, level, seen).sub)
