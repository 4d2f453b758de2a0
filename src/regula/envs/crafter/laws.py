"""Crafter's preconditions as hard laws, derived from data.yaml.

`precondition_laws` is the inventory part; `affordance_laws` the map part (a skill walks to
its target or station, so one must be on the explored map), together the analogue of
LTLCrit's hand-written list (its appendix A.3.1), e.g. "cannot mine coal unless coal is nearby".

`G(!(has_wood_pickaxe) -> !collect_stone)`: a skill whose recipe needs items is never taken
without them. Needs that the configured propositions cannot express (no `has_2_wood` when
the thresholds lack 2) are left out and listed, rather than approximated.
"""
from __future__ import annotations

from regula.logic.laws import Law

from .rules import RULES
from .skills import skill_names
from .symbols import MAP_MATERIALS, SymbolConfig, proposition_names


def crafter_atoms(symbols: SymbolConfig | None = None) -> tuple[list[str], list[str]]:
    """(state propositions, action atoms): laws over Crafter may use both."""
    return proposition_names(symbols or SymbolConfig()), skill_names()


def precondition_laws(symbols: SymbolConfig | None = None) -> tuple[list[Law], list[str]]:
    symbols = symbols or SymbolConfig()
    laws, skipped = [], []
    for recipe in RULES.recipes.values():
        needs = {**recipe.require, **recipe.uses}
        if not needs:
            continue
        props = []
        for item, amount in sorted(needs.items()):
            if item in RULES.tools and amount == 1:
                props.append(f"has_{item}")
            elif amount in [int(v) for v in symbols.thresholds.get(item, [])]:
                props.append(symbols.has_name(item, amount))
            else:
                props = None
                break
        if props is None:
            skipped.append(recipe.skill)
            continue
        have = " & ".join(props)
        need_text = ", ".join(f"{n} {k}" for k, n in sorted(needs.items()))
        laws.append(Law(formula=f"G(!({have}) -> !{recipe.skill})" if len(props) > 1
                        else f"G(!{have} -> !{recipe.skill})",
                        kind="hard", source="hand", name=f"needs_for_{recipe.skill}",
                        explanation=f"{recipe.skill} needs {need_text} (Crafter's data.yaml)"))
    return laws, skipped


def affordance_laws() -> list[Law]:
    """A skill cannot walk to what the agent has never seen: `G(!tree_on_map -> !collect_wood)`."""
    laws = []
    for recipe in RULES.recipes.values():
        needs = ([recipe.target] if recipe.kind == "collect" else []) + list(recipe.nearby)
        needs = sorted(n for n in needs if n in MAP_MATERIALS)
        if not needs:
            continue
        have = " & ".join(f"{n}_on_map" for n in needs)
        have = f"!({have})" if len(needs) > 1 else f"!{have}"
        laws.append(Law(formula=f"G({have} -> !{recipe.skill})", kind="hard", source="hand",
                        name=f"map_for_{recipe.skill}",
                        explanation=f"{recipe.skill} walks to {' and '.join(needs)}, so the agent must "
                                    f"have seen {'them' if len(needs) > 1 else 'one'}"))
    return laws


def hard_laws(symbols: SymbolConfig | None = None) -> list[Law]:
    """Every hand-derived hard law: inventory preconditions, then map affordances."""
    return precondition_laws(symbols)[0] + affordance_laws()
