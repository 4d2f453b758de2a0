"""`regula bench env`: what it measures (its numbers are printed, never asserted)."""
import sys

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


def test_logic_bench_reports_the_fastest_warm_pass(monkeypatch):
    """A warm pass of a few milliseconds is moved by one preemption: the fastest of the passes
    is the figure. A clock that makes every warm pass but the third last 10x as long."""
    from regula.logic.monitor import NativeMonitor
    clock = {"now": 0.0, "step": 1e-6, "passes": 0}
    real_reset = NativeMonitor.reset

    def reset(self):  # each warm pass resets every monitor first: count passes by the first law's reset
        if self is monitors[0] and getattr(self, "steps", 0):
            clock["passes"] += 1
            clock["step"] = 1e-6 if clock["passes"] == 3 else 1e-5
        real_reset(self)

    monitors = []
    real_init = NativeMonitor.__init__
    monkeypatch.setattr(NativeMonitor, "__init__",
                        lambda self, *a, **k: (monitors.append(self), real_init(self, *a, **k))[1])
    monkeypatch.setattr(NativeMonitor, "reset", reset)
    real_step = NativeMonitor.step

    def step(self, letter):
        clock["now"] += clock["step"]
        return real_step(self, letter)

    monkeypatch.setattr(NativeMonitor, "step", step)
    monkeypatch.setattr(bench.time, "perf_counter", lambda: clock["now"])
    monkeypatch.setattr(sys.modules["regula.logic.monitor"], "spot_available", lambda: False)
    out = bench.bench_logic(steps=30, n_laws=2)
    assert clock["passes"] == bench.WARM_PASSES == out["warm_passes"] == 5
    assert abs(out["native_warm_us_per_law_step"] - 1.0) < 1e-6  # the third pass's 1 µs, not the others' 10
