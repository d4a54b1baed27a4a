"""The browser 3D view (viser: a three.js page served from Python): the scene, live or played back, with
play / pause / step / reset, a real-time-factor slider, a toggle per layer and the F/T plot of the last 10 s.

The buttons call a ``controls`` object (:class:`Controls`); whoever steps the physics owns it (``cond-ros
run``'s loop, the ROS node), so the viewer never steps anything itself. :meth:`SceneViewer.show` draws one
:class:`~cond_ros.view.layout.Frame`; :class:`~cond_ros.view.live.LiveView` calls it at its own frame rate.
"""
from __future__ import annotations

import collections
import threading
from typing import Protocol

import numpy as np
import trimesh

from .extra import import_viser
from .layout import (BODY_COLOR, CABLE_COLOR, COLLIDER_COLOR, ROBOT_COLOR, SOFT_BODY_COLOR, Frame, Layout,
                     collider_mesh, nice_scale, wxyz)

PLOT_WINDOW_S = 10.0
ARROW_LENGTH_M = 0.06  # the largest contact force is drawn at most about this long when the scale is chosen
FT_ARROW_LENGTH_M = 0.15
FORCE_COLOR, FT_FORCE_COLOR, FT_TORQUE_COLOR, CONTACT_COLOR = (250, 210, 0), (230, 40, 40), (40, 90, 230), (220, 20, 20)
RTF_SLIDER = (0.0, 4.0, 0.05)  # 0: as fast as possible
# a robot up to this many vertices goes to the page as one mesh a frame: one message instead of two per link,
# which cost the stepping thread ~1 ms a frame at the Panda's 14 links (viser checks each value it is given)
ONE_MESH_VERTICES = 20_000
PLOT_EVERY = 3  # frames between two updates of the F/T plot (10 Hz at 30 frames a second)


def announce(url: str) -> None:
    print(f"viewer: {url}  (open it in a browser; Ctrl-C ends the run)", flush=True)


def _length(metres: float) -> str:
    return f"{metres:.3g} m" if metres >= 1.0 else f"{1e3 * metres:.3g} mm"


class Controls(Protocol):
    """What the viewer's buttons do; each returns the one-line answer the viewer shows."""

    paused: bool
    real_time_factor: float

    def play(self) -> str: ...

    def pause(self) -> str: ...

    def step(self) -> str: ...

    def reset(self) -> str: ...

    def set_real_time_factor(self, value: float) -> str: ...


class SceneViewer:
    """Serves the page of one scene layout on ``host:port`` (port 0: a free one). ``controls`` None: no buttons
    (a still view); ``timeline``: (start, end) [s] and a callback(t) for a playback's time slider."""

    def __init__(self, layout: Layout, *, host: str = "127.0.0.1", port: int = 8080, controls=None,
                 title: str = "cond_ros", timeline=None, plot_series=()):
        viser = import_viser()
        self.viser = viser
        self.layout = layout
        self.controls = controls
        self.server = viser.ViserServer(host=host, port=port, label=title, verbose=False)
        self.url = f"http://{host}:{self.server.get_port()}"
        # viser moves on to the next free port when the one asked for is taken: say so where the URL is printed
        self.port_note = (f" (port {port} is taken)" if port and self.server.get_port() != port else "")
        self._lock = threading.Lock()
        self._force_scale = None
        self._plot = collections.deque()  # (t, fx, fy, fz, tx, ty, tz)
        self._plot_frames = 0
        self._extra_series = list(plot_series)  # (label, times, values (N, 3)) drawn beside the live force
        self._last_frame: Frame | None = None
        self._notes = []
        self._framed = False
        self.playback = timeline is not None
        self._build_scene()
        self._build_gui(title, timeline)

    # -- the 3D scene ------------------------------------------------------------------------------------

    def _build_scene(self) -> None:
        scene, layout = self.server.scene, self.layout
        scene.set_up_direction("+z")
        scene.add_grid("/grid", width=4.0, height=4.0, cell_size=0.1, section_size=1.0, position=(0, 0, -0.0005))
        self.nodes = collections.defaultdict(list)  # layer -> handles
        for i, shape in enumerate(layout.colliders):
            mesh = collider_mesh(shape)
            self.nodes["colliders"].append(scene.add_mesh_simple(
                f"/colliders/{shape.kind}{i}", mesh.vertices, mesh.faces, color=COLLIDER_COLOR, opacity=0.6,
                wxyz=wxyz(shape.pose[:3, :3]), position=shape.pose[:3, 3], flat_shading=True))
        self.robots = [self._add_robot(robot) for robot in layout.robots]
        self.cables = []
        for cable in layout.cables:
            tube = trimesh.creation.cylinder(radius=cable.radius, height=float(np.mean(cable.segment_lengths)),
                                             sections=12)
            count = len(cable.bodies)
            handle = scene.add_batched_meshes_simple(
                f"/cables/{cable.name}", np.asarray(tube.vertices, np.float32), np.asarray(tube.faces, np.uint32),
                batched_wxyzs=np.tile([1.0, 0, 0, 0], (count, 1)), batched_positions=np.zeros((count, 3)),
                batched_colors=CABLE_COLOR, lod="off")
            self.cables.append(handle)
            self.nodes[f"cable {cable.name}"] = [handle]
        self.soft = []
        for body in layout.soft_bodies:
            handle = scene.add_mesh_simple(f"/soft_bodies/{body.name}", np.zeros((len(body.nodes), 3), np.float32),
                                           body.faces, color=SOFT_BODY_COLOR, side="double")
            self.soft.append(handle)
            self.nodes[f"FEM {body.name}"] = [handle]
        self.bodies = []
        for body, mesh in layout.bodies:
            handle = scene.add_mesh_simple(f"/bodies/body{body}", mesh.vertices, mesh.faces, color=BODY_COLOR)
            self.bodies.append(handle)
            self.nodes["rigid bodies"].append(handle)
        self.contact_points = scene.add_point_cloud("/contacts/points", np.zeros((0, 3), np.float32), CONTACT_COLOR,
                                                    point_size=0.006, point_shape="circle")
        self.nodes["contact points"] = [self.contact_points]
        self.contact_forces = scene.add_arrows("/contacts/forces", np.zeros((0, 2, 3), np.float32), FORCE_COLOR,
                                               shaft_radius=0.0015, head_radius=0.004, head_length=0.01)
        self.nodes["contact forces"] = [self.contact_forces]
        self.ft = []
        for name in layout.sensors:
            arrows = scene.add_arrows(f"/ft/{name}", np.zeros((0, 2, 3), np.float32), FT_FORCE_COLOR,
                                      shaft_radius=0.003, head_radius=0.008, head_length=0.02)
            self.ft.append(arrows)
            self.nodes[f"F/T {name}"].append(arrows)

    def _add_robot(self, robot) -> tuple:
        """A robot as one mesh whose vertices move with their links (one message a frame), or, past
        :data:`ONE_MESH_VERTICES` (detailed visual meshes), as a frame per link that carries its mesh:
        ("mesh", handle, (link, first vertex, end) spans, link-frame vertices) or ("frames", handles)."""
        scene, meshes = self.server.scene, robot.link_meshes
        if sum(len(m.vertices) for m in meshes.values()) <= ONE_MESH_VERTICES:
            spans, vertices, faces, count = [], [], [], 0
            for link, mesh in sorted(meshes.items()):
                spans.append((link, count, count + len(mesh.vertices)))
                vertices.append(mesh.vertices)
                faces.append(mesh.faces + count)
                count += len(mesh.vertices)
            local = np.vstack(vertices).astype(np.float64) if vertices else np.zeros((0, 3))
            handle = scene.add_mesh_simple(f"/robots/{robot.name}", local.astype(np.float32),
                                           np.vstack(faces) if faces else np.zeros((0, 3), np.uint32),
                                           color=ROBOT_COLOR)
            self.nodes[f"robot {robot.name}"] = [handle]
            return ("mesh", handle, spans, local)
        handles = []
        for link, name in enumerate(robot.link_names):
            frame = scene.add_frame(f"/robots/{robot.name}/{name}", show_axes=False)
            if link in meshes:
                scene.add_mesh_simple(f"/robots/{robot.name}/{name}/geometry", meshes[link].vertices,
                                      meshes[link].faces, color=ROBOT_COLOR)
            handles.append(frame)
        self.nodes[f"robot {robot.name}"] = handles
        return ("frames", handles)

    def _show_robot(self, robot: tuple, poses: np.ndarray) -> None:
        if robot[0] == "mesh":
            _, handle, spans, local = robot
            world = np.empty(local.shape, np.float32)
            for link, first, end in spans:
                world[first:end] = local[first:end] @ poses[link, :3, :3].T + poses[link, :3, 3]
            handle.vertices = world
        else:
            for handle, pose in zip(robot[1], poses):
                handle.wxyz, handle.position = wxyz(pose[:3, :3]), pose[:3, 3]

    # -- the panel ---------------------------------------------------------------------------------------

    def _build_gui(self, title: str, timeline) -> None:
        gui = self.server.gui
        gui.configure_theme(control_width="large", dark_mode=False, show_share_button=False)
        gui.add_markdown(f"**{title}**")
        self.status = gui.add_markdown(self._status_text(None))
        if self.controls is not None:
            row = gui.add_button_group("simulation", ("Play", "Pause", "Step", "Reset"))
            row.on_click(lambda event: self._control(event.target.value))
            low, high, step = RTF_SLIDER
            self.rtf_slider = gui.add_slider("real-time factor", low, high, step,
                                             float(np.clip(self.controls.real_time_factor, low, high)),
                                             hint="target simulated / wall time; 0 = as fast as possible")
            self.rtf_slider.on_update(lambda _: self._control("rtf"))
            self.answer = gui.add_markdown("")
        self.timeline = None
        if timeline is not None:
            (start, end), self._seek = timeline
            self.timeline = gui.add_slider("time [s]", start, max(end, start + 1e-3), 1e-3, start)
            self.timeline.on_update(lambda _: self._seek(self.timeline.value))
        names = self.layout.sensors[:1]
        self.plot = self.torque_plot = None
        if names or self._extra_series:
            uplot = self.viser.uplot
            line = dict(points=uplot.Series_Points(show=False))
            name = names[0] if names else "F/T"

            def axes(label, unit, **style):
                return [uplot.Series(label=f"{label} {axis} [{unit}]", stroke=color, **style, **line)
                        for axis, color in zip("xyz", ("red", "green", "blue"))]
            series = [uplot.Series(label="t [s]"), *axes(name, "N", width=1.5)]
            for label, _, _ in self._extra_series:
                series += axes(label, "N", width=1.0, dash=(6, 4))
            options = dict(scales={"x": uplot.Scale(time=False)}, aspect=1.6)
            self.plot = gui.add_uplot(self._plot_data(), tuple(series), title="F/T force, last 10 s (world axes)",
                                      **options)
            self.torque_plot = gui.add_uplot(self._plot_data(torque=True),
                                             (uplot.Series(label="t [s]"), *axes(name, "N m", width=1.5)),
                                             title="F/T torque, last 10 s (world axes)", **options)
        with gui.add_folder("Layers"):
            for layer, handles in self.nodes.items():
                box = gui.add_checkbox(layer, True)
                box.on_update(lambda _, box=box, handles=handles: [setattr(h, "visible", box.value) for h in handles])
        self.legend = gui.add_markdown(self._legend_text())

    def _control(self, what: str) -> None:
        controls = self.controls
        try:
            if what == "rtf":
                answer = controls.set_real_time_factor(float(self.rtf_slider.value))
            else:
                answer = {"Play": controls.play, "Pause": controls.pause, "Step": controls.step,
                          "Reset": controls.reset}[what]()
        except Exception as exc:  # noqa: BLE001 (a button must never take the viewer down; say why it failed)
            answer = f"{what} failed: {type(exc).__name__}: {exc}"
        self.answer.content = answer
        if what == "Reset":
            with self._lock:
                self._plot.clear()

    def _status_text(self, frame: Frame | None) -> str:
        state = "" if self.controls is None else "paused" if self.controls.paused else "playing"
        if self.playback:
            speed = f"  \nspeed: {self.controls.real_time_factor:g}x" if self.controls is not None else ""
            return (f"recorded time: {frame.time if frame else 0.0:.6f} s  \nsample: {frame.step if frame else 0}"
                    f"{speed}  \nstate: {state}")
        if frame is None:
            return f"sim time: 0.000000 s  \nstep: 0  \nstate: {state or 'waiting'}"
        return (f"sim time: {frame.time:.6f} s  \nstep: {frame.step}  \n"
                f"real-time factor: {frame.real_time_factor:.2f}  \nsolver iterations: {frame.iterations}  \n"
                f"contacts: {len(frame.contact_points)}  \nstate: {state}")

    def _frame_camera(self, frame: Frame) -> None:
        """Point the camera of every page opened from now on at what the scene holds (robots, cables, FEM
        bodies and the colliders other than planes), from the front right and above."""
        points = [poses[:, :3, 3] for poses in frame.link_poses]
        points += [centres for centres, _ in frame.cable_poses] + list(frame.soft_body_vertices)
        points += [shape.pose[:3, 3][None] for shape in self.layout.colliders if shape.kind != "plane"]
        points = np.vstack(points) if points else np.zeros((1, 3))
        low, high = points.min(axis=0), points.max(axis=0)
        centre, radius = 0.5 * (low + high), max(0.5 * float(np.linalg.norm(high - low)), 0.05)
        direction = np.array([1.0, -1.3, 0.8]) / np.linalg.norm([1.0, -1.3, 0.8])
        position = centre + 2.6 * radius * direction  # the bounding sphere fills ~80 % of the height at 50 degrees
        camera = self.server.initial_camera
        camera.look_at, camera.position, camera.up, camera.fov = centre, position, (0.0, 0.0, 1.0), np.radians(50.0)
        for client in self.server.get_clients().values():  # a page opened before the first frame
            client.camera.look_at, client.camera.position = centre, position
        self._framed = True

    def _legend_text(self) -> str:
        lines = [f"robot {r.name}: {len(r.link_names)} links ({r.source})" for r in self.layout.robots]
        lines += [f"cable {c.name}: {len(c.bodies)} segments, radius {1e3 * c.radius:.1f} mm"
                  for c in self.layout.cables]
        lines += [f"FEM {s.name}: {s.node_count} nodes, {len(s.faces)} surface triangles"
                  for s in self.layout.soft_bodies]
        if self._force_scale is not None:
            lines.append(f"contact force arrows: {_length(self._force_scale)} per N")
        if self.layout.sensors:
            lines.append(f"F/T arrows: force red, {_length(self._ft_scale())} per N; torque blue, "
                         f"{_length(10 * self._ft_scale())} per N m")
        return "  \n".join(lines + self._notes)

    def note(self, text: str) -> None:
        """A line under the scene's legend (what this view leaves out, and why)."""
        self._notes.append(f"*{text}*")
        self.legend.content = self._legend_text()

    def _ft_scale(self) -> float:
        return FT_ARROW_LENGTH_M / 20.0  # 20 N at full length: the cable's tool forces are a few N

    def _plot_data(self, *, torque: bool = False) -> tuple:
        rows = np.array(self._plot, float).reshape(-1, 7)
        if torque:
            return rows[:, 0], rows[:, 4], rows[:, 5], rows[:, 6]
        data = [rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3]]
        if self._extra_series:
            t = rows[:, 0]
            for _, times, values in self._extra_series:
                for axis in range(3):
                    data.append(np.interp(t, times, values[:, axis], left=np.nan, right=np.nan) if len(t) else t)
        return tuple(data)

    # -- one frame ---------------------------------------------------------------------------------------

    def show(self, frame: Frame, *, history: np.ndarray | None = None) -> None:
        """Draw ``frame``; ``history`` (rows of t, force, torque) replaces the plot's data (a playback)."""
        if not self._framed:
            self._frame_camera(frame)
        with self.server.atomic():
            for robot, poses in zip(self.robots, frame.link_poses):
                self._show_robot(robot, poses)
            for handle, (centres, quats) in zip(self.cables, frame.cable_poses):
                handle.batched_positions, handle.batched_wxyzs = centres.astype(np.float32), quats
            for handle, vertices in zip(self.soft, frame.soft_body_vertices):
                handle.vertices = vertices.astype(np.float32)
            for handle, (position, quat) in zip(self.bodies, frame.body_poses):
                handle.position, handle.wxyz = position, quat
            self._show_contacts(frame)
            self._show_ft(frame, history)
            self.status.content = self._status_text(frame)
        self._last_frame = frame

    def _show_contacts(self, frame: Frame) -> None:
        self.contact_points.points = frame.contact_points.astype(np.float32)
        forces = frame.contact_forces
        largest = float(np.linalg.norm(forces, axis=1).max()) if len(forces) else 0.0
        if largest > 0 and (self._force_scale is None or largest * self._force_scale > 3 * ARROW_LENGTH_M):
            self._force_scale = nice_scale(largest, ARROW_LENGTH_M)
            self.legend.content = self._legend_text()
        scale = self._force_scale or 0.0
        start = frame.contact_points
        self.contact_forces.points = np.stack([start, start + scale * forces], axis=1).astype(np.float32)

    def _show_ft(self, frame: Frame, history) -> None:
        scale = self._ft_scale()
        for handle, reading in zip(self.ft, frame.ft):
            if reading is None:
                continue
            pose, force, torque = reading
            origin = pose[:3, 3]
            handle.points = np.array([[origin, origin + scale * force], [origin, origin + 10 * scale * torque]],
                                     np.float32)
            handle.colors = np.array([[FT_FORCE_COLOR] * 2, [FT_TORQUE_COLOR] * 2], np.uint8)
        if self.plot is None:
            return
        with self._lock:
            if history is not None:
                self._plot = collections.deque(map(tuple, history))
            elif frame.ft and frame.ft[0] is not None:
                _, force, torque = frame.ft[0]
                if self._plot and frame.time < self._plot[-1][0]:
                    self._plot.clear()  # a reset: the plot starts over
                self._plot.append((frame.time, *force, *torque))
                while self._plot and self._plot[0][0] < frame.time - PLOT_WINDOW_S:
                    self._plot.popleft()
            self._plot_frames += 1
            if history is not None or self._plot_frames % PLOT_EVERY == 0:
                self.plot.data = self._plot_data()
                self.torque_plot.data = self._plot_data(torque=True)

    def set_timeline(self, t: float) -> None:
        if self.timeline is not None:
            self.timeline.value = t

    def refresh_status(self) -> None:
        """Redraw the status (a pause shows at once, even with no new frame)."""
        self.status.content = self._status_text(self._last_frame)

    def close(self) -> None:
        self.server.stop()
