"""Kinematics: rigid-body poses and point Jacobians, articulated robots in joint coordinates (loaded from
URDF), and inverse kinematics for a tool frame."""
