"""The standard ``simulation_interfaces`` (v2.1.0), served at root names as Isaac Sim and O3DE serve them.

``/get_simulator_features``, ``/get_simulation_state``, ``/set_simulation_state``, ``/step_simulation``,
``/reset_simulation`` and the ``/simulate_steps`` action (feedback after each step, cancel between steps).
What each call does and answers is decided in :mod:`cond_ros.cosim.simulation_control`; here it becomes
the package's messages, and the node's ``pause``, ``run_steps`` and ``reset`` do the work, as for the
std_srvs fallback (``~/pause``, ``~/step``, ``~/reset``), which stays.

The package has no wheel; ``cond-ros build-interfaces`` builds it from its release sources with the
rosidl wheels (README, "ROS 2 interface"). Without it, nothing is served here and this says so once.
"""
from __future__ import annotations

from ..cosim import simulation_control as control

try:
    from simulation_interfaces.action import SimulateSteps
    from simulation_interfaces.msg import Result, SimulationState, SimulatorFeatures
    from simulation_interfaces.srv import (GetSimulationState, GetSimulatorFeatures, ResetSimulation,
                                           SetSimulationState, StepSimulation)
    IMPORT_ERROR = None
except ImportError as exc:
    IMPORT_ERROR = exc

SERVICE_NAMES = ("/get_simulator_features", "/get_simulation_state", "/set_simulation_state", "/step_simulation",
                 "/reset_simulation")
ACTION_NAME = "/simulate_steps"


def _result(code: int, message: str = ""):
    return Result(result=code, error_message=message)


def create_simulation_interfaces(node) -> list:
    """Serve the standard services and action on ``node`` (a SimNode); returns what was created (none
    without the package)."""
    if IMPORT_ERROR is not None:
        node.get_logger().info(f"simulation_interfaces not importable ({IMPORT_ERROR}); serving the std_srvs "
                               "services only (cond-ros build-interfaces builds it)")
        return []
    from rclpy.action import ActionServer, CancelResponse, GoalResponse

    def features(request, response):
        response.features = SimulatorFeatures(features=list(control.FEATURES), spawn_formats=[],
                                              custom_info="cond_ros: COND contact simulation; no spawning, one world")
        return response

    def get_state(request, response):
        response.state = SimulationState(state=node.simulation_state())
        response.result = _result(control.RESULT_OK)
        return response

    def set_state(request, response):
        decision = control.transition(node.simulation_state(), int(request.state.state))
        if decision.action is not None:
            node.apply_state(decision.action)
        response.result = _result(decision.code, decision.message)
        return response

    async def step(request, response):
        decision = control.step_decision(node.simulation_state(), int(request.steps))
        if decision.code == control.RESULT_OK:
            ok, message = await node.run_steps(int(request.steps))
            decision = control.Decision(control.RESULT_OK if ok else control.RESULT_OPERATION_FAILED,
                                        "" if ok else message)
        response.result = _result(decision.code, decision.message)
        return response

    def reset(request, response):
        decision, reset_time, reset_state = control.reset_decision(int(request.scope))
        if decision.code == control.RESULT_OK:
            node.reset(reset_time=reset_time, reset_state=reset_state)
        response.result = _result(decision.code, decision.message)
        return response

    active = []  # the goal being executed (one at a time)

    def on_goal(goal_request):
        return GoalResponse.REJECT if active else GoalResponse.ACCEPT

    async def execute(goal_handle):
        steps = int(goal_handle.request.steps)
        result = SimulateSteps.Result()
        active.append(goal_handle)
        try:
            decision = control.step_decision(node.simulation_state(), steps)
            if decision.code != control.RESULT_OK:
                goal_handle.abort()
                result.result = _result(decision.code, decision.message)
                return result
            for done in range(steps):
                if goal_handle.is_cancel_requested:
                    goal_handle.canceled()
                    result.result = _result(control.RESULT_OK, f"canceled after {done} of {steps} steps")
                    return result
                ok, message = await node.run_steps(1)
                if not ok:
                    goal_handle.abort()
                    code = (control.RESULT_INCORRECT_STATE if not node.requests.paused
                            else control.RESULT_OPERATION_FAILED)
                    result.result = _result(code, f"after {done} of {steps} steps: {message}")
                    return result
                goal_handle.publish_feedback(SimulateSteps.Feedback(completed_steps=done + 1,
                                                                    remaining_steps=steps - done - 1))
            goal_handle.succeed()
            result.result = _result(control.RESULT_OK)
            return result
        finally:
            active.remove(goal_handle)

    return [node.create_service(GetSimulatorFeatures, SERVICE_NAMES[0], features),
            node.create_service(GetSimulationState, SERVICE_NAMES[1], get_state),
            node.create_service(SetSimulationState, SERVICE_NAMES[2], set_state),
            node.create_service(StepSimulation, SERVICE_NAMES[3], step, callback_group=node.step_calls),
            node.create_service(ResetSimulation, SERVICE_NAMES[4], reset),
            ActionServer(node, SimulateSteps, ACTION_NAME, execute, goal_callback=on_goal,
                         cancel_callback=lambda goal_handle: CancelResponse.ACCEPT)]
