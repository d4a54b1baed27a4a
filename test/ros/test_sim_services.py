"""The standard simulation_interfaces of cond_sim, from another process, with the package that
``cond-ros build-interfaces --install`` builds (the README's test command runs it): every service and its
result codes, the SimulateSteps action with feedback and cancel, /clock across resets. The constants of
cond_ros.cosim.simulation_control are checked against the package's own."""
import pytest

rclpy = pytest.importorskip("rclpy")
si = pytest.importorskip("simulation_interfaces", reason="run `cond-ros build-interfaces --install` first")

from ros_harness import DT_NS, running_sim, stamp_ns  # noqa: E402
from simulation_interfaces.action import SimulateSteps  # noqa: E402
from simulation_interfaces.msg import Result, SimulationState, SimulatorFeatures  # noqa: E402
from simulation_interfaces.srv import (GetSimulationState, GetSimulatorFeatures, ResetSimulation,  # noqa: E402
                                       SetSimulationState, StepSimulation)

from cond_ros.cosim import simulation_control as control  # noqa: E402


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    with running_sim(tmp_path_factory.mktemp("sim_services"), start_paused=True) as (observer, process):
        # the paused node published its initial /joint_states (volatile) at its start, which may have come before
        # this observer was discovered: a reset, which changes nothing before a step, publishes it again
        from std_srvs.srv import Trigger
        assert observer.call(Trigger, "/cond_sim/reset").success
        assert observer.spin_until(lambda: observer.messages["joint_states"], 10)
        yield observer, process


def _call(observer, kind, name, **fields):
    return observer.call(kind, name, kind.Request(**fields))


def _state(observer):
    response = _call(observer, GetSimulationState, "/get_simulation_state")
    assert response.result.result == Result.RESULT_OK
    return response.state.state


def _set(observer, state):
    return _call(observer, SetSimulationState, "/set_simulation_state", state=SimulationState(state=state)).result


def _clock(observer):
    """The sim's time now: the last /joint_states stamp (published every step with /clock's time; reliable,
    where /clock itself is best effort and may drop a message)."""
    observer.spin_for(0.3)
    return stamp_ns(observer.messages["joint_states"][-1])


def test_constants_are_the_packages():
    assert [getattr(Result, f"RESULT_{n}") for n in ("FEATURE_UNSUPPORTED", "OK", "NOT_FOUND", "INCORRECT_STATE",
                                                       "OPERATION_FAILED")] == [
        control.RESULT_FEATURE_UNSUPPORTED, control.RESULT_OK, control.RESULT_NOT_FOUND,
        control.RESULT_INCORRECT_STATE, control.RESULT_OPERATION_FAILED]
    assert (SimulationState.STATE_STOPPED, SimulationState.STATE_PLAYING, SimulationState.STATE_PAUSED,
            SimulationState.STATE_QUITTING) == (control.STATE_STOPPED, control.STATE_PLAYING, control.STATE_PAUSED,
                                                control.STATE_QUITTING)
    response = SetSimulationState.Response
    assert (response.ALREADY_IN_TARGET_STATE, response.INCORRECT_TRANSITION) == (control.ALREADY_IN_TARGET_STATE,
                                                                                 control.INCORRECT_TRANSITION)
    request = ResetSimulation.Request
    assert (request.SCOPE_DEFAULT, request.SCOPE_TIME, request.SCOPE_STATE, request.SCOPE_SPAWNED,
            request.SCOPE_ALL) == (control.SCOPE_DEFAULT, control.SCOPE_TIME, control.SCOPE_STATE,
                                   control.SCOPE_SPAWNED, control.SCOPE_ALL)


def test_features_list_exactly_what_works(sim):
    observer, _ = sim
    features = _call(observer, GetSimulatorFeatures, "/get_simulator_features").features
    assert sorted(features.features) == sorted([
        SimulatorFeatures.SIMULATION_RESET, SimulatorFeatures.SIMULATION_RESET_TIME,
        SimulatorFeatures.SIMULATION_RESET_STATE, SimulatorFeatures.SIMULATION_STATE_GETTING,
        SimulatorFeatures.SIMULATION_STATE_SETTING, SimulatorFeatures.SIMULATION_STATE_PAUSE,
        SimulatorFeatures.STEP_SIMULATION_SINGLE, SimulatorFeatures.STEP_SIMULATION_MULTIPLE,
        SimulatorFeatures.STEP_SIMULATION_ACTION])
    assert list(features.spawn_formats) == []


def test_states_steps_and_their_result_codes(sim):
    """Paused at start; step while paused advances /clock by N dt; step while playing is INCORRECT_STATE;
    setting the state it is in is ALREADY_IN_TARGET_STATE; STOPPED resets with /clock monotonic, cannot be
    paused, and plays; QUITTING is not offered."""
    observer, _ = sim
    assert _state(observer) == SimulationState.STATE_PAUSED
    before = _clock(observer)
    result = _call(observer, StepSimulation, "/step_simulation", steps=3).result
    assert result.result == Result.RESULT_OK, result.error_message
    assert _clock(observer) == before + 3 * DT_NS
    assert _call(observer, StepSimulation, "/step_simulation", steps=0).result.result == \
        Result.RESULT_OPERATION_FAILED
    assert _set(observer, SimulationState.STATE_PAUSED).result == SetSimulationState.Response.ALREADY_IN_TARGET_STATE
    assert _set(observer, SimulationState.STATE_PLAYING).result == Result.RESULT_OK
    assert _state(observer) == SimulationState.STATE_PLAYING
    result = _call(observer, StepSimulation, "/step_simulation", steps=1).result
    assert result.result == Result.RESULT_INCORRECT_STATE and "pause" in result.error_message
    assert _set(observer, SimulationState.STATE_PAUSED).result == Result.RESULT_OK
    running = _clock(observer)
    assert running > before + 3 * DT_NS
    assert _set(observer, SimulationState.STATE_STOPPED).result == Result.RESULT_OK
    assert _state(observer) == SimulationState.STATE_STOPPED
    assert _clock(observer) == running  # reset, but /clock does not go back
    assert _set(observer, SimulationState.STATE_PAUSED).result == SetSimulationState.Response.INCORRECT_TRANSITION
    assert _set(observer, SimulationState.STATE_QUITTING).result == Result.RESULT_FEATURE_UNSUPPORTED
    assert _set(observer, SimulationState.STATE_NO_WORLD).result == SetSimulationState.Response.INCORRECT_TRANSITION
    assert _call(observer, StepSimulation, "/step_simulation", steps=1).result.result == Result.RESULT_OK
    assert _state(observer) == SimulationState.STATE_PAUSED  # a step leaves STOPPED


def test_reset_scopes_and_the_clock(sim):
    """SCOPE_STATE keeps /clock monotonic; SCOPE_TIME (and DEFAULT, which is ALL) sets it back to 0;
    SCOPE_SPAWNED alone is FEATURE_UNSUPPORTED (nothing is ever spawned)."""
    observer, _ = sim
    _call(observer, StepSimulation, "/step_simulation", steps=2)
    before = _clock(observer)
    assert before > 0
    reset = ResetSimulation.Request
    assert _call(observer, ResetSimulation, "/reset_simulation", scope=reset.SCOPE_STATE).result.result == \
        Result.RESULT_OK
    assert _clock(observer) == before
    assert _call(observer, ResetSimulation, "/reset_simulation", scope=reset.SCOPE_SPAWNED).result.result == \
        Result.RESULT_FEATURE_UNSUPPORTED
    assert _call(observer, ResetSimulation, "/reset_simulation", scope=reset.SCOPE_DEFAULT).result.result == \
        Result.RESULT_OK
    assert observer.spin_until(lambda: stamp_ns(observer.messages["joint_states"][-1]) == 0, 10)
    _call(observer, StepSimulation, "/step_simulation", steps=1)
    assert _clock(observer) == DT_NS


def _action_client(observer):
    """An action client, and every message of the action's feedback topic in ``client.feedback_messages``: rclpy's
    client drops a goal's feedback callback once the goal's result is in, and the result (a service response) and
    the feedback (a topic) are separate streams, so the last feedback may come after the result and never reach the
    callback (seen once in CI)."""
    from rclpy.action import ActionClient
    client = ActionClient(observer.node, SimulateSteps, "/simulate_steps")
    client.feedback_messages = []
    topic = "/simulate_steps/_action/feedback"
    observer.node.create_subscription(SimulateSteps.Impl.FeedbackMessage, topic, client.feedback_messages.append, 100)
    assert observer.spin_until(client.server_is_ready, 30)
    assert observer.spin_until(lambda: observer.node.count_publishers(topic) >= 1, 30)
    return client


def _feedback_on_topic(client, handle):
    """(completed, remaining) of each feedback message of ``handle``'s goal that the feedback topic carried."""
    uuid = bytes(handle.goal_id.uuid)
    return [(m.feedback.completed_steps, m.feedback.remaining_steps) for m in client.feedback_messages
            if bytes(m.goal_id.uuid) == uuid]


def _send(observer, client, steps, feedback):
    goal = client.send_goal_async(SimulateSteps.Goal(steps=steps), feedback_callback=lambda m: feedback.append(
        (m.feedback.completed_steps, m.feedback.remaining_steps)))
    assert observer.spin_until(goal.done, 30)
    return goal.result()


def test_simulate_steps_action(sim):
    """Feedback after every step, then OK; /clock advanced by exactly those steps. Cancelled mid-way it stops
    between two steps; while playing the goal is aborted with INCORRECT_STATE."""
    from action_msgs.msg import GoalStatus
    observer, _ = sim
    client = _action_client(observer)
    before = _clock(observer)
    feedback = []
    handle = _send(observer, client, 5, feedback)
    assert handle.accepted
    result = handle.get_result_async()
    assert observer.spin_until(result.done, 60)
    assert result.result().status == GoalStatus.STATUS_SUCCEEDED
    assert result.result().result.result.result == Result.RESULT_OK
    # the last feedback may come after the result: read from the topic (see _action_client)
    observer.spin_until(lambda: len(_feedback_on_topic(client, handle)) >= 5, 10)
    observer.spin_for(0.3)  # and nothing more after it
    assert _feedback_on_topic(client, handle) == [(1, 4), (2, 3), (3, 2), (4, 1), (5, 0)]
    assert feedback == [(1, 4), (2, 3), (3, 2), (4, 1), (5, 0)][:len(feedback)]  # the callback's, in order
    assert _clock(observer) == before + 5 * DT_NS

    feedback = []
    handle = _send(observer, client, 100_000, feedback)
    assert observer.spin_until(lambda: len(feedback) >= 3, 30)
    cancel = handle.cancel_goal_async()
    assert observer.spin_until(cancel.done, 30)
    result = handle.get_result_async()
    assert observer.spin_until(result.done, 60)
    assert result.result().status == GoalStatus.STATUS_CANCELED
    assert len(feedback) < 1000

    assert _set(observer, SimulationState.STATE_PLAYING).result == Result.RESULT_OK
    handle = _send(observer, client, 3, [])
    result = handle.get_result_async()
    assert observer.spin_until(result.done, 30)
    assert result.result().status == GoalStatus.STATUS_ABORTED
    assert result.result().result.result.result == Result.RESULT_INCORRECT_STATE
    assert _set(observer, SimulationState.STATE_PAUSED).result == Result.RESULT_OK
    client.destroy()


def test_std_srvs_fallback_still_served(sim):
    from std_srvs.srv import Trigger
    observer, _ = sim
    assert observer.call(Trigger, "/cond_sim/step").success
