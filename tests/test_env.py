"""The Crafter adapter: determinism, image-free equivalence, rules read from data.yaml."""
import crafter
import crafter.constants as C
import numpy as np
import pytest

from regula.envs.crafter import env as env_module
from regula.envs.crafter.env import DeterministicCrafter
from regula.envs.crafter.rules import RULES


def trajectory(seed, actions, render, step=DeterministicCrafter.step, reset=DeterministicCrafter.reset):
    env = DeterministicCrafter(seed=seed, render=render)
    reset(env)
    out = []
    for a in actions:
        # Keep the player alive so the run reaches night and many creature-balancing passes.
        for stat in ("health", "food", "drink", "energy"):
            env.player.inventory[stat] = 9
        _, reward, done, info = step(env, int(a))
        objs = sorted((type(o).__name__, int(o.pos[0]), int(o.pos[1]), int(o.health))
                      for o in env.world.objects)
        out.append((reward, done, tuple(sorted(info["inventory"].items())),
                    tuple(int(v) for v in info["player_pos"]), tuple(objs),
                    env.world._mat_map.tobytes()))
        if done:
            break
    return out


@pytest.fixture(scope="module")
def actions():
    # Mostly moves and `do` so the player lives through creature balancing and a night.
    rng = np.random.default_rng(7)
    return rng.choice([1, 2, 3, 4, 5, 0], size=800, p=[.2, .2, .2, .2, .1, .1])


def test_same_seed_same_run_step_for_step(actions):
    a = trajectory(3, actions, render=False)
    b = trajectory(3, actions, render=False)
    assert len(a) == 800
    for t, (x, y) in enumerate(zip(a, b)):
        assert x == y, f"runs diverge at step {t}"


def test_image_free_run_is_the_same_run(actions):
    # Rendering at night draws from the world RNG; the image-free mode must draw the same.
    with_images = trajectory(5, actions, render=True)
    without = trajectory(5, actions, render=False)
    assert with_images == without


def test_our_step_and_reset_are_crafters(actions):
    # DeterministicCrafter's step and reset are crafter.Env's with cheaper bookkeeping: the same game.
    ours = trajectory(5, actions, render=False)
    assert ours == trajectory(5, actions, render=False, step=crafter.Env.step, reset=crafter.Env.reset)


def test_a_kept_world_plays_as_the_generated_one(actions):
    env_module._generated.clear()
    generated = trajectory(4, actions[:300], render=False)
    assert list(env_module._generated) == [(4, 1, (64, 64))]
    for _ in range(2):  # copied back, and the kept copy untouched by play
        assert trajectory(4, actions[:300], render=False) == generated


def test_textures_are_read_once_and_draw_the_same_images(actions):
    # Every episode shares one texture set (crafter.Env reads the 56 PNGs anew each time), and
    # draws with it, day and night, the images a texture set of its own draws.
    ours, theirs = DeterministicCrafter(seed=6, render=True), DeterministicCrafter(seed=6, render=True)
    assert ours._textures is theirs._textures is DeterministicCrafter(seed=7, render=False)._textures
    assert crafter.engine.Textures is env_module._Textures  # crafter's own, outside the adapter
    own = env_module._Textures(C.root / "assets")
    assert own is not ours._textures
    theirs._textures = theirs._local_view._textures = theirs._item_view._textures = own
    assert np.array_equal(ours.reset(), theirs.reset())
    for t, a in enumerate(actions[:400]):
        for env in (ours, theirs):
            env.player.inventory["health"] = 9
        assert np.array_equal(ours.step(int(a))[0], theirs.step(int(a))[0]), f"images differ at step {t}"


def test_no_render_returns_no_image():
    env = DeterministicCrafter(seed=0, render=False)
    assert env.reset() is None
    assert DeterministicCrafter(seed=0, render=True).reset().shape == (64, 64, 3)


def test_recipes_come_from_data_yaml():
    assert RULES.recipe("collect_stone").require == C.collect["stone"]["require"]
    assert RULES.recipe("place_table").uses == C.place["table"]["uses"]
    assert RULES.recipe("make_iron_pickaxe").nearby == tuple(C.make["iron_pickaxe"]["nearby"])
    assert RULES.recipe("collect_wood").target == "tree"  # receive: {wood: 1} from tree
    assert set(RULES.stations) == {"table", "furnace"}
