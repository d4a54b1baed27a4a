"""Every shell command in the README runs as written (issue 34).

Each command of the README's ```bash blocks (a line, its ``\\`` continuations joined, each ``&&`` part on its
own) is matched by one rule below, in README order:

- ``run``: run as written in one scratch directory shared by the whole README, so that the bag example's
  ``record``, ``replay``, ``compare`` and ``play`` use each other's output; it must exit 0. ``extra`` arguments
  bound a command that would run for minutes (``--duration``); ``for_s`` lets a command that runs until
  stopped (a node, a looping player) run that long, then it must be alive and end with 0 on SIGINT.
- ``help``: a benchmark of minutes or hours: its ``--help`` must list every option the README gives it.
- ``excused``: with the reason (a ROS 2 distribution, the user's own bags, a synopsis, the install CI runs).

A README command that no rule matches fails the test: a new example is run or excused, never left to drift.
The compare example's tables in the README must be the report's, each number within 6 % or one unit of its
last digit: the same commit's report moves by up to ~5 % between machines (fbebde8: fz RMSE 6.841 N, tz bias
-0.002996 N m on the machines of 2026-11-27/28; 6.842 and -0.003117 on an AVX-512 EPYC with numpy 2.4.6, whose
report the README now shows), because the frictional slide amplifies the last bits of sums that other CPUs and
library builds round differently; text cells and the tables' shapes must agree exactly.
"""
import dataclasses
import os
import pathlib
import re
import sys

from process_group import run_in_group
from ros_harness import ros_session

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DISTRIBUTION = "needs a ROS 2 distribution (apt); the colcon build is tested in test_install.py"


@dataclasses.dataclass(frozen=True)
class Rule:
    pattern: str  # a regex the whole command must match
    action: str  # run, help or excused
    extra: str = ""
    for_s: float = 0.0
    why: str = ""
    ros: bool = False  # needs rclpy


RULES = [
    Rule(r"python3 -m pip install -e (\.|'\.\[test,ros,view\]'|'\.\[ros\]'|'\.\[view\]'|'\.\[fit\]')", "excused",
         why="the install itself: .ci/run runs it, and test_install.py tests every install path"),
    Rule(r"bash \.ci/browser", "excused", why="CI runs it before the tests"),
    Rule(r"cond-ros build-interfaces --install", "excused", why="CI runs it before the tests"),
    Rule(r"python3 -m pytest", "excused", why="this test is part of that run"),
    Rule(r"COND_ROS_SCREENSHOTS=1 python3 -m pytest test/view/test_browser\.py -k screenshots", "excused",
         why="the browser test: part of that run"),
    # the main job: its 55 s cut to 2 s; its viewer serves on a free port and closes with the run
    Rule(r"cond-ros run panda_cable --view --linger 30 --plot panda_cable_ft\.png", "run",
         extra="--steps 200 --linger 0 --port 0"),
    Rule(r"cond-ros run panda_cable_small --view --linger 5", "run", extra="--steps 100 --port 0"),
    Rule(r"cond-ros view soft_gripper", "run", extra="--port 0", for_s=25.0),
    Rule(r"cond-ros run panda_cable_small --steps 500 --out run\.csv", "run"),
    Rule(r"cond-ros view run\.csv --scene panda_cable_small", "run", extra="--port 0", for_s=15.0),
    Rule(r"cond-ros launch panda_cable --scene panda_cable_small --view", "run", extra="--duration 15", ros=True),
    Rule(r"cond-ros compile", "run"),
    Rule(r"python benchmarks/\S+\.py.*", "help"),
    Rule(r"cond-ros launch panda_cable --scene panda_cable_small", "run", extra="--duration 10", ros=True),
    Rule(r"cond-ros launch panda_cable --lockstep --real-time-factor 0", "run", extra="--duration 20", ros=True),
    Rule(r"cond_sim --ros-args .*", "run", for_s=8.0, ros=True),
    Rule(r"source .*|cd ~/ws|ln -s /path/to/cond_ros src/|colcon build .*|ros2 (launch|run|bag record) .*", "excused",
         why=DISTRIBUTION),
    Rule(r"cond-ros compare (fr3_bag|panda_ros1\.bag|robot_bag) sim_bag --preset .*", "excused",
         why="the user's robot bags; the presets are tested in test/bags/test_presets.py"),
    Rule(r".*\[--.*", "excused", why="a synopsis of the options"),
    Rule(r"cond-ros record slide_mu08 --out robot_bag", "run"),
    Rule(r"cond-ros replay robot_bag --scene slide_mu05 --out sim_bag", "run"),
    Rule(r"cond-ros compare robot_bag sim_bag --real-topic /cond_sim/ft/wrist_ft .* --out report", "run"),
    Rule(r"cond-ros play robot_bag", "run", ros=True),
    Rule(r"cond-ros fit slide_mu05 --bag robot_bag --real-topic /cond_sim/ft/wrist_ft --params mu --out fit_report",
         "run"),
    Rule(r"cond-ros run slide_mu05 --overlay fit_report/fitted\.yaml", "run"),
    Rule(r"cond-ros replay robot_bag --scene slide_mu05 --overlay fit_report/fitted\.yaml --out fitted_bag", "run"),
    Rule(r"cond-ros compare robot_bag fitted_bag --real-topic /cond_sim/ft/wrist_ft --out fitted_report", "run"),
    # the shadow demo: the shadow node alone (it waits for joint states), then the player (faster, unheard)
    Rule(r"cond-ros record panda_cable_small --duration 20 --out cable_bag", "run"),
    Rule(r"cond-ros play cable_bag --topics /joint_states /cond_sim/ft/wrist_ft", "run", extra="--rate 5", ros=True),
    Rule(r"cond-ros sweep panda_cable_small --param youngs_modulus=4e6:5e6 .* --out trials", "run",
         extra="--samples 2 --duration 0.5"),
    Rule(r"cond-ros play robot_bag .* --loop", "run", for_s=5.0, ros=True),
]


def readme_commands() -> list:
    """The shell commands of the README's bash blocks, comments removed, in order."""
    commands, block = [], None
    for line in README.read_text().splitlines():
        if line.startswith("```"):
            block = [] if line.strip() == "```bash" and block is None else None
            continue
        if block is None:
            continue
        line = re.sub(r"\s+#\s.*$", "", line).rstrip()
        if not line or line.lstrip().startswith("#"):
            continue
        if commands and commands[-1].endswith("\\"):
            commands[-1] = commands[-1][:-1].rstrip() + " " + line.strip()
        else:
            commands.append(line.strip())
    return [part.strip() for command in commands for part in command.split(" && ")]


def rule_for(command: str) -> Rule | None:
    return next((rule for rule in RULES if re.fullmatch(rule.pattern, command)), None)


def test_every_readme_command_has_a_rule():
    commands = readme_commands()
    assert len(commands) > 30, commands  # the parser still finds the README's examples
    unmatched = [command for command in commands if rule_for(command) is None]
    assert not unmatched, "README commands neither run nor excused here:\n  " + "\n  ".join(unmatched)


def _shell(command: str, cwd, timeout: float, for_s: float = 0.0) -> tuple:
    """(exit code, output) of ``command`` in bash, in its own process group, killed with it."""
    rc, out, interrupted = run_in_group(["bash", "-c", command], cwd=cwd, timeout=timeout,
                                        interrupt_after=for_s or None)
    if for_s and not interrupted:
        return rc, f"ended on its own within {for_s} s:\n{out}"
    return rc, out


def _table(text: str, header: str) -> list:
    lines = text[text.index(header):].splitlines()
    return lines[:next(k for k, line in enumerate(lines) if not line.startswith("|"))]


CELL_DRIFT = 0.06  # relative: the reports of one commit on two machines (module docstring)


def _cells_differ(ours: str, theirs: str) -> bool:
    """Whether two table cells differ by more than CELL_DRIFT and one unit of the last digit either shows (text:
    at all)."""
    try:
        a, b = float(ours), float(theirs)
    except ValueError:
        return ours != theirs
    unit = max(10.0 ** -(len(text.split(".")[1]) if "." in text else 0) for text in (ours, theirs))
    # 1.5 units: two roundings of numbers one unit apart
    return abs(a - b) > max(1.5 * unit, CELL_DRIFT * max(abs(a), abs(b)))


def _stale_rows(readme: list, report: list) -> list:
    """The rows of a README table that are not the report's (:func:`_cells_differ`), or all when the shapes differ."""
    if len(readme) != len(report):
        return readme
    stale = []
    for mine, theirs in zip(readme, report):
        ours, their = mine.split("|"), theirs.split("|")
        if len(ours) != len(their) or any(_cells_differ(a.strip(), b.strip()) for a, b in zip(ours, their)):
            stale.append(f"{mine}  (report: {theirs})")
    return stale


def test_the_readme_commands_run_as_written(tmp_path):
    has_rclpy = True
    try:
        import rclpy  # noqa: F401
    except ImportError:
        has_rclpy = False
    bin_dir = pathlib.Path(sys.executable).parent
    env_path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"  # cond-ros and cond_sim of this interpreter
    failures, ran = [], 0
    with ros_session():
        os.environ["PATH"], saved_path = env_path, os.environ.get("PATH", "")
        try:
            for command in readme_commands():
                rule = rule_for(command)
                if rule is None or rule.action == "excused" or (rule.ros and not has_rclpy):
                    continue
                if rule.action == "help":
                    script = command.split()[1]
                    code, out = _shell(f"python {script} --help", ROOT, timeout=120)
                    missing = [o for o in re.findall(r"(?<![\w-])(--[a-z][\w-]*)", command) if o not in out]
                    if code != 0 or missing:
                        failures.append(f"{command}: --help exit {code}, options not in it: {missing}\n{out[-1500:]}")
                    continue
                full = f"{command} {rule.extra}".strip()
                code, out = _shell(full, tmp_path, timeout=300, for_s=rule.for_s)
                ran += 1
                if code != 0:
                    failures.append(f"{full}: exit {code}\n{out[-3000:]}")
        finally:
            os.environ["PATH"] = saved_path
    assert not failures, "\n\n".join(failures)
    assert ran >= (9 if has_rclpy else 5)
    readme, report = README.read_text(), (tmp_path / "report" / "report.md").read_text()
    for header in ("| axis | unit | RMSE", "| window [s after the first sample]"):
        stale = _stale_rows(_table(readme, header), _table(report, header))
        assert not stale, f"the README's compare table {header!r} is stale:\n" + "\n".join(stale)
