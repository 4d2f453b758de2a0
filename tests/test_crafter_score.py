"""Crafter's score (regula.metrics): the formula, pooled over episodes as the papers report it,
the per-episode mean beside it, and the pooled score's bootstrap interval."""
import math

import numpy as np
import pytest

from regula import metrics

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
