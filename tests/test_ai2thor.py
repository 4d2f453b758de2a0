"""The AI2-THOR adapter on a recorded kitchen frame (ai2thor's own test data), read through
ai2thor's `Event`: propositions, letters as THOR action dicts, episodes on a recording."""
import copy

import pytest

from regula import envs
from regula.envs.ai2thor import frames, symbols
from regula.errors import RegulaError

THOR = envs.get("ai2thor")
KITCHEN = frames.load_metadata("kitchen")
FRIDGE = next(o for o in KITCHEN["objects"] if o["objectType"] == "Fridge")


def _after(change: dict, success=True, error="") -> dict:
    """The kitchen frame as THOR would return it after an action (derived from the recorded frame:
    the recorded objects with `change`'s fields set on the fridge)."""
    meta = copy.deepcopy(KITCHEN)
    for obj in meta["objects"]:
        if obj["objectId"] == FRIDGE["objectId"]:
            obj.update(change)
    meta.update(lastActionSuccess=success, errorMessage=error)
    return meta


def test_the_recorded_frame_is_a_real_kitchen_read_through_ai2thors_event():
    event = frames.event(KITCHEN)
    assert type(event).__module__ == "ai2thor.server"
    types = {o["objectType"] for o in event.metadata["objects"]}
    assert {"Toaster", "Bread", "Mug", "CoffeeMachine", "Fridge", "Plate", "Microwave", "Lettuce"} <= types
    assert isinstance(THOR, envs.EnvSpec) and "ai2thor" in envs.names()


def test_propositions_are_read_off_each_objects_metadata():
    names = THOR.proposition_names()
    assert {"visible_fridge", "open_fridge", "on_toaster", "holding_bread", "sliced_bread"} <= set(names)
    props = symbols.props(KITCHEN["objects"])
    assert sorted(props) == names
    assert props["open_fridge"] == bool(FRIDGE["isOpen"])
    assert props["visible_fridge"] == any(o["visible"] for o in KITCHEN["objects"] if o["objectType"] == "Fridge")
    lettuce = next(o for o in KITCHEN["objects"] if o["objectType"] == "Lettuce")
    for parent in lettuce["parentReceptacles"] or ():
        assert props[f"lettuce_in_{parent.split('|')[0].lower()}"] is True
    assert "holding_fridge" not in names  # a fridge is not pickupable


def test_a_letter_is_the_verbs_thor_action_on_an_object_of_its_type():
    assert symbols.action("open_fridge", KITCHEN["objects"]) == {"action": "OpenObject", "objectId": FRIDGE["objectId"]}
    bread = symbols.action("pickup_bread", KITCHEN["objects"])
    assert bread["action"] == "PickupObject" and bread["objectId"].startswith("Bread|")
    assert set(THOR.skill_names()) >= {"open_fridge", "pickup_bread", "toggleon_toaster", "put_plate"}
    with pytest.raises(symbols.UnknownLetter, match=r"^unknown letter 'grab_bread': a letter is <verb>_<type>, verbs pickup, put"):
        symbols.action("grab_bread", KITCHEN["objects"])
    with pytest.raises(symbols.UnknownLetter, match=r"no object of type 'fridge' in the frame affords PickupObject"):
        symbols.action("pickup_fridge", KITCHEN["objects"])


def test_an_episode_steps_a_recording_and_logs_thors_verdict():
    open_fridge = {"action": "OpenObject", "objectId": FRIDGE["objectId"]}
    recording = [(open_fridge, _after({"isOpen": True})),
                 ({"action": "CloseObject", "objectId": FRIDGE["objectId"]},
                  _after({"isOpen": True}, success=False, error="Fridge is stuck"))]
    ep = THOR.make(0, recorded="kitchen", recording=recording)
    assert isinstance(ep, envs.Environment)
    first = ep.run_skill("open_fridge")
    assert first.success and first.action == open_fridge and ep.props()["open_fridge"]
    second = ep.run_skill("close_fridge")
    assert not second.success and second.reason == "Fridge is stuck"
    assert second.cause == {"kind": "other", "thor_error": "Fridge is stuck"}
    missing = ep.run_skill("pickup_fridge")  # nothing sent: the recording would refuse it
    assert not missing.success and missing.action is None and missing.cause == {"kind": "not_seen", "thing": "fridge"}
    assert [e.to_json()["letter"] for e in ep.events] == ["open_fridge", "close_fridge", "pickup_fridge"]
    assert ep.steps == 3 and ep.text() == (
        "You see: cabinet, coffeemachine, countertop, cup, microwave, pan, papertowelroll, peppershaker, saltshaker, "
        "spatula, stoveburner. You hold: nothing.")


def test_the_recording_refuses_an_action_it_does_not_hold():
    ep = THOR.make(0, recorded="kitchen", recording=[({"action": "OpenObject", "objectId": FRIDGE["objectId"]},
                                                       _after({"isOpen": True}))])
    with pytest.raises(RegulaError, match=r"^the recording holds \{'action': 'OpenObject'"):
        ep.run_skill("pickup_bread")
    with pytest.raises(RegulaError, match=r"^no recorded AI2-THOR frame 'kitchn'; recorded: kitchen$"):
        THOR.make(0, recorded="kitchn")


def test_a_real_controller_that_cannot_start_says_what_it_needs(monkeypatch):
    import ai2thor.controller

    def no_build(**kwargs):
        raise RuntimeError("could not download the build")
    monkeypatch.setattr(ai2thor.controller, "Controller", no_build)
    with pytest.raises(RegulaError, match=r"^AI2-THOR could not start scene 'FloorPlan1': could not download the "
                                          r"build\. It needs its Unity build"):
        THOR.make(0, scene="FloorPlan1")
