"""CEDAR's params sections: `rag` (its sub-alphabets) and `cedar` (skills as DFAs learned with a teacher).

`SECTIONS` is what `regula.params` composes into the schema (one registry line there names this
module); `LLM_RUN` is the default overlay (section -> mapping) of the stage's `_llm` twin (`llm_runs.cedar`: the stage
cedar_skills reads the section `cedar`).
"""
from __future__ import annotations

from typing import Annotated

from pydantic import Field

from regula.schema import AtLeast0, AtLeast1, Count0, Count1, TEACHERS, WORLDS, Listed, Name, Noise, Rate, Section, Seed, one_of, within

# The names params may give; each equals the registry of the code that defines it (a test checks).
VERB_CHOOSERS = ("openai", "similarity")  # regula.roles.names("alphabet")


class Rag(Section):  # CEDAR's sub-alphabets: nouns retrieved, verbs chosen (seed 000 §3.1, Appendix A.4)
    k: AtLeast1 = 20  # nouns (objects and events) retrieved per task (the paper keeps the top 20)
    lexical_weight: Rate = 0.2  # BM25's share of a symbol's score; the rest is the embedding cosine
    verbs: Annotated[str, one_of(VERB_CHOOSERS)] = "similarity"  # similarity (scores: a stand-in) | openai (the LLM)
    verb_threshold: Annotated[float, within(-1, 1)] = 0.2  # the stand-in's least score for a verb (the best always)
    expand_step: AtLeast1 = 8  # nouns a wider alphabet adds (with the next verb by score)


class CedarTasks(Section):  # CEDAR's Table 2: tasks with and without the skill library
    tasks: Annotated[list[Name], Listed] = Field(default_factory=lambda: [
        "make_wood_pickaxe", "make_stone_pickaxe", "make_iron_pickaxe", "collect_diamond", "make_stone_sword",
        "make_iron_sword"])
    trials: Count0 = 5  # learning runs per task and condition (0: no Table 2), each on its own held-out world
    max_queries: AtLeast1 = 5000  # a trial's teacher askings per alphabet
    max_rounds: AtLeast1 = 50  # a trial's equivalence rounds per alphabet


CEDAR_DIGS = ("never", "stuck", "always")  # regula.cedar.rollout.DIGS


class Cedar(Section):  # CEDAR: skills as DFAs learned with a teacher's MQs and the world's EQs (seed 000)
    TRAINED = {"CEDAR's equivalence worlds": ("explore_seed", "explore_worlds")}
    EVALUATED = "episodes"

    skills: Annotated[list[Name], Listed] = Field(default_factory=lambda: [
        "collect_wood", "place_table", "make_wood_pickaxe", "collect_stone", "make_stone_pickaxe", "place_furnace",
        "collect_coal", "collect_iron", "make_iron_pickaxe", "collect_diamond"])  # achievements, learned in this order
    nouns: AtLeast1 = 10  # nouns RAG gives a skill's first Σ (rag.k: Table 4's); each widening adds rag.expand_step
    teacher: Annotated[str, one_of(TEACHERS)] = "rules"  # rules (data.yaml, wrong at `noise`: a stand-in) | openai
    noise: Noise = 0.1  # the rules teacher's error rate (persistent): of words, or of a formula's clauses
    teacher_form: Annotated[str, one_of(("word", "formula"))] = "word"  # word: the teacher asked per membership
    # query | formula: called once per alphabet for LTLf clauses the logic core evaluates for every query (issue 37)
    formula_calls: AtLeast1 = 2  # the formula teacher's calls per skill: the first, then one per wider Σ or
    # counterexample of the world's; past them the learner learns around its errors (cedar/formula.py)
    formula_tokens: AtLeast1 = 512  # LLM answer length for the formula's clauses
    formula_drop: bool = False  # past formula_calls: a clause refusing a word the world says does the skill is
    # dropped (no call), where the learner otherwise learns around it from the world's labels alone
    compare_formula: bool = True  # with teacher_form word: the curriculum learned again with the teacher as a
    # formula (its own library, caches and DFAs under formula/), its row beside the per-word one (record, report)
    formula_skills: list[Name] = Field(default_factory=list)  # compare_formula's curriculum
    # (empty: `skills`): a model asked once per alphabet can learn more skills than one asked per word
    formula_baseline: bool = True  # with compare_formula: the formula pass again with a teacher that knows
    # nothing (its formula `false`), the world's labels alone: what the teacher's formulas added
    formula_max_queries: AtLeast1 = 50000  # the formula pass's membership queries per alphabet: its formula
    # answers them, no call each, so `max_queries` (an LLM's askings) does not bound them
    explore_seed: Seed = 3000  # the equivalence oracle's worlds: explore_seed, +1, ... (training data)
    explore_worlds: Count1 = 40
    rollouts: Count1 = 8  # rollouts per equivalence round
    patience: AtLeast1 = 3  # rounds played before a hypothesis stands when no rollout reached the goal
    max_skills: AtLeast1 = 40  # letters a rollout tries
    max_calls: AtLeast1 = 120  # Crafter skills a rollout runs in all, the library skills' included
    upkeep: bool = True  # the survival layer between a rollout's letters (fight, drink, eat, sleep)
    dig: Annotated[str, one_of(CEDAR_DIGS)] = "always"  # rollouts' paths: never dig | stuck: where walking cannot
    dug_calls: bool = False  # digging: a dug item Σ has only as a call (`@collect_stone`) reads as that call
    call_held: bool = True  # a library call making a tool held, or placing a station seen, is done at once
    call_retry: bool = True  # a library call whose DFA accepted without its goal drops that edge and plans on
    seek: bool = True  # exploring for a letter's unseen target stops once it is seen (the expert's explore)
    forage: bool = True  # with upkeep: the survival layer eats sooner (a cow within 6 under food 8), readies at daylight 0.9
    arm: bool = True  # with upkeep: swords made at a table from wood and stone the survival layer gathers for them
    explore_tries: AtLeast0 = 3  # explores before a letter whose target was never seen counts as failed
    expansions: AtLeast0 = 2  # wider alphabets tried when the world shows Σ cannot do the skill
    widen_lacked: bool = True  # Σ widened also after the goal was reached, by the skills getting what failed
    # letters lacked and no letter of Σ gets (place_furnace's stone: RAG retrieves no collect_stone)
    letters: Annotated[str, one_of(("retrieved", "rules"))] = "rules"  # Σ: every retrieved letter | the
    # rules stand-in's pick among them (what the recipe needs; wrong on `noise` of the others), cedar/choose.py
    library: bool = True  # the skill manager: skills learned earlier callable as `@s`, and templates (same verb)
    template: Annotated[str, one_of(("description", "overlap", "none"))] = "description"  # the template among those
    # with the verb: closest description | most of the first Σ shared by its adapted letters (ties: description) | none
    adapt_calls: bool = False  # adapting a template, its plain letters the library holds as `@s` become `@s`
    max_rounds: AtLeast1 = 300  # equivalence rounds per alphabet
    max_queries: AtLeast1 = 50000  # teacher askings per alphabet
    witnesses: AtLeast0 = 0  # the learner's witness check (automata.learning): words per answer, 0 off
    worlds: Annotated[str, one_of(WORLDS)] = "eval"  # the seeds.<worlds> range the learned policies and the expert play
    episodes: Count1 = 20  # its first worlds (at most its count)
    mutants: Count1 = 10  # Table 5: wrong variants of each learned DFA (a transition added or removed)
    simulations: Count0 = 110  # ... played on the `worlds` per skill, split over the variants (0: none)
    mutation_seed: Seed = 0
    max_tokens: AtLeast1 = 64  # LLM answer length for the teacher
    tasks: CedarTasks = Field(default_factory=CedarTasks)


HOUSEHOLD_TASKS = ("MAKE_1_TOAST", "MAKE_COFFEE", "COOK_POTATO", "MAKE_SALAD", "STORE_PLATE_IN_FRIDGE")  # the tasks of regula.cedar.household


class Household(Section):  # stage household: CEDAR's Table 6 tasks on VirtualHome (regula.cedar.household)
    tasks: Annotated[list[Name], Listed] = Field(default_factory=lambda: list(HOUSEHOLD_TASKS))
    k: AtLeast1 = 5  # nouns RAG retrieves from the task's scene (the coffee's mug is its fifth)
    lexical_weight: Rate = 0.3  # BM25's share of a noun's score (rag.lexical_weight's meaning)
    noise: Noise = 0.0  # the share of the stand-in formula's clauses that are wrong (dropped or negated)
    seed: Seed = 0  # which clauses are wrong
    max_calls: AtLeast1 = 2  # teacher calls per DFA: the first, then one per counterexample
    max_rounds: AtLeast1 = 6  # rollouts in the simulator per DFA (EQ by the world)


SECTIONS = {"rag": Rag, "cedar": Cedar, "household": Household}
LLM_RUN = {"cedar": {
    "teacher": "openai", "skills": ["collect_wood", "place_table"], "formula_skills": Cedar().skills,
    "max_queries": 150, "max_rounds": 20,
    "expansions": 1, "explore_worlds": 8, "rollouts": 4, "episodes": 10, "simulations": 0,
    "tasks": {"trials": 0}}}
