"""The simulation_interfaces standard (v2.1.0) as plain decisions (no ROS import): states, transitions,
result codes and reset scopes. ``ros/sim_services`` turns them into the package's services and action;
the constants here carry the standard's values, and ``test/ros/test_sim_services.py`` checks them
against the built package.

States: STOPPED (paused and reset: nothing stepped since), PLAYING, PAUSED. Transitions, from the
SimulationState and SetSimulationState definitions:

- to the current state: ALREADY_IN_TARGET_STATE;
- to PLAYING from STOPPED or PAUSED: run;
- to PAUSED from PLAYING: pause;
- to PAUSED from STOPPED: INCORRECT_TRANSITION (the service's own example);
- to STOPPED: pause, then reset the state (the clock stays monotonic, as with every reset without the
  TIME scope);
- to QUITTING: FEATURE_UNSUPPORTED (stop the node instead);
- to NO_WORLD or LOADING_WORLD, or an unknown value: INCORRECT_TRANSITION.

StepSimulation and SimulateSteps need a paused (or stopped) simulation, else INCORRECT_STATE (Result's
own definition of it). They need at least one step, else OPERATION_FAILED. ResetSimulation supports the
TIME and STATE scopes and their union (DEFAULT and ALL included: nothing is ever spawned, so there is
nothing to de-spawn); SPAWNED alone is FEATURE_UNSUPPORTED.
"""
from __future__ import annotations

import dataclasses

RESULT_FEATURE_UNSUPPORTED, RESULT_OK, RESULT_NOT_FOUND, RESULT_INCORRECT_STATE, RESULT_OPERATION_FAILED = range(5)
ALREADY_IN_TARGET_STATE, STATE_TRANSITION_ERROR, INCORRECT_TRANSITION = 101, 102, 103  # SetSimulationState's own
STATE_STOPPED, STATE_PLAYING, STATE_PAUSED, STATE_QUITTING, STATE_NO_WORLD, STATE_LOADING_WORLD = range(6)
SCOPE_DEFAULT, SCOPE_TIME, SCOPE_STATE, SCOPE_SPAWNED, SCOPE_ALL = 0, 1, 2, 4, 255
STATE_NAMES = {STATE_STOPPED: "STOPPED", STATE_PLAYING: "PLAYING", STATE_PAUSED: "PAUSED",
               STATE_QUITTING: "QUITTING", STATE_NO_WORLD: "NO_WORLD", STATE_LOADING_WORLD: "LOADING_WORLD"}

# SimulatorFeatures values of what the node does: exactly these
SIMULATION_RESET, SIMULATION_RESET_TIME, SIMULATION_RESET_STATE = 20, 21, 22
SIMULATION_STATE_GETTING, SIMULATION_STATE_SETTING, SIMULATION_STATE_PAUSE = 24, 25, 26
STEP_SIMULATION_SINGLE, STEP_SIMULATION_MULTIPLE, STEP_SIMULATION_ACTION = 31, 32, 33
FEATURES = (SIMULATION_RESET, SIMULATION_RESET_TIME, SIMULATION_RESET_STATE, SIMULATION_STATE_GETTING,
            SIMULATION_STATE_SETTING, SIMULATION_STATE_PAUSE, STEP_SIMULATION_SINGLE, STEP_SIMULATION_MULTIPLE,
            STEP_SIMULATION_ACTION)


@dataclasses.dataclass(frozen=True)
class Decision:
    """What to answer (``code``, ``message``) and what to do: ``action`` one of None, "play", "pause", "stop"."""

    code: int
    message: str = ""
    action: str | None = None


def current_state(paused: bool, stopped: bool) -> int:
    return STATE_STOPPED if stopped else (STATE_PAUSED if paused else STATE_PLAYING)


def transition(current: int, target: int) -> Decision:
    """The decision for SetSimulationState(``target``) in state ``current`` (module docstring)."""
    name = STATE_NAMES.get(target, f"unknown state {target}")
    if target == current:
        return Decision(ALREADY_IN_TARGET_STATE, f"already {name}")
    if target == STATE_PLAYING:
        return Decision(RESULT_OK, "", "play")
    if target == STATE_PAUSED:
        if current == STATE_STOPPED:
            return Decision(INCORRECT_TRANSITION, "cannot pause a STOPPED simulation; play it or step it")
        return Decision(RESULT_OK, "", "pause")
    if target == STATE_STOPPED:
        return Decision(RESULT_OK, "", "stop")
    if target == STATE_QUITTING:
        return Decision(RESULT_FEATURE_UNSUPPORTED, "quitting is not offered; stop the node instead")
    return Decision(INCORRECT_TRANSITION, f"{name} cannot be set")


def step_decision(current: int, steps: int) -> Decision:
    """Whether StepSimulation / SimulateSteps may run ``steps`` steps in state ``current``."""
    if current == STATE_PLAYING:
        return Decision(RESULT_INCORRECT_STATE, "the simulation is playing; pause it first (SetSimulationState "
                                                "STATE_PAUSED)")
    if steps < 1:
        return Decision(RESULT_OPERATION_FAILED, f"steps must be at least 1, got {steps}")
    return Decision(RESULT_OK, "", "step")


def reset_decision(scope: int) -> tuple[Decision, bool, bool]:
    """(decision, reset the time, reset the state) for ResetSimulation(``scope``)."""
    if scope in (SCOPE_DEFAULT, SCOPE_ALL):
        return Decision(RESULT_OK, "", "reset"), True, True
    if scope & ~(SCOPE_TIME | SCOPE_STATE | SCOPE_SPAWNED):
        return Decision(RESULT_OPERATION_FAILED, f"unknown scope bits in {scope}"), False, False
    if not scope & (SCOPE_TIME | SCOPE_STATE):
        return Decision(RESULT_FEATURE_UNSUPPORTED, "SCOPE_SPAWNED: nothing is spawned in this simulator"), False, False
    return Decision(RESULT_OK, "", "reset"), bool(scope & SCOPE_TIME), bool(scope & SCOPE_STATE)
