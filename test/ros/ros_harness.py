"""Processes and an observer for the rclpy tests (imported by the test modules, not collected).

- :func:`ros_session`: ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST and a fresh ROS_DOMAIN_ID (1..100) in the
  environment that children inherit; on exit the Fast DDS shared-memory files created meanwhile (the ones
  killed processes leave in /dev/shm) are removed.
- :class:`NodeProcess`: a node in a child process, in its own process group, killed by a watchdog after
  a hard timeout whatever the test does, and by :meth:`NodeProcess.stop` (SIGINT, then SIGKILL).
- :class:`Observer`: the test's own rclpy context and node on a SingleThreadedExecutor: records what the
  sim publishes, publishes commands, calls services; every wait has a timeout.
- :func:`token_processes`: the live processes whose environment carries a test's :data:`TOKEN_VARIABLE`,
  found through /proc, so that a test finds (and kills) its grandchildren even after they left its process
  group's parent and were re-parented to init.
"""
import collections
import contextlib
import glob
import itertools
import os
import signal
import subprocess
import sys
import threading
import time

SHM_PATTERNS = ("fastrtps_*", "fast_datasharing*", "sem.fastrtps_*", "fastdds_*", "sem.fastdds_*")
HARD_TIMEOUT_S = 150.0  # no child process of a test lives longer than this
DT_NS = 10_000_000  # the test scene's 10 ms step
TOKEN_VARIABLE = "COND_ROS_TEST_TOKEN"
_sessions = itertools.count()


def _shm_files() -> set:
    return {path for pattern in SHM_PATTERNS for path in glob.glob(os.path.join("/dev/shm", pattern))}


@contextlib.contextmanager
def ros_session():
    """A ROS domain of this test's own on loopback; yields its id."""
    before = _shm_files()
    saved = {k: os.environ.get(k) for k in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE")}
    domain = 1 + (os.getpid() * 7 + next(_sessions)) % 100
    os.environ.update(ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    try:
        yield domain
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        for path in _shm_files() - before:
            with contextlib.suppress(OSError):
                os.remove(path)


class NodeProcess:
    """``python -m MODULE`` (or any argv after the interpreter) with ROS parameters, output to ``log_path``."""

    def __init__(self, args, log_path, parameters=None, timeout=HARD_TIMEOUT_S, env=None):
        command = [sys.executable, *args]
        if parameters:
            command.append("--ros-args")
            for name, value in parameters.items():
                text = ("true" if value else "false") if isinstance(value, bool) else str(value)
                command += ["-p", f"{name}:={text}"]
        self.log_path = str(log_path)
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True,
                                     env=None if env is None else dict(os.environ, **env))
        self._watchdog = threading.Timer(timeout, self.kill)
        self._watchdog.daemon = True
        self._watchdog.start()

    def log(self) -> str:
        with open(self.log_path) as fh:
            return fh.read()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _signal_group(self, sig) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, sig)

    def kill(self) -> None:
        """SIGKILL the whole process group at once (a crash, as far as its peers can tell)."""
        self._signal_group(signal.SIGKILL)
        self.proc.wait()

    def stop(self, grace: float = 5.0) -> int:
        """SIGINT, then SIGKILL after ``grace`` seconds; the exit code."""
        self._watchdog.cancel()
        if self.alive():
            self._signal_group(signal.SIGINT)
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.kill()
        self._signal_group(signal.SIGKILL)  # anything left in the group
        self._log.close()
        return self.proc.returncode


def token_processes(token: str) -> list:
    """The pids of the live (not zombie) processes that have ``TOKEN_VARIABLE=token`` in their environment."""
    entry = f"{TOKEN_VARIABLE}={token}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                if entry not in fh.read().split(b"\0"):
                    continue
            with open(f"/proc/{name}/stat", "rb") as fh:
                state = fh.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):  # gone meanwhile, or not ours to read
            continue
        if state != b"Z":
            found.append(int(name))
    return found


def wait_until_gone(token: str, timeout: float) -> tuple:
    """Poll until no process carries ``token``; (seconds waited, pids still there at the timeout)."""
    start = time.monotonic()
    while True:
        left = token_processes(token)
        waited = time.monotonic() - start
        if not left or waited > timeout:
            return waited, left
        time.sleep(0.02)


def kill_token_processes(token: str) -> None:
    for pid in token_processes(token):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def start_sim(tmp_path, name="cond_sim", **parameters) -> NodeProcess:
    """The sim node on the small scene, as fast as possible unless told otherwise."""
    parameters = dict(dict(scene="panda_cable_small", real_time_factor=0.0), **parameters)
    return NodeProcess(["-m", "cond_ros.ros.node"], tmp_path / f"{name}.log", parameters)


@contextlib.contextmanager
def running_sim(tmp_path, name="cond_sim", **parameters):
    """A ROS session with the sim node and an observer connected to it; yields (observer, process)."""
    with ros_session() as domain:
        process = start_sim(tmp_path, name=name, **parameters)
        observer = None
        try:
            observer = Observer(domain)
            observer.wait_for_sim()
            yield observer, process
        finally:
            if observer is not None:
                observer.close()
            process.stop()


def spin_until(executor, condition, timeout: float) -> bool:
    """Spin ``executor`` until ``condition()`` holds (True) or ``timeout`` seconds pass (False)."""
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            return False
        executor.spin_once(timeout_sec=0.05)
    return True


def stamp_ns(msg) -> int:
    """A message's header stamp (or a Clock's clock) in nanoseconds."""
    stamp = msg.clock if hasattr(msg, "clock") else msg.header.stamp
    return stamp.sec * 1_000_000_000 + stamp.nanosec


class Observer:
    """The test side: subscribes to the sim's outputs and publishes on its command topics."""

    def __init__(self, domain: int):
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray
        from geometry_msgs.msg import WrenchStamped
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from rosgraph_msgs.msg import Clock
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray
        from trajectory_msgs.msg import JointTrajectory
        from visualization_msgs.msg import MarkerArray

        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node("test_observer", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.messages = collections.defaultdict(list)
        # key -> when the middleware received each message [s]: not when this executor got round to it, which a
        # loaded machine can delay by tens of ms between two messages that arrived together
        self.arrivals = collections.defaultdict(list)
        self.callbacks = []  # called with each /joint_states message (a test's controller)
        best_effort = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)
        subscriptions = {"clock": (Clock, "/clock", best_effort), "joint_states": (JointState, "/joint_states", 100),
                         "ft": (WrenchStamped, "/cond_sim/ft/wrist_ft", 100),
                         "ft_true": (WrenchStamped, "/cond_sim/ft/wrist_ft/ground_truth", 100),
                         "contact": (WrenchStamped, "/cond_sim/contact_wrench/cable0/cylinder0", 100),
                         "markers": (MarkerArray, "/cond_sim/markers", 10),
                         "diagnostics": (DiagnosticArray, "/diagnostics", 10)}
        self.subscriptions = {key: self.node.create_subscription(kind, topic, self._recorder(key), qos)
                              for key, (kind, topic, qos) in subscriptions.items()}
        self.publishers = {"joint_command": self.node.create_publisher(JointState, "/joint_command", 10),
                           "trajectory": self.node.create_publisher(
                               JointTrajectory, "/joint_trajectory_controller/joint_trajectory", 10)}
        for mode in ("position", "velocity", "effort"):
            self.publishers[mode] = self.node.create_publisher(Float64MultiArray,
                                                               f"/forward_{mode}_controller/commands", 10)

    def _recorder(self, key):
        def record(msg, info):  # two parameters: rclpy passes the MessageInfo
            self.arrivals[key].append(info["received_timestamp"] * 1e-9)
            self.messages[key].append(msg)
            if key == "joint_states":
                for callback in self.callbacks:
                    callback(msg)
        return record

    def spin_for(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=min(0.05, max(0.0, end - time.monotonic())))

    def spin_until(self, condition, timeout: float) -> bool:
        return spin_until(self.executor, condition, timeout)

    def wait_for_sim(self, timeout: float = 90.0) -> None:
        """Until the sim's services answer and its topics are matched both ways."""
        from std_srvs.srv import Trigger
        client = self.node.create_client(Trigger, "/cond_sim/step")

        def ready():
            return (client.service_is_ready() and self.subscriptions["joint_states"].get_publisher_count() > 0
                    and all(p.get_subscription_count() > 0 for p in self.publishers.values()))
        assert self.spin_until(ready, timeout), "the sim node did not come up"
        self.node.destroy_client(client)

    def call(self, srv_type, name: str, request=None, timeout: float = 60.0):
        """Call a service and spin until it answers (AssertionError on timeout)."""
        client = self.node.create_client(srv_type, name)
        try:
            assert self.spin_until(client.service_is_ready, timeout), f"service {name} is not available"
            future = client.call_async(request if request is not None else srv_type.Request())
            assert self.spin_until(future.done, timeout), f"service {name} did not answer within {timeout} s"
            return future.result()
        finally:
            self.node.destroy_client(client)

    def step(self):
        from std_srvs.srv import Trigger
        return self.call(Trigger, "/cond_sim/step")

    def pause(self, paused: bool):
        from std_srvs.srv import SetBool
        return self.call(SetBool, "/cond_sim/pause", SetBool.Request(data=paused))

    def set_parameter(self, name: str, value):
        from rcl_interfaces.srv import SetParameters
        from rclpy.parameter import Parameter
        request = SetParameters.Request(parameters=[Parameter(name, value=value).to_parameter_msg()])
        return self.call(SetParameters, "/cond_sim/set_parameters", request).results[0]

    def latest_positions(self):
        return list(self.messages["joint_states"][-1].position)

    def publish_forward(self, mode: str, values) -> None:
        from std_msgs.msg import Float64MultiArray
        self.publishers[mode].publish(Float64MultiArray(data=[float(v) for v in values]))

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        self.context.try_shutdown()
