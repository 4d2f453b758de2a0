"""The LTLCrit shield over any environment family's interface: an actor's proposals checked
against the family's hand-written hard laws, with nothing of one environment in the code.

What it reads of the family: `make(seed, **options)`, `skill_names()`, `proposition_names()`,
`hard_laws()` and `death_cause(episode)`; of the episode: `props()`, `run_skill`, `done`,
`unlocked`. A skill's atom in the laws is `envs.action_atom(skill)` (`move e` -> `move_e`).
The decision protocol is `rollout.ShieldedActor`'s without the survival layer and the critic:
the actor proposes, a refused proposal comes back to it as tried, at most `max_replans` times,
then a seeded uniform draw among the allowed skills. `rollout.py` itself stays Crafter's (its
survival layer, map memory and milestones are Crafter's): docs/minihack.md says what transfers.
"""
from __future__ import annotations

import random

from regula.envs import action_atom, true_props
from regula.errors import RegulaError
from regula.logic import Shield

from .actors import Actor, View


def _shield(family, laws: list, backend: str, built: Shield | None) -> Shield:
    """`built` (a shield over these laws from an earlier episode) reset, or a new one: building
    every law's monitor again for each episode costs more than a short episode's checks."""
    if built is not None:
        built.reset()
        return built
    return Shield(laws, [action_atom(s) for s in family.skill_names()], family.proposition_names(), backend,
                  restart_violated=True)


def shielded_episode(family, seed: int, actor: Actor, laws: list | None, goal: str, max_skills: int,
                     max_replans: int = 3, backend: str = "auto", shield: Shield | None = None, **options) -> dict:
    """One episode of `family.make(seed, **options)` with `actor` proposing skills, under `laws`
    (None: no shield; `shield`: one built over them before, with `restart_violated`), until the
    episode ends or `max_skills` skills ran. The result: success
    (`goal` unlocked), how the agent died (`family.death_cause`), the skills run, the proposals
    the shield refused (and by which law), the skills the fallback drew, the steps at which the
    shield refused anything (`refused_steps`: the steps where it, not the actor's first choice,
    decided) and, for each achievement unlocked, who chose the skill that unlocked it (`unlocked_by`:
    "actor" its first proposal, "replan" a proposal after a refusal, "fallback" the seeded draw),
    so a success is credited to what earned it."""
    if max_skills < 1 or max_replans < 0:
        raise RegulaError(f"shielded_episode: max_skills must be >= 1 and max_replans >= 0, "
                          f"got {max_skills} and {max_replans}")
    world = family.make(seed, **options)
    skills = family.skill_names()
    atom = {s: action_atom(s) for s in skills}
    shield = _shield(family, laws, backend, shield) if laws is not None else None
    actor.reset(seed)
    draw = random.Random(f"fallback:{seed}")
    refused = fallback = refused_steps = 0
    refused_by: dict[str, int] = {}  # law -> proposals it refused
    unlocked_by: dict[str, str] = {}  # achievement -> who chose the skill that unlocked it
    run: list[str] = []
    while not world.done and len(run) < max_skills:
        state = true_props(world.props())
        allowed = skills
        if shield is not None:
            ok, _ = shield.allowed(state)
            allowed = [s for s in skills if atom[s] in set(ok)]
        view = View(text="", state=state, goal=goal, actions=skills, allowed=allowed,
                    unlocked=list(world.unlocked))
        for attempt in range(max_replans + 1):
            skill = actor.choose(view).action
            view.tried.append(skill)
            if skill in allowed:
                chooser = "replan" if attempt else "actor"
                break
            refused += 1
            if skill in atom:
                for law in shield.check(state, atom[skill]).violated:
                    refused_by[law.label] = refused_by.get(law.label, 0) + 1
        else:
            skill = draw.choice(allowed)
            fallback += 1
            chooser = "fallback"
        refused_steps += chooser != "actor"
        before = set(world.unlocked)
        world.run_skill(skill)
        run.append(skill)
        for achievement in world.unlocked:
            if achievement not in before:
                unlocked_by[achievement] = chooser
        if shield is not None:
            shield.commit(state, atom[skill])
    return {"seed": seed, "success": goal in world.unlocked, "death": family.death_cause(world),
            "skills": len(run), "refused": refused, "refused_by": refused_by, "fallback": fallback,
            "refused_steps": refused_steps, "unlocked_by": unlocked_by,
            "broken": [list(b) for b in shield.broken] if shield is not None else []}


def tally(results: list[dict]) -> dict:
    """Success and deaths by cause over episodes, with the shield's refusals."""
    deaths: dict[str, int] = {}
    by: dict[str, int] = {}
    for r in results:
        if r["death"]:
            deaths[r["death"]] = deaths.get(r["death"], 0) + 1
        for law, n in r["refused_by"].items():
            by[law] = by.get(law, 0) + n
    return {"episodes": len(results), "success": sum(r["success"] for r in results),
            "deaths": dict(sorted(deaths.items())), "skills": sum(r["skills"] for r in results),
            "refused": sum(r["refused"] for r in results), "refused_by": dict(sorted(by.items())), "fallback": sum(r["fallback"] for r in results),
            "broken": sum(len(r["broken"]) for r in results)}


def expert_under_shield(family, seed: int, laws: list, backend: str = "auto", shield: Shield | None = None,
                        **options) -> dict:
    """The family's scripted expert on `family.make(seed, **options)` with every skill it runs
    checked by the shield first: `refused` lists the (skill, laws) the laws would have refused
    (the hand-written laws must refuse nothing the expert does; the skill still runs, so the
    audit sees the whole demonstration)."""
    world = family.make(seed, **options)
    shield = _shield(family, laws, backend, shield)
    refused: list = []
    run_skill = world.run_skill

    def checked(skill: str, *args, **kw):
        state = true_props(world.props())
        decision = shield.check(state, action_atom(skill))
        if not decision.allowed:
            refused.append([skill, [law.label for law in decision.violated]])
        shield.commit(state, action_atom(skill))
        return run_skill(skill, *args, **kw)

    world.run_skill = checked  # the expert calls the episode's run_skill: check each call on its way
    success = family.expert(world)
    return {"seed": seed, "success": bool(success), "death": family.death_cause(world),
            "skills": len(world.events), "refused": refused, "unlocked": list(world.unlocked)}
