"""The command line's bad-input corpus (issue #14): params files and values, command-line
arguments, and damaged demonstrations on disk. Each case runs `regula ...` in-process and must
end in exit status 2 and one `error: ...` line naming what is wrong (the exact line is
asserted), with no traceback and every file under the project unchanged
(`cli_run.check_bad_input`)."""
import json
import shutil
import socket

import pytest
import yaml

from cli_run import check_bad_input, invoke
from regula import demos, params as params_mod
from stage_configs import params_text

# A small project: two short demonstrations and their metrics; DiVE explores nothing, so
# `regula dive` reads the demonstrations first.
SMALL = {"demos": {"episodes": 2, "max_steps": 300, "max_skills": 60}, "dive": {"explore_episodes": 0}}

GOALS = ("params: demos.goal: 'diamonds' is not one of all, collect_coal, collect_diamond, collect_drink, "
         "collect_iron, collect_sapling, collect_stone, collect_wood, defeat_skeleton, defeat_zombie, eat_cow, "
         "eat_plant, make_iron_pickaxe, make_iron_sword, make_stone_pickaxe, make_stone_sword, make_wood_pickaxe, "
         "make_wood_sword, place_furnace, place_plant, place_stone, place_table, wake_up")


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("project")
    (root / "params.yaml").write_text(params_text(SMALL))
    demos.generate(params_mod.load(root / "params.yaml"), root / "data" / "demos", root / "metrics")
    (root / "notes.txt").write_text("a file, not a folder\n")
    return root


@pytest.fixture
def at_project(project, monkeypatch):
    monkeypatch.chdir(project)
    return project


# -- params files and values: `regula demos --params FILE` ({file} is its path) ------------------

EVERY = "a params file gives every setting: start from a copy of the project's params.yaml"
SECTIONS = ("seeds, env, demos, minihack, llm, feedback, membership, logic, automata_eval, specs, ltlcrit, dive, rag, cedar, "
            "household, e2cl, llm_runs, report, runner")


def without(*dotted: str) -> str:
    """The text of a params file with every key (the defaults) but those named."""
    full = params_mod.defaults()
    for key in dotted:
        *parents, last = key.split(".")
        node = full
        for name in parents:
            node = node[name]
        del node[last]
    return yaml.safe_dump(full, sort_keys=False)


PARAMS = [
    ('not-yaml', 'demos: [1,\n',
     "params: {file}:2: not valid YAML (expected the node content, but found '<stream end>')"),
    ('unclosed-quote', 'report: {title: "x}\n',
     'params: {file}:2: not valid YAML (found unexpected end of stream)'),
    ('mapping-in-scalar', 'seed: 1: 2\n',
     'params: {file}:1: not valid YAML (mapping values are not allowed here)'),
    ('empty', '', 'params: {file} is empty; ' + EVERY),
    ('only-comments', '# nothing here\n', 'params: {file} is empty; ' + EVERY),
    ('only-seed', 'seed: 0\n', f'params: {{file}} lacks {SECTIONS}; {EVERY}'),
    ('empty-mapping', '{}\n', f'params: {{file}} lacks seed, {SECTIONS}; {EVERY}'),
    ('a-key-missing', without('llm.timeout_retries'), 'params: {file} lacks llm.timeout_retries; ' + EVERY),
    ('keys-and-a-section-missing', without('demos.goal', 'env.symbols', 'runner'),
     'params: {file} lacks env.symbols, demos.goal, runner; ' + EVERY),
    ('top-level-list', '- seed\n- 1\n',
     'params: {file} must hold a mapping of sections, got list'),
    ('top-level-scalar', 'seed\n',
     'params: {file} must hold a mapping of sections, got str'),
    ('binary', b'\x89PNG\r\n\x1a\n\x00\xff',
     'params: {file} is not UTF-8 text (byte 0)'),
    ('nul-character', 'seed: 0\n\x00\n',
     'params: {file} is not valid YAML (character 0x0 at offset 8 is not allowed)'),
    ('python-tag', 'seed: !!python/object/apply:os.getpid []\n',
     "params: {file}:1: not valid YAML (could not determine a constructor for the tag 'tag:yaml.org,2002:python/object/apply:os.getpid')"),
    ('undefined-alias', 'seed: *x\n',
     "params: {file}:1: not valid YAML (found undefined alias 'x')"),
    ('duplicate-top-key', 'seed: 1\ndemos: {episodes: 2}\nseed: 2\n',
     "params: {file}:3: key 'seed' given twice (first on line 1)"),
    ('duplicate-nested-key', 'demos:\n  episodes: 2\n  goal: all\n  episodes: 3\n',
     "params: {file}:4: key 'episodes' given twice (first on line 2)"),
    ('int-key', '1: 2\n',
     'params: {file}:1: key 1 is not a name (quote it)'),
    ('bool-key', 'demos:\n  yes: 1\n',
     'params: {file}:2: key True is not a name (quote it)'),
    ('section-int', 'demos: 3\n',
     'params: demos must be a mapping, got int'),
    ('section-list', 'env: [1, 2]\n',
     'params: env must be a mapping, got list'),
    ('subsection-str', 'env: {symbols: high}\n',
     'params: env.symbols must be a mapping, got str'),
    ('unknown-top-key', 'sed: 1\n',
     "params: unknown key 'sed'; known keys: automata_eval, cedar, demos, dive, e2cl, env, feedback, household, llm, llm_runs, logic, ltlcrit, membership, minihack, rag, report, runner, seed, seeds, specs"),
    ('unknown-key', 'demos: {epsiodes: 3}\n',
     "params: unknown key 'demos.epsiodes'; known keys under 'demos': episodes, goal, max_skills, max_steps, workers"),
    ('unknown-deep-key', 'env: {skills: {max_step: 3}}\n',
     "params: unknown key 'env.skills.max_step'; known keys under 'env.skills': explore_steps, max_steps"),
    ('seed-negative', 'seed: -1\n',
     'params: seed must be >= 0, got -1'),
    ('seed-bool', 'seed: true\n',
     'params: seed must be int, got True'),
    ('seed-string', "seed: '0'\n",
     "params: seed must be int, got '0'"),
    ('seed-float', 'seed: 1.5\n',
     'params: seed must be int, got 1.5'),
    ('seed-null', 'seed:\n',
     'params: seed must be int, got None'),
    ('env-length-0', 'env: {length: 0}\n',
     'params: env.length must be >= 1, got 0'),
    ('low-above-9', 'env: {symbols: {low: 10}}\n',
     'params: env.symbols.low must be within 0..9, got 10'),
    ('night-below-1.5', 'env: {symbols: {night_below: 1.5}}\n',
     'params: env.symbols.night_below must be within 0..1, got 1.5'),
    ('night-below-nan', 'env: {symbols: {night_below: .nan}}\n',
     'params: env.symbols.night_below must be within 0..1, got nan'),
    ('threshold-unknown-item', 'env: {symbols: {thresholds: {gold: [1]}}}\n',
     "params: env.symbols.thresholds: unknown item 'gold'; valid items: coal, diamond, iron, sapling, stone, wood"),
    ('threshold-level-0', 'env: {symbols: {thresholds: {wood: [0]}}}\n',
     'params: env.symbols.thresholds.wood: levels must be integers >= 1'),
    ('threshold-not-list', 'env: {symbols: {thresholds: {wood: 3}}}\n',
     'params: env.symbols.thresholds.wood must be list, got 3'),
    ('skill-max-steps-0', 'env: {skills: {max_steps: 0}}\n',
     'params: env.skills.max_steps must be >= 1, got 0'),
    ('explore-steps-negative', 'env: {skills: {explore_steps: -1}}\n',
     'params: env.skills.explore_steps must be >= 1, got -1'),
    ('demos-episodes-0', 'demos: {episodes: 0}\n',
     'params: demos.episodes must be >= 1, got 0'),
    ('demos-episodes-string', 'demos: {episodes: many}\n',
     "params: demos.episodes must be int, got 'many'"),
    ('demos-episodes-float', 'demos: {episodes: 2.0}\n',
     'params: demos.episodes must be int, got 2.0'),
    ('demos-goal-unknown', 'demos: {goal: diamonds}\n',
     GOALS),
    ('demos-goal-list', 'demos: {goal: [collect_wood]}\n',
     "params: demos.goal must be str, got ['collect_wood']"),
    ('demos-max-steps-0', 'demos: {max_steps: 0}\n',
     'params: demos.max_steps must be >= 1, got 0'),
    ('demos-max-skills-negative', 'demos: {max_skills: -3}\n',
     'params: demos.max_skills must be >= 1, got -3'),
    ('demos-episodes-overflow', 'demos: {episodes: 99999999999999999999999}\n',
     'params: demos.episodes must be <= 1000000, got 99999999999999999999999'),
    ('demos-max-steps-overflow', 'demos: {max_steps: 1099511627776}\n',
     'params: demos.max_steps must be <= 2147483647, got 1099511627776'),
    ('seed-huge', 'seed: 100000000000000000000\n',
     'params: seed must be <= 2146483647, got 100000000000000000000'),
    ('temperature-outside-the-api', 'llm: {temperature: 5}\n',
     'params: llm.temperature must be within 0..2, got 5.0'),
    ('demos-workers-0', 'demos: {workers: 0}\n',
     'params: demos.workers must be >= 1, got 0'),
    ('ltlcrit-workers-0', 'ltlcrit: {workers: 0}\n',
     'params: ltlcrit.workers must be >= 1, got 0'),
    ('dive-workers-two', 'dive: {workers: two}\n',
     "params: dive.workers must be int, got 'two'"),
    ('feedback-backend-unknown', 'feedback: {backend: gpt}\n',
     "params: feedback.backend: 'gpt' is not one of openai, rules"),
    ('feedback-max-queries-0', 'feedback: {max_queries: 0}\n',
     'params: feedback.max_queries must be >= 1, got 0'),
    ('feedback-samples-even', 'feedback: {samples: 2}\n',
     'params: feedback.samples must be odd and >= 1, got 2'),
    ('logic-backend-unknown', 'logic: {backend: nusmv}\n',
     "params: logic.backend: 'nusmv' is not one of auto, native, spot"),
    ('sizes-empty', 'automata_eval: {sizes: []}\n',
     'params: automata_eval.sizes must list at least one value, got []'),
    ('states-0', 'automata_eval: {sizes: [[0, 5]]}\n',
     'params: automata_eval.sizes[0][0] must be >= 1, got 0'),
    ('sizes-string', "automata_eval: {sizes: '5'}\n",
     "params: automata_eval.sizes must be list, got '5'"),
    ('noise-half', 'automata_eval: {noises: [0.0, 0.5]}\n',
     'params: automata_eval.noises[1] must be in [0, 0.5), got 0.5'),
    ('noise-negative', 'automata_eval: {noises: [-0.1]}\n',
     'params: automata_eval.noises[0] must be in [0, 0.5), got -0.1'),
    ('kinds-unknown', 'automata_eval: {kinds: [sticky]}\n',
     "params: automata_eval.kinds[0]: 'sticky' is not one of independent, persistent"),
    ('kinds-twice', 'automata_eval: {kinds: [persistent, persistent]}\n',
     'params: automata_eval.kinds: lists persistent more than once'),
    ('targets-0', 'automata_eval: {targets: 0}\n',
     'params: automata_eval.targets must be >= 1, got 0'),
    ('votes-even', 'automata_eval: {votes: 4}\n',
     'params: automata_eval.votes must be odd and >= 1, got 4'),
    ('max-queries-0', 'automata_eval: {max_queries: 0}\n',
     'params: automata_eval.max_queries must be >= 1, got 0'),
    ('ltlcrit-worlds-unknown', 'ltlcrit: {worlds: test}\n',
     "params: ltlcrit.worlds: 'test' is not one of dev, eval"),
    ('ltlcrit-episodes-beyond-range', 'ltlcrit: {episodes: 41}\n',
     'params: ltlcrit.episodes must be <= seeds.eval.count (40), got 41'),
    ('twin-episodes-beyond-range', 'llm_runs: {ltlcrit: {worlds: dev, episodes: 41}}\n',
     'params: llm_runs.ltlcrit.episodes must be <= seeds.dev.count (40), got 41'),
    ('seeds-eval-overlaps-dev', 'seeds: {eval: {start: 120, count: 40}}\n',
     'params: seeds.eval [120, 160) overlaps seeds.dev [100, 140): the reported worlds must be ones never '
     'played while developing'),
    ('seeds-eval-overlaps-demos', 'seeds: {eval: {start: 5, count: 10}}\n',
     "params: seeds.eval [5, 15) overlaps the demonstrations' worlds (seed, demos.episodes) [0, 12)"),
    ('seeds-eval-overlaps-exploration', 'dive: {explore_seed: 10030}\n',
     "params: seeds.eval [10000, 10040) overlaps DiVE's exploration worlds (dive.explore_seed, "
     "dive.explore_episodes) [10030, 10042)"),
    ('seeds-count-0', 'seeds: {dev: {start: 100, count: 0}}\n',
     'params: seeds.dev.count must be >= 1, got 0'),
    ('seeds-start-missing', 'seeds: {dev: {count: 3}}\n',
     'params: seeds.dev.start is required'),
    ('seeds-unknown-range', 'seeds: {test: {start: 1, count: 3}}\n',
     "params: unknown key 'seeds.test'; known keys under 'seeds': dev, eval"),
    ('ltlcrit-episodes-0', 'ltlcrit: {episodes: 0}\n',
     'params: ltlcrit.episodes must be >= 1, got 0'),
    ('actors-empty', 'ltlcrit: {actors: []}\n',
     'params: ltlcrit.actors must list at least one value, got []'),
    ('actors-unknown', 'ltlcrit: {actors: [rnadom]}\n',
     "params: ltlcrit.actors[0]: 'rnadom' is not one of greedy, greedy_goal, inner_monologue, naive, random, saycan"),
    ('actors-string', 'ltlcrit: {actors: random}\n',
     "params: ltlcrit.actors must be list, got 'random'"),
    ('critic-unknown', 'ltlcrit: {critic: gpt}\n',
     "params: ltlcrit.critic: 'gpt' is not one of openai, symbolic"),
    ('ltlcrit-fallback', "ltlcrit: {fallback: planner}\n",
     "params: ltlcrit.fallback: 'planner' is not one of ranked, uniform"),
    ('hard-laws-int', 'ltlcrit: {hard_laws: 1}\n',
     'params: ltlcrit.hard_laws must be bool, got 1'),
    ('iterations-negative', 'ltlcrit: {iterations: -1}\n',
     'params: ltlcrit.iterations must be >= 0, got -1'),
    ('patience-0', 'ltlcrit: {patience: 0}\n',
     'params: ltlcrit.patience must be >= 1, got 0'),
    ('max-replans-negative', 'ltlcrit: {max_replans: -1}\n',
     'params: ltlcrit.max_replans must be >= 0, got -1'),
    ('history-negative', 'ltlcrit: {history: -1}\n',
     'params: ltlcrit.history must be >= 0, got -1'),
    ('ltlcrit-max-tokens-0', 'ltlcrit: {max_tokens: 0}\n',
     'params: ltlcrit.max_tokens must be >= 1, got 0'),
    ('discoverer-unknown', 'dive: {discoverer: oracle}\n',
     "params: dive.discoverer: 'oracle' is not one of openai, statistical"),
    ('dive-samples-0', 'dive: {samples: 0}\n',
     'params: dive.samples must be >= 1, got 0'),
    ('inject-above-1', 'dive: {inject: 1.5}\n',
     'params: dive.inject must be within 0..1, got 1.5'),
    ('inject-bool', 'dive: {inject: true}\n',
     'params: dive.inject must be float, got True'),
    ('verify-samples-0', 'dive: {verify_samples: 0}\n',
     'params: dive.verify_samples must be >= 1, got 0'),
    ('chance-negative', 'dive: {chance: -0.1}\n',
     'params: dive.chance must be within 0..1, got -0.1'),
    ('explore-episodes-negative', 'dive: {explore_episodes: -1}\n',
     'params: dive.explore_episodes must be >= 0, got -1'),
    ('explore-seed-negative', 'dive: {explore_seed: -1}\n',
     'params: dive.explore_seed must be >= 0, got -1'),
    ('epsilon-inf', 'dive: {epsilon: .inf}\n',
     'params: dive.epsilon must be within 0..1, got inf'),
    ('evolver-unknown', 'dive: {evolver: x}\n',
     "params: dive.evolver: 'x' is not one of openai, symbolic"),
    ('conditions-unknown', 'dive: {conditions: [dive, no_verfier]}\n',
     "params: dive.conditions[1]: 'no_verfier' is not one of cot, cot_dynamics, dive, dive_no_survival, expert, "
     "human_dynamics, human_dynamics_evolved, manual_dynamics, manual_dynamics_no_evolver, no_dynamics, no_evolver, no_verifier, "
     "no_verifier_no_evolver, random"),
    ('agent-episodes-0', 'dive: {agent_episodes: 0}\n',
     'params: dive.agent_episodes must be >= 1, got 0'),
    ('dive-worlds-unknown', 'dive: {worlds: held_out}\n',
     "params: dive.worlds: 'held_out' is not one of dev, eval"),
    ('agent-episodes-beyond-range', 'dive: {agent_episodes: 41}\n',
     'params: dive.agent_episodes must be <= seeds.eval.count (40), got 41'),
    ('agent-max-steps-0', 'dive: {agent_max_steps: 0}\n',
     'params: dive.agent_max_steps must be >= 1, got 0'),
    ('title-empty', "report: {title: ''}\n",
     "params: report.title must be one line of text, got ''"),
    ('title-two-lines', 'report: {title: "a\\nb"}\n',
     "params: report.title must be one line of text, got 'a\\nb'"),
    ('title-int', 'report: {title: 3}\n',
     'params: report.title must be str, got 3'),
]


@pytest.mark.parametrize("content,expected", [c[1:] for c in PARAMS], ids=[c[0] for c in PARAMS])
def test_bad_params(at_project, tmp_path, content, expected):
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(content if isinstance(content, bytes) else content.encode())
    line = check_bad_input(["demos", "--params", bad], at_project)
    assert line == "error: " + expected.replace("{file}", str(bad))


# -- command-line arguments, run in the project ({root}: its path; notes.txt there is a file) --

ARGS = [
    ("unknown-command", ["demo"], "No such command 'demo'. Did you mean 'demos'?"),
    ("unknown-option", ["demos", "--episode", "3"], "No such option: --episode (Possible options: --episodes)"),
    ("episodes-0", ["demos", "--episodes", "0"], "params: demos.episodes must be >= 1, got 0"),
    ("episodes-negative", ["demos", "--episodes", "-3"], "params: demos.episodes must be >= 1, got -3"),
    ("episodes-word", ["demos", "--episodes", "many"],
     "Invalid value for '--episodes': Input should be a valid integer, unable to parse string as an integer"),
    ("seed-negative", ["demos", "--seed", "-1"], "params: seed must be >= 0, got -1"),
    ("episodes-overflow", ["demos", "--episodes", "99999999999999999999999"],
     "params: demos.episodes must be <= 1000000, got 99999999999999999999999"),
    ("seed-huge", ["demos", "--seed", "99999999999999999999999"],
     "params: seed must be <= 2146483647, got 99999999999999999999999"),
    ("play-seed-huge", ["play", "--seed", "99999999999999999999999"],
     "Invalid value for '--seed': Input should be less than or equal to 2146483647"),
    ("bench-expert-episodes-huge", ["bench", "expert", "--episodes", "2000000"],
     "Invalid value for '--episodes': Input should be less than or equal to 1000000"),
    ("goal-unknown", ["demos", "--goal", "diamonds"], GOALS),
    ("params-missing", ["demos", "--params", "nowhere.yaml"], "params: nowhere.yaml not found"),
    ("params-folder", ["demos", "--params", "data"], "params: data is a folder, not a params file"),
    ("out-a-file", ["demos", "--out", "notes.txt"], "Invalid value for '--out': dir 'notes.txt' is a file."),
    ("metrics-under-a-file", ["demos", "--metrics", "notes.txt/m"],
     "--metrics notes.txt/m: notes.txt is a file, not a folder"),
    ("ltlcrit-root-missing", ["ltlcrit", "--root", "nowhere"],
     "Invalid value for '--root': dir 'nowhere' does not exist."),
    ("ltlcrit-root-a-file", ["ltlcrit", "--root", "notes.txt"],
     "Invalid value for '--root': dir 'notes.txt' is a file."),
    ("actor-unknown", ["ltlcrit", "--actor", "sayno"],
     "params: ltlcrit.actors[0]: 'sayno' is not one of greedy, greedy_goal, inner_monologue, naive, random, saycan"),
    ("actor-twice", ["ltlcrit", "--actor", "random", "--actor", "random"],
     "params: ltlcrit.actors: lists random more than once"),
    ("ltlcrit-episodes-0", ["ltlcrit", "--episodes", "0"], "params: ltlcrit.episodes must be >= 1, got 0"),
    ("iterations-negative", ["ltlcrit", "--iterations", "-1"], "params: ltlcrit.iterations must be >= 0, got -1"),
    ("inject-2", ["dive", "--inject", "2"], "params: dive.inject must be within 0..1, got 2.0"),
    ("discoverer-unknown", ["dive", "--discoverer", "oracle"],
     "params: dive.discoverer: 'oracle' is not one of openai, statistical"),
    ("dive-root-missing", ["dive", "--root", "nowhere"],
     "Invalid value for '--root': dir 'nowhere' does not exist."),
    ("report-root-a-file", ["report", "--root", "notes.txt"],
     "Invalid value for '--root': dir 'notes.txt' is a file."),
    ("report-without-metrics", ["report", "--root", "data"],
     "data/metrics/demos_detail.json not found: run `regula demos` or `dvc repro` first"),
    ("report-title-empty", ["report", "--title", ""], "Invalid value for '--title': must be one line of text, got ''"),
    ("plan-goal-unknown", ["plan", "make_wod_pickaxe"], "unknown achievement 'make_wod_pickaxe'; valid achievements: "
     "collect_coal, collect_diamond, collect_drink, collect_iron, collect_sapling, collect_stone, collect_wood, "
     "defeat_skeleton, defeat_zombie, eat_cow, eat_plant, make_iron_pickaxe, make_iron_sword, make_stone_pickaxe, "
     "make_stone_sword, make_wood_pickaxe, make_wood_sword, place_furnace, place_plant, place_stone, place_table, "
     "wake_up"),
    ("plan-no-goal", ["plan"], "Missing argument 'goal'."),
    ("play-seed-negative", ["play", "--seed", "-1"],
     "Invalid value for '--seed': Input should be greater than or equal to 0"),
    ("play-record-a-folder", ["play", "--record", "data"], "Invalid value for '--record': file 'data' is a directory."),
    ("play-record-under-a-file", ["play", "--record", "notes.txt/me.jsonl"],
     "--record notes.txt/me.jsonl: notes.txt is a file, not a folder"),
    ("play-params-missing", ["play", "--params", "nowhere.yaml"], "params: nowhere.yaml not found"),
    ("bench-env-steps-0", ["bench", "env", "--steps", "0"], "Invalid value for '--steps': Input should be greater than or equal to 1"),
    ("bench-env-episodes-negative", ["bench", "env", "--episodes", "-1"],
     "Invalid value for '--episodes': Input should be greater than or equal to 1"),
    ("bench-expert-episodes-0", ["bench", "expert", "--episodes", "0"],
     "Invalid value for '--episodes': Input should be greater than or equal to 1"),
    ("bench-expert-seed-negative", ["bench", "expert", "--first-seed", "-1"],
     "Invalid value for '--first-seed': Input should be greater than or equal to 0"),
    ("bench-expert-goal-unknown", ["bench", "expert", "--goal", "diamonds"], "unknown goal 'diamonds'; valid goals: all, " + GOALS.split("all, ", 1)[1]),
    ("bench-survival-retire-without-home", ["bench", "survival", "--retire"],
     "Invalid value for --retire: --retire needs --home (a home to retire to)"),
    ("bench-survival-ripe-wait-without-commute", ["bench", "survival", "--ripe-wait"],
     "Invalid value for --ripe-wait: --ripe-wait needs --commute (it keeps a commuter at home)"),
    ("bench-survival-goal-unknown", ["bench", "survival", "--goal", "diamonds"],
     "unknown goal 'diamonds'; valid goals: all, " + GOALS.split("all, ", 1)[1]),
    ("bench-cedar-twin-root-not-empty", ["bench", "cedar-twin", "--root", "."],
     "Invalid value for --root: . is not empty: the twin must start from no cache"),
    ("bench-cache-entries-0", ["bench", "cache", "--entries", "0"],
     "Invalid value for '--entries': Input should be greater than or equal to 1"),
    ("bench-logic-laws-0", ["bench", "logic", "--laws", "0"], "Invalid value for '--laws': Input should be greater than or equal to 1"),
    ("bench-learning-votes-even", ["bench", "learning", "--votes", "4"],
     "Invalid value for '--votes': must be odd and >= 1 (a majority vote never ties), got 4"),
    ("bench-learning-states-0", ["bench", "learning", "--states", "0"],
     "Invalid value for '--states': Input should be greater than or equal to 1"),
    ("stub-server-port-too-high", ["llm", "stub-server", "--port", "70000"],
     "Invalid value for '--port': Input should be less than or equal to 65535"),
]


@pytest.mark.parametrize("args,expected", [c[1:] for c in ARGS], ids=[c[0] for c in ARGS])
def test_bad_arguments(at_project, args, expected):
    line = check_bad_input(args, at_project)
    assert line == "error: " + expected


TRACES = [
    ("unknown-atom", [["has_wod"]],
     "{file}: step 1: unknown atom 'has_wod' (not one of the atoms of Crafter); did you mean has_wood, has_4_wood, "
     "has_3_wood?"),
    ("numbers", [[1]], '{file}: a trace is a JSON list of lists of atoms (names), e.g. [["s"], ["a"]]'),
    ("empty", [], "{file}: the trace has no step"),
    ("unknown-action-late", [["has_wood"], ["collect_wod"]],
     "{file}: step 2: unknown atom 'collect_wod' (not one of the atoms of Crafter); did you mean collect_wood, collect_iron, collect_coal?"),
]


@pytest.mark.parametrize("trace,expected", [c[1:] for c in TRACES], ids=[c[0] for c in TRACES])
def test_bad_traces_for_laws_check(at_project, tmp_path, trace, expected):
    laws = tmp_path / "hard.yaml"
    assert invoke(["laws", "crafter", laws]).exit_code == 0
    bad = tmp_path / "trace.json"
    bad.write_text(json.dumps(trace))
    line = check_bad_input(["laws", "check", laws, "--trace", bad], at_project)
    assert line == "error: " + expected.replace("{file}", str(bad))


def test_stub_server_on_a_port_in_use(at_project):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = check_bad_input(["llm", "stub-server", "--port", port], at_project)
    assert line == f"error: cannot serve on 127.0.0.1:{port}: Address already in use"


# -- demonstrations on disk: the stages that read them (`regula dive` reads them first here) ----

def _lines(path):
    return path.read_text().splitlines(keepends=True)


def _rewrite_header(path, **changes):
    lines = _lines(path)
    head = {**json.loads(lines[0]), **changes}
    path.write_text(json.dumps({k: v for k, v in head.items() if v is not None}, sort_keys=True) + "\n"
                    + "".join(lines[1:]))


DAMAGE = [
    ("truncated", lambda f: f.write_text("".join(_lines(f)[:-1])),
     "{file}: truncated (no summary line after line {steps})"),
    ("torn-last-line", lambda f: f.write_text("".join(_lines(f)[:-1]) + _lines(f)[-1][:20]),
     "{file}:{last}: not valid JSON (Unterminated string starting at)"),
    ("empty", lambda f: f.write_text(""), "{file}: empty file"),
    ("binary", lambda f: f.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe"),
     "{file}: not UTF-8 text (an episode file is JSON lines)"),
    ("no-header", lambda f: f.write_text("".join(_lines(f)[1:])), "{file}:1: expected the episode header, got 'step'"),
    ("line-after-summary", lambda f: f.write_text("".join(_lines(f) + _lines(f)[1:2])),
     "{file}:{after}: a 'step' line after the summary line"),
    ("older-format", lambda f: _rewrite_header(f, format=1),
     "{file}:1: episode format 1, this version reads format 3; rerun the stage that wrote it"),
    ("header-without-inputs", lambda f: _rewrite_header(f, inputs=None), "{file}:1: the episode header lacks inputs"),
    ("record-not-an-object", lambda f: f.write_text("".join(_lines(f)[:1]) + "[1, 2]\n" + "".join(_lines(f)[1:])),
     "{file}:2: unknown record type None"),
    ("unknown-record-type", lambda f: f.write_text("".join(_lines(f)[:1]) + '{"type": "note"}\n' + "".join(_lines(f)[1:])),
     "{file}:2: unknown record type 'note'"),
    ("a-folder", lambda f: (f.unlink(), f.mkdir()), "{file}: cannot read it (Is a directory)"),
]


@pytest.mark.parametrize("damage,expected", [c[1:] for c in DAMAGE], ids=[c[0] for c in DAMAGE])
def test_damaged_demonstrations(project, tmp_path, damage, expected):
    root = tmp_path / "project"
    shutil.copytree(project, root)
    episode = root / "data" / "demos" / "episode_00001.jsonl"
    n = len(_lines(episode))
    damage(episode)
    line = check_bad_input(["dive", "--params", root / "params.yaml", "--root", root], root)
    want = expected.format(file=episode, steps=n - 1, last=n, after=n + 1)
    assert line == "error: " + want


@pytest.mark.parametrize("command", [["dive"], ["ltlcrit", "--actor", "random"]])
def test_no_demonstrations(project, tmp_path, command):
    """Stops before any episode is played (LTLCrit's expert baseline, DiVE's exploration)."""
    root = tmp_path / "project"
    shutil.copytree(project, root)
    shutil.rmtree(root / "data" / "demos")
    line = check_bad_input([*command, "--params", root / "params.yaml", "--root", root], root)
    assert line == f"error: {root / 'data' / 'demos'}: no demonstrations; run the demos stage first (dvc repro demos)"


@pytest.mark.parametrize("content,expected", [
    ("{", "not a stage record (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"),
    ("[1, 2]", "not a stage record (a JSON object)"),
    ("\x00\xff", "not a stage record ('utf-8' codec can't decode byte 0xff in position 1: invalid start byte)")])
def test_report_on_a_damaged_stage_record(project, tmp_path, content, expected):
    root = tmp_path / "project"
    shutil.copytree(project, root)
    record = root / "metrics" / "demos_detail.json"
    record.write_bytes(content.encode("latin-1"))
    line = check_bad_input(["report", "--root", root], root)
    assert line == f"error: {record}: {expected}; rerun the stage (dvc repro -f demos)"


# -- `regula demos` never replaces or deletes what other params wrote, unless --force -----------

OVERWRITE = "written with other params; pass --force to overwrite, or --out DIR and --metrics DIR to write elsewhere"
METRICS = "metrics/demos.json, metrics/demos_detail.json, metrics/demos_episodes.csv and 1 more"


@pytest.mark.parametrize("args,expected", [
    (["--episodes", "1"], "data/demos/episode_00001.jsonl, metrics/demos.json, metrics/demos_detail.json and 2 more"),  # fewer
    (["--episodes", "1", "--resume"], "data/demos/episode_00001.jsonl, metrics/demos.json, metrics/demos_detail.json and 2 more"),
    (["--episodes", "3"], METRICS),  # more episodes: the metrics describe the first two
    (["--seed", "1"], "data/demos/episode_00000.jsonl, metrics/demos.json, metrics/demos_detail.json and 2 more"),  # other seeds
    (["--goal", "collect_diamond"], "data/demos/episode_00000.jsonl, data/demos/episode_00001.jsonl, metrics/demos.json and 3 more"),
    (["--out", "elsewhere"], METRICS),  # new episodes: the metrics there describe others
], ids=["fewer-episodes", "fewer-episodes-resumed", "more-episodes", "other-seeds", "other-goal",
        "new-folder-old-metrics"])
def test_demos_refuses_to_overwrite(at_project, args, expected):
    line = check_bad_input(["demos", *args], at_project)
    assert line == f"error: this run would replace or delete {expected}, {OVERWRITE}"
    assert not (at_project / "elsewhere").exists()


def test_demos_refuses_to_replace_a_damaged_episode(project, tmp_path, monkeypatch):
    root = tmp_path / "project"
    shutil.copytree(project, root)
    monkeypatch.chdir(root)
    episode = root / "data" / "demos" / "episode_00000.jsonl"
    episode.write_text("".join(_lines(episode)[:-1]))  # no summary line
    line = check_bad_input(["demos"], root)
    assert line == f"error: this run would replace or delete data/demos/episode_00000.jsonl, {OVERWRITE}"
