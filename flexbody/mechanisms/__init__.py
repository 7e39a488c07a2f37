"""Ready-made systems of the sources: rigid mechanisms (particle on a circle, slider-crank, four-bar,
RSSR loop, arms on a line or sphere, branching loops, the coupled chain, the parallel platform, the
under-actuated chain, Andrews' squeezer) and rigid-flexible ones (flexible and plate pendulums, cantilever, arm with a
beam (full or reduced), a robot from its URDF holding a flexible tool).

May import: errors, deprecation, fem, rigid, reduced, constraints, system.
"""

from .flexible import (
    TOOL_AXES,
    arm_with_beam,
    arm_with_reduced_beam,
    cantilever,
    flexible_pendulum,
    plate_pendulum,
    robot_with_tool,
)
from .rigid import (
    branching_loops,
    coupled_chain,
    four_bar,
    parallel_platform,
    particle_on_circle,
    planar_arm_on_line,
    rssr_loop,
    slider_crank,
    spatial_arm_on_sphere,
    underactuated_chain,
)
from .squeezer import andrews_squeezer

__all__ = [
    "robot_with_tool",
    "TOOL_AXES",
    "branching_loops",
    "coupled_chain",
    "four_bar",
    "parallel_platform",
    "particle_on_circle",
    "planar_arm_on_line",
    "rssr_loop",
    "slider_crank",
    "spatial_arm_on_sphere",
    "underactuated_chain",
    "andrews_squeezer",
    "arm_with_beam",
    "arm_with_reduced_beam",
    "cantilever",
    "flexible_pendulum",
    "plate_pendulum",
]
