"""Small robot files for the tests: a URDF arm hanging from a fixed base."""
from __future__ import annotations

_LINK = """  <link name="{name}"><inertial><origin xyz="0 0 -0.2"/><mass value="{mass}"/>
    <inertia ixx="0.02" iyy="0.02" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
"""
_JOINT = """  <joint name="{name}" type="revolute"><parent link="{parent}"/><child link="{child}"/>
    <origin xyz="0 0 {z}" rpy="{tilt} 0 0"/><axis xyz="1 0 0"/><limit lower="-3" upper="3" effort="50" velocity="5"/>
    <dynamics damping="{damping}"/></joint>
"""


def arm_urdf(name: str = "arm", joints: int = 2, upper_mass: float = 1.0, damping: float = 0.1,
             tilt: float = 0.5) -> str:
    """The URDF of an arm of ``joints`` revolute joints (shoulder, elbow) about x, hanging from a 2 kg
    base at 1 m, its first link of ``upper_mass`` kg tilted by ``tilt`` rad at the start pose."""
    links = [("upper", upper_mass), ("lower", 1.0)][:joints]
    text = f'<robot name="{name}">\n' + _LINK.format(name="base", mass=2.0)
    for k, (link, mass) in enumerate(links):
        text += _LINK.format(name=link, mass=mass)
        text += _JOINT.format(name=("shoulder", "elbow")[k], parent=("base", "upper")[k], child=link,
                              z=(1.0, -0.4)[k], tilt=(tilt, 0.3)[k], damping=damping)
    return text + "</robot>\n"
