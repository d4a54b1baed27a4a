"""The simulation_interfaces state machine, result codes and reset scopes (no ROS); the constants are checked
against the built package in test/ros/test_sim_services.py."""
import pytest

from cond_ros.cosim import simulation_control as c


@pytest.mark.parametrize("current, target, code, action", [
    (c.STATE_PLAYING, c.STATE_PLAYING, c.ALREADY_IN_TARGET_STATE, None),
    (c.STATE_PAUSED, c.STATE_PAUSED, c.ALREADY_IN_TARGET_STATE, None),
    (c.STATE_STOPPED, c.STATE_STOPPED, c.ALREADY_IN_TARGET_STATE, None),
    (c.STATE_PAUSED, c.STATE_PLAYING, c.RESULT_OK, "play"),
    (c.STATE_STOPPED, c.STATE_PLAYING, c.RESULT_OK, "play"),
    (c.STATE_PLAYING, c.STATE_PAUSED, c.RESULT_OK, "pause"),
    (c.STATE_STOPPED, c.STATE_PAUSED, c.INCORRECT_TRANSITION, None),
    (c.STATE_PLAYING, c.STATE_STOPPED, c.RESULT_OK, "stop"),
    (c.STATE_PAUSED, c.STATE_STOPPED, c.RESULT_OK, "stop"),
    (c.STATE_PLAYING, c.STATE_QUITTING, c.RESULT_FEATURE_UNSUPPORTED, None),
    (c.STATE_PAUSED, c.STATE_NO_WORLD, c.INCORRECT_TRANSITION, None),
    (c.STATE_PAUSED, c.STATE_LOADING_WORLD, c.INCORRECT_TRANSITION, None),
    (c.STATE_PAUSED, 42, c.INCORRECT_TRANSITION, None),
])
def test_transitions(current, target, code, action):
    decision = c.transition(current, target)
    assert (decision.code, decision.action) == (code, action)
    assert (decision.message == "") == (code == c.RESULT_OK)


def test_states_and_steps():
    assert c.current_state(paused=True, stopped=True) == c.STATE_STOPPED
    assert c.current_state(paused=True, stopped=False) == c.STATE_PAUSED
    assert c.current_state(paused=False, stopped=False) == c.STATE_PLAYING
    assert c.step_decision(c.STATE_PLAYING, 1).code == c.RESULT_INCORRECT_STATE
    assert c.step_decision(c.STATE_PAUSED, 0).code == c.RESULT_OPERATION_FAILED
    assert c.step_decision(c.STATE_PAUSED, 5).code == c.RESULT_OK
    assert c.step_decision(c.STATE_STOPPED, 1).code == c.RESULT_OK


@pytest.mark.parametrize("scope, code, reset_time, reset_state", [
    (c.SCOPE_DEFAULT, c.RESULT_OK, True, True),
    (c.SCOPE_ALL, c.RESULT_OK, True, True),
    (c.SCOPE_TIME, c.RESULT_OK, True, False),
    (c.SCOPE_STATE, c.RESULT_OK, False, True),
    (c.SCOPE_TIME | c.SCOPE_STATE | c.SCOPE_SPAWNED, c.RESULT_OK, True, True),
    (c.SCOPE_SPAWNED, c.RESULT_FEATURE_UNSUPPORTED, False, False),
    (8, c.RESULT_OPERATION_FAILED, False, False),
])
def test_reset_scopes(scope, code, reset_time, reset_state):
    decision, time, state = c.reset_decision(scope)
    assert (decision.code, time, state) == (code, reset_time, reset_state)


def test_features_are_what_is_served():
    """Reset (time, state), state getting and setting with pause, single and multiple steps, the action; no
    spawning, entities, worlds or SCOPE_SPAWNED."""
    assert set(c.FEATURES) == {20, 21, 22, 24, 25, 26, 31, 32, 33}
