"""Collision: static colliders, contacts between owners, and the step's contacts as nodes (contact
nodalization, Sec. III-A)."""
