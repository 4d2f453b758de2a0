"""Crafter's score (regula.metrics): the formula, pooled over episodes as the papers report it,
the per-episode mean beside it, and the pooled score's bootstrap interval."""
import math

import numpy as np
import pytest

from regula import episodes as episodes_mod, metrics

NAMES = metrics.ACHIEVEMENTS


def test_the_formula_on_hand_computed_rates():
    # 22 achievements: one at 100%, one at 50%, the rest 0: exp((ln 101 + ln 51) / 22) - 1
    rates = [1.0, 0.5] + [0.0] * 20
    assert metrics.crafter_score(rates) == pytest.approx(math.exp((math.log(101) + math.log(51)) / 22) - 1, abs=1e-12)
    assert round(metrics.crafter_score(rates), 4) == 0.4748
    assert metrics.crafter_score([0.0] * 22) == 0.0 and metrics.crafter_score([1.0] * 22) == pytest.approx(100.0)
    # rows of rates give one score each, the same as one at a time
    rows = np.array([rates, [1.0] * 22])
    assert metrics.crafter_score(rows).tolist() == [metrics.crafter_score(rates), metrics.crafter_score([1.0] * 22)]


def test_pooled_is_the_score_of_the_rates_over_all_episodes_not_the_mean_of_episode_scores():
    # episode 1 unlocks the first two achievements, episode 2 the first only: rates 100% and 50%
    hits = metrics.unlocked([NAMES[:2], NAMES[:1]])
    assert hits.shape == (2, 22) and hits.sum() == 3
    assert metrics.pooled_score(hits) == metrics.crafter_score([1.0, 0.5] + [0.0] * 20)
    per_episode = metrics.per_episode_scores(hits)
    assert per_episode == pytest.approx([101 ** (2 / 22) - 1, 101 ** (1 / 22) - 1], abs=1e-12)
    assert round(metrics.pooled_score(hits), 4) == 0.4748 > round(float(per_episode.mean()), 4) == 0.3773
    assert metrics.unlocked([]).shape == (0, 22)


def test_the_interval_is_a_seeded_percentile_bootstrap_over_episodes():
    hits = metrics.unlocked([NAMES[:k] for k in (0, 2, 4, 6, 8, 10, 12, 14)])
    lo, hi = metrics.pooled_score_interval(hits, 1000, 0)
    assert lo < metrics.pooled_score(hits) < hi
    assert metrics.pooled_score_interval(hits, 1000, 0) == (lo, hi)  # seeded: the same draw
    assert metrics.pooled_score_interval(hits, 1000, 1) != (lo, hi)
    # every episode alike: each resample is that episode, the interval a point
    same = metrics.unlocked([NAMES[:3]] * 5)
    assert metrics.pooled_score_interval(same, 50, 0) == pytest.approx((101 ** (3 / 22) - 1,) * 2)


def test_groups_of_consecutive_episodes_each_get_their_pooled_score():
    # four episodes in world order: two groups, [0 and 2 achievements] and [4 and 4]
    hits = metrics.unlocked([NAMES[:0], NAMES[:2], NAMES[:4], NAMES[:4]])
    groups = metrics.group_scores(hits, 2)
    # group 1: two achievements at 50%; group 2: four at 100%
    assert groups == pytest.approx([51 ** (2 / 22) - 1, 101 ** (4 / 22) - 1], abs=1e-12)
    assert metrics.group_scores(hits, 1) == pytest.approx([metrics.pooled_score(hits)])
    assert metrics.group_scores(metrics.unlocked([NAMES[:1]] * 5), 2).tolist() == [101 ** (1 / 22) - 1] * 2  # 3 and 2
    with pytest.raises(ValueError, match="^5 groups of 4 episodes: need 1 to 4$"):
        metrics.group_scores(hits, 5)


def test_progression_is_balrogs_share_of_the_22_achievements_per_episode():
    hits = metrics.unlocked([NAMES[:0], NAMES[:11], NAMES[:22]])
    assert metrics.progression(hits).tolist() == [0.0, 0.5, 1.0]
    lo, hi = metrics.progression_interval(hits, 500, 0)
    assert 0.0 <= lo < 0.5 < hi <= 1.0 and metrics.progression_interval(hits, 500, 0) == (lo, hi)
    assert metrics.progression_interval(metrics.unlocked([NAMES[:11]] * 4), 50, 0) == (0.5, 0.5)


def test_the_score_record_names_every_statistic_rounded():
    hits = metrics.unlocked([NAMES[:0], NAMES[:2], NAMES[:4], NAMES[:4]])
    r = metrics.score_record(hits, 200, 0, 2)
    assert r["score"] == round(metrics.pooled_score(hits), 2)
    assert r["score_groups"] == [0.43, 1.31]  # 51^(2/22) - 1 and 101^(4/22) - 1
    assert (r["score_groups_mean"], r["score_groups_std"]) == (0.87, 0.44)  # numpy's std, ddof 0
    assert r["progression"] == round(10 / 88, 4) == 0.1136  # (0 + 2 + 4 + 4) / 22 / 4
    assert r["progression_std"] == 0.0754  # of 0, 2/22, 4/22, 4/22, ddof 0
    assert set(r) == {"score", "score_interval", "score_groups", "score_groups_mean", "score_groups_std",
                      "score_per_episode", "score_per_episode_std", "progression", "progression_std",
                      "progression_interval"}


def _episode(*steps):
    return {"steps": [{"by": by, "unlocked": list(got)} for by, got in steps]}


def test_attribution_splits_unlocks_by_who_chose_the_step():
    eps = [_episode(("dive", ["collect_wood"]), ("survival", ["collect_drink", "eat_cow"]), ("dive", [])),
           _episode(("survival", ["collect_wood"]), ("dive", ["place_table"]))]
    attr = episodes_mod.attribution(eps)
    assert attr == {"unlocked": {"collect_drink": 1, "collect_wood": 2, "eat_cow": 1, "place_table": 1},
                    "own": {"collect_wood": 1, "place_table": 1}}
    assert episodes_mod.attribution(eps, survival="dive")["own"] == {"collect_drink": 1, "collect_wood": 1,
                                                                         "eat_cow": 1}
    assert episodes_mod.add_attribution([attr, attr]) == {k: {a: 2 * n for a, n in v.items()} for k, v in attr.items()}
    s = metrics.attributed_scores(attr, 2)
    assert (s["unlocks"], s["by_survival"]) == (5, 3)
    # all: collect_wood 100%, three at 50%; own: two at 50%
    assert s["score"] == round(math.exp((math.log(101) + 3 * math.log(51)) / 22) - 1, 2)
    assert s["own_score"] == round(51 ** (2 / 22) - 1, 2)
    # The stages store them beside every attribution with its episodes, at any depth.
    nested = metrics.with_attributed_scores({"episodes": 9, "runs": [{"episodes": 2, "attribution": attr}],
                                             "expert": {"attribution": attr}})
    assert nested["runs"][0]["attributed"] == s and "attributed" not in nested["expert"] and "attributed" not in nested
