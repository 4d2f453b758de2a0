"""`regula bench env`: what it measures (its numbers are printed, never asserted)."""
from regula import bench
from regula.envs.crafter import env as crafter_env


def test_the_expert_log_digest_is_the_same_from_a_generated_and_a_kept_world():
    crafter_env._generated.clear()
    generated = bench.expert_episodes(1, first_seed=6)
    assert (6, 1, (64, 64)) in crafter_env._generated
    kept = bench.expert_episodes(1, first_seed=6)  # the world copied back, not generated
    assert kept["log_sha256"] == generated["log_sha256"] and len(kept["log_sha256"]) == 16
    assert bench.expert_episodes(1, first_seed=7)["log_sha256"] != generated["log_sha256"]


def test_env_bench_steps_crafter_and_the_adapter_on_the_same_actions():
    out = bench.env_steps_per_second(steps=60)
    assert sorted(out) == ["adapter_over_crafter_env_image_free", "adapter_steps_per_s",
                           "crafter_env_image_free_steps_per_s", "crafter_env_steps_per_s", "reset_s",
                           "simulator_steps_per_s"]
    ratio = out["adapter_steps_per_s"] / out["crafter_env_image_free_steps_per_s"]
    assert out["adapter_over_crafter_env_image_free"] == ratio
