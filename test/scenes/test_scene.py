"""Scene YAML: the panda_pick scene lifts its box; malformed scene files name the bad key."""
import numpy as np
import pytest

from cond_ros.scenes.scene import load_scene
from cond_ros.sim import ModelError
from cond_ros.tools.benchmarks import bench_panda_pick

GOOD = """
dt: 0.01
duration: 0.1
robots:
  - name: arm
    urdf: urdf/panda.urdf
    q: [0.0, -0.3831, 0.0, -1.7152, 0.0, 1.3321, 0.7854, 0.04]
    drive_stiffness: [100, 100, 100, 100, 100, 100, 100, 100]
    drive_damping: [10, 10, 10, 10, 10, 10, 10, 10]
colliders:
  - {type: plane}
script:
  robot: arm
  tool_link: panda_tcp
  gripper_joints: [panda_finger_joint1]
  waypoints:
    - {t: 0.0, gripper: open}
"""


def write(tmp_path, text):
    path = tmp_path / "scene.yaml"
    path.write_text(text)
    return str(path)


@pytest.mark.slow
def test_panda_pick_lifts_the_box():
    """The scripted Panda grasps the 0.4 kg box and lifts it by the scripted 0.165 m minus the grasp height
    (>= 100 mm), and `cond-ros bench panda_pick --json` reports the issue's keys. Issue 30's grasp quality: once
    the grip is closed, no contact penetrates more than 0.5 mm, and the box moves less than 0.5 mm in the hand
    through the lift and the hold (a real 30 N grip at mu 0.8 on a 3.9 N box does not slip)."""
    result = bench_panda_pick()
    for key in ("dynamics_ms", "solver_ms", "iterations_mean", "max_penetration_mm", "hold_max_penetration_mm",
                "box_drift_in_hand_mm"):
        assert key in result and np.isfinite(result[key])
    assert result["lift_mm"] > 100.0
    assert result["max_penetration_mm"] < 5.0  # closing impact, u dt / 2 (see contacts module)
    assert result["hold_max_penetration_mm"] <= 0.5
    assert result["box_drift_in_hand_mm"] < 0.5


def test_good_scene_loads(tmp_path):
    """A minimal scene builds a simulator and a script with the arm's joints."""
    simulator, script, duration = load_scene(write(tmp_path, GOOD))[:3]
    assert simulator.model.robot_dof_count == 8 and duration == pytest.approx(0.1)
    control = script.control(0.0)
    assert control.robot_q_target[7] == pytest.approx(0.04)


@pytest.mark.parametrize("old,new,message", [
    ("dt: 0.01", "dt: fast", "dt must be a finite number"),
    ("q: [0.0, -0.3831, 0.0, -1.7152, 0.0, 1.3321, 0.7854, 0.04]", "q: [0.0]", r"robots\[0\].q must be 8"),
    ("robot: arm", "robot: hand", "script.robot 'hand'"),
    ("tool_link: panda_tcp", "tool_link: nope", "no link 'nope'"),
    ("{type: plane}", "{type: torus}", r"colliders\[0\].type"),
    ("urdf: urdf/panda.urdf", "urdf: urdf/missing.urdf", "missing.urdf"),
    ("    - {t: 0.0, gripper: open}", "    - {t: 0.0, gripper: maybe}", "gripper must be 'open' or 'close'"),
    ("dt: 0.01", "dt: [", "invalid YAML"),
])
def test_malformed_scene_names_the_key(tmp_path, old, new, message):
    """Each malformed entry raises ModelError naming the key path (and nothing is simulated)."""
    with pytest.raises(ModelError, match=message):
        load_scene(write(tmp_path, GOOD.replace(old, new)))


CABLE = GOOD + """
cables:
  - {segments: 10, radius: 0.002, density: 1259.0, youngs_modulus: 1.0e+6, poisson_ratio: 0.4,
     start: [0.4, -0.2, 0.3], grip: {robot: arm, link: panda_tcp, length: 0.01}}
sensors:
  - {name: wrist, robot: arm, parent_link: ft_sensor_link, child_link: panda_hand}
"""


def test_cable_scene_welds_the_cable_to_the_tool(tmp_path):
    scene = load_scene(write(tmp_path, CABLE))
    (rod,) = scene.cables
    model = scene.simulator.model
    assert rod.segments == 10 and model.body_count == 10
    assert len(scene.sensors) == 1 and scene.sensors[0].spec.name == "wrist"
    assert model.damping_policy == 1  # geometric by default with cables


@pytest.mark.parametrize("old,new,message", [
    ("segments: 10", "segments: 1", "segments"),
    ("poisson_ratio: 0.4", "poisson_ratio: 0.5", "poisson_ratio"),
    ("link: panda_tcp, length", "link: nope, length", "no link 'nope'"),
    ("grip: {robot: arm", "grip: {robot: hand", "grip.robot 'hand'"),
    ("child_link: panda_hand}", "child_link: panda_hand, frame: world}", "frame"),
    ("parent_link: ft_sensor_link", "parent_link: panda_link7", "the parent of 'panda_hand' is 'ft_sensor_link'"),
])
def test_malformed_cable_or_sensor_names_the_key(tmp_path, old, new, message):
    with pytest.raises(ModelError, match=message):
        load_scene(write(tmp_path, CABLE.replace(old, new)))


def test_scene_without_its_script_starts_where_the_script_does():
    """``script=False`` (the sim node) solves only the trajectory's first row: the robot, cable and every
    other body start bit-identical to the scene with its whole 5 500-row IK track, which starts on row 0."""
    from cond_ros.resources import scene_files
    whole = load_scene(scene_files()["panda_cable_small"])
    start = load_scene(scene_files()["panda_cable_small"], script=False)
    assert start.script is None and whole.script is not None
    assert len(whole.script.track.q) > 5000
    for name in ("robot_q", "robot_qd", "body_q", "body_quat", "body_qd", "particle_q", "particle_qd"):
        assert np.array_equal(getattr(start.simulator.state, name), getattr(whole.simulator.state, name)), name
    assert np.array_equal(start.simulator.state.robot_q[:7], whole.script.track.q[0][:7])


@pytest.mark.parametrize("old,new,message", [
    ("length: 0.01}", "length: 0.01, joint: hinge}", r"cables\[0\].grip.joint must be 'weld' or 'ball'"),
    ("poisson_ratio: 0.4,", "poisson_ratio: 0.4, start_joint: 3,", r"cables\[0\].start_joint must be"),
    ("poisson_ratio: 0.4,", "poisson_ratio: 0.4, segment_damping: {linear: x},",
     r"cables\[0\].segment_damping.linear must be a finite number"),
    ("poisson_ratio: 0.4,", "poisson_ratio: 0.4, segment_damping: {angular: -0.01},",
     r"scene.yaml: cables\[0\]: rod.segment_damping: must be >= 0"),
])
def test_malformed_cable_end_or_damping_names_the_key(tmp_path, old, new, message):
    with pytest.raises(ModelError, match=message):
        load_scene(write(tmp_path, CABLE.replace(old, new)))


def test_ball_joints_hold_the_cable_ends_by_position_and_segment_damping_reaches_every_segment(tmp_path):
    text = CABLE.replace("poisson_ratio: 0.4,", "poisson_ratio: 0.4, start_joint: ball, "
                         "segment_damping: {linear: 0.01, angular: 0.02},").replace(
        "length: 0.01}", "length: 0.01, joint: ball}")
    ball, weld = (load_scene(write(tmp_path, t)).simulator.model for t in (text, CABLE))
    assert weld.potential_count == 2 * 9 + 2 * 2  # inner joints + two welds (coupling and rotation each)
    assert ball.potential_count == 2 * 9 + 2  # two couplings only
    np.testing.assert_array_equal(ball.body_damping, np.tile([0.01, 0.02], (10, 1)))
    np.testing.assert_array_equal(weld.body_damping, 0.0)


TRAJECTORY_ROWS = """t,px,py,pz,r00,r01,r02,r10,r11,r12,r20,r21,r22
0.00,0.514,0.197,0.1005,1,0,0,0,-1,0,0,0,-1
0.01,0.514,0.196,0.1010,1,0,0,0,-1,0,0,0,-1
0.02,0.514,0.195,0.1015,1,0,0,0,-1,0,0,0,-1
"""
TRAJECTORY_SCENE = GOOD.split("script:")[0] + """script:
  robot: arm
  tool_link: panda_tcp
  trajectory: CSV
  fixed_joints: [panda_finger_joint1]
"""


def test_trajectory_rotations_can_be_the_flanges_and_the_drives_can_go_without_velocity_targets(tmp_path):
    """``orientation_link`` (the authors' recording gives the flange's rotation at the tool point), and
    ``velocity_feedforward: false`` (their joint PD without velocity targets)."""
    from cond_ros.sim.kinematics.articulation import ArticulationKinematics
    csv = tmp_path / "tool.csv"
    csv.write_text(TRAJECTORY_ROWS)
    base = TRAJECTORY_SCENE.replace("CSV", str(csv))
    tcp = load_scene(write(tmp_path, base))
    flange = load_scene(write(tmp_path, base + "  orientation_link: panda_link7\n  velocity_feedforward: false\n"))
    target = np.diag([1.0, -1.0, -1.0])
    for scene, link in ((tcp, "panda_tcp"), (flange, "panda_link7")):
        art = scene.simulator.model.robots[0]
        kin = ArticulationKinematics(art)
        kin.update(scene.script.track.q[0])
        np.testing.assert_allclose(kin.link_pose[art.link_index(link)][:3, :3], target, atol=1e-7)
        np.testing.assert_allclose(kin.link_pose[art.link_index("panda_tcp")][:3, 3], [0.514, 0.197, 0.1005],
                                   atol=1e-7)
    assert np.abs(tcp.script.control(0.01).robot_qd_target).max() > 1e-3
    assert not flange.script.control(0.01).robot_qd_target.any()
    assert np.array_equal(flange.script.control(0.01).robot_q_target, flange.script.track.targets(0.01)[0])
    with pytest.raises(ModelError, match="rigidly attached"):
        load_scene(write(tmp_path, base + "  orientation_link: panda_link3\n"))
    with pytest.raises(ModelError, match="script.orientation_link: no link 'nope'"):
        load_scene(write(tmp_path, base + "  orientation_link: nope\n"))
    with pytest.raises(ModelError, match="script.velocity_feedforward must be true or false"):
        load_scene(write(tmp_path, base + "  velocity_feedforward: no way\n"))


@pytest.mark.parametrize("old,new,message", [
    ("colliders:", "coliders:", r"scene.yaml:10: coliders: unknown key; did you mean colliders\?"),
    ("duration: 0.1", "duraton: 0.1", "duraton: unknown key; did you mean duration"),
    ("    drive_damping:", "    drive_stifness: [1]\n    drive_damping:",
     r"robots\[0\].drive_stifness: unknown key; did you mean drive_stiffness"),
    ("  - {type: plane}", "  - {type: plane, muu: 0.3}", r"colliders\[0\].muu: unknown key; did you mean mu"),
    ("    - {t: 0.0, gripper: open}", "    - {t: 0.0, griper: open}",
     r"script.waypoints\[0\].griper: unknown key; did you mean gripper"),
    ("dt: 0.01", "dt: 0.01\nsolver: {name: cond, tolerence: 1.0e-6}",
     r"solver.tolerence: not an option of solver 'cond'; did you mean tolerance"),
    ("dt: 0.01", "dt: 0.01\nsomething_else: 1", r"something_else: unknown key \(known here: "),
])
def test_misspelled_keys_are_errors_with_a_suggestion(tmp_path, old, new, message):
    """A misspelled optional key used to drop its section without a word (``coliders`` removed the table):
    it is an error naming the file, the key path and the closest key the loader knows there."""
    assert old in GOOD or old == "dt: 0.01"
    with pytest.raises(ModelError, match=message):
        load_scene(write(tmp_path, GOOD.replace(old, new)))


@pytest.mark.parametrize("old,new,message", [
    ("    drive_stiffness:", "    drive_stifness:", r"scene.yaml:5: missing robots\[0\].drive_stiffness "
                                                    r"\(robots\[0\].drive_stifness is not a key: did you mean"),
    ("  - {type: plane}", "  - {type: plane}\nbodies:\n  - {shape: box, size: [0.1, 0.1, 0.1], mass: -0.4, "
                          "position: [0, 0, 1]}", r"scene.yaml:13: bodies\[0\].mass must be > 0, got -0.4"),
    ("-1.7152", "0.0", r"scene.yaml: robot\[0\].q: joint 'panda_joint4' starts at 0.0, outside its limits"),
    ("colliders:", "coliders:\n  - {type: plane}\nrobot:", r"scene.yaml:10: coliders: unknown key"),
])
def test_value_errors_name_the_file_line_and_key_path(tmp_path, old, new, message):
    """A bad value or a missing key names file:line and the key path; a missing key that is misspelled says so;
    the model's own checks (a start outside the joint limits) name the file too; a misspelled top-level key is
    named before the build, whose errors would otherwise come first (issue 32)."""
    with pytest.raises(ModelError, match=message):
        load_scene(write(tmp_path, GOOD.replace(old, new, 1)))


def test_the_top_level_keys_are_those_the_loader_reads(monkeypatch):
    """TOP_LEVEL_KEYS (the early misspelling check) holds every key the loader asks for at the top."""
    import glob

    from cond_ros.resources import config_dir
    from cond_ros.scenes import scene
    asked = set()
    check = scene._Spec.check_unknown

    def noting(self):
        asked.update(self.registry[0].asked)
        return check(self)
    monkeypatch.setattr(scene._Spec, "check_unknown", noting)
    for path in glob.glob(f"{config_dir()}/*.yaml"):
        scene.load_scene(path, script=True)
    assert asked == set(scene.TOP_LEVEL_KEYS)


def test_every_packaged_scene_uses_known_keys_only():
    """Every scene the package ships loads with the unknown-key check, with and without its script."""
    from cond_ros.scenes import load_named_scene, scene_names
    for name in scene_names():
        load_named_scene(name, script=False)


@pytest.mark.parametrize("segments", [160, 320, 640])
def test_the_cable_scene_holds_the_papers_threshold_up_to_320_segments_and_its_rms_per_dof_beyond(segments):
    """panda_cable's theta_th is the paper's 1e-4 m/s, exactly, up to the paper's 320 segments (1928 DOFs: 6 a
    segment and the Panda's 8); a finer cable keeps the root-mean-square change per DOF that 1e-4 allows at 320."""
    from cond_ros.scenes import edited_scene

    def edit(data):
        data["cables"][0]["segments"] = segments
    solver = edited_scene("panda_cable", edit).simulator.solver
    dofs = 6 * segments + 8
    assert solver.model.dof_count == dofs and solver.tolerance == 1e-4
    if segments <= 320:
        assert solver.stopping_threshold == 1e-4
    else:
        assert solver.stopping_threshold / np.sqrt(dofs) == pytest.approx(1e-4 / np.sqrt(1928), rel=1e-14)
