"""Grid search helpers on the seen map."""
import numpy as np

from regula.envs.crafter.navigation import reachable


def flood(passable, start):
    """The plain breadth-first fill `reachable` must agree with."""
    out = np.zeros_like(passable, dtype=bool)
    out[start] = True
    todo = [start]
    while todo:
        x, y = todo.pop()
        for nx, ny in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if 0 <= nx < passable.shape[0] and 0 <= ny < passable.shape[1] and passable[nx, ny] and not out[nx, ny]:
                out[nx, ny] = True
                todo.append((nx, ny))
    return out


def test_reachable_is_the_4_connected_component_of_the_start():
    rng = np.random.default_rng(0)
    for shape in ((64, 64), (7, 5), (1, 9)):
        for density in (0.45, 0.6, 0.8):
            passable = rng.random(shape) < density
            for start in [(0, 0), (shape[0] - 1, shape[1] - 1), (shape[0] // 2, shape[1] // 2)]:
                assert (reachable(passable, start) == flood(passable, start)).all()


def test_reachable_includes_a_blocked_start_and_never_wraps_round_the_edges():
    passable = np.zeros((4, 4), bool)
    passable[0, 1] = passable[3, 0] = passable[0, 3] = True  # (3, 0) and (0, 3) touch (0, 0) only across an edge
    assert sorted(map(tuple, np.argwhere(reachable(passable, (0, 0))).tolist())) == [(0, 0), (0, 1)]


def test_reachable_answers_again_from_a_copy():
    passable = np.ones((3, 3), bool)
    first = reachable(passable, (1, 1))
    first[:] = False  # a caller's change stays its own
    assert reachable(passable, (1, 1)).all()
    passable[0, :] = False
    assert not reachable(passable, (1, 1))[0].any()  # a changed map is searched again
