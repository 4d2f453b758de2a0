"""One episode loop for every agent: end reasons, their order, and what the agent is told."""
from dataclasses import dataclass, field

from regula import envs
from regula.agents import BUDGET, DIED, GOAL, Agent, Budget, Decision, run_episode
from stage_configs import expert_config


@dataclass
class Step:
    skill: str
    steps: int = 1


@dataclass
class FakeEnv:
    """Each skill costs `cost` primitive steps; `unlocks[k]` is unlocked by the k-th skill."""

    cost: int = 1
    unlocks: dict = field(default_factory=dict)
    die_after: int | None = None
    steps: int = 0
    events: list = field(default_factory=list)
    unlocked: list = field(default_factory=list)
    interrupts: list = field(default_factory=list)

    @property
    def done(self):
        return self.die_after is not None and len(self.events) >= self.die_after

    @property
    def dead(self):
        return self.done

    def run_skill(self, skill, until=None, interrupt=None):
        self.interrupts.append(interrupt)
        self.steps += self.cost
        step = Step(skill, self.cost)
        self.events.append(step)
        if len(self.events) in self.unlocks:
            self.unlocked.append(self.unlocks[len(self.events)])
        return step


class Scripted:
    def __init__(self, skills, stop_after=None):
        self.skills, self.stop_after, self.seen = list(skills), stop_after, []

    def start(self, env):
        self.seen.append("start")

    def decide(self, env):
        if not self.skills:
            return Decision(None, end="no plan")
        return Decision(self.skills.pop(0), interrupt="danger")

    def observe(self, env, decision, step):
        self.seen.append((decision.skill, step.skill))
        if self.stop_after is not None and len(env.events) >= self.stop_after:
            return "stuck: enough"
        return None


def test_the_agent_is_started_told_each_step_and_its_interrupt_reaches_the_env():
    env, agent = FakeEnv(), Scripted(["a", "b"])
    assert isinstance(agent, Agent)
    assert run_episode(env, agent, Budget(100, 100)) == "no plan"
    assert agent.seen == ["start", ("a", "a"), ("b", "b")]
    assert env.interrupts == ["danger", "danger"]


def test_end_reasons_in_order_environment_goal_budget_agent():
    assert run_episode(FakeEnv(die_after=2), Scripted("abcd"), Budget(100, 100, "x")) == DIED
    # the goal reached on the step that also spends the budget counts as reached
    assert run_episode(FakeEnv(unlocks={3: "x"}), Scripted("abcd"), Budget(100, 3, "x")) == GOAL
    assert run_episode(FakeEnv(unlocks={3: "y"}), Scripted("abcd"), Budget(100, 3, "x")) == BUDGET
    assert run_episode(FakeEnv(cost=5), Scripted("abcd"), Budget(10, 100)) == BUDGET
    assert run_episode(FakeEnv(), Scripted("abcd", stop_after=2), Budget(100, 100)) == "stuck: enough"


def test_the_scripted_expert_is_an_agent_and_plays_through_the_loop():
    crafter = envs.get("crafter")
    world = crafter.make(0)
    expert = crafter.Expert(world, expert_config(goal="collect_wood", max_steps=300))
    assert isinstance(expert, Agent)
    summary = crafter.play_episode(world, expert)
    assert summary.success and summary.end == GOAL and "collect_wood" in world.unlocked
    assert summary.skills == len(world.events) >= 1
