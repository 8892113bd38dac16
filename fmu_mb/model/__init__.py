"""Mechanism descriptions (dataclasses), their validation and compilation to flat arrays."""
from .compile import CompiledMechanism, compile_mechanism
from .compiled import Data, Model, make_data
from .description import GROUND, Beam, Body, BodyForce, Joint, Mechanism, Point, Support
from .friction import CoulombViscous, Dahl, FixedLoad, Friction, Journal, LuGre, PinBearing, Stribeck
from .inertia import from_pseudo_inertia, pseudo_inertia

__all__ = ["GROUND", "Beam", "Body", "BodyForce", "CompiledMechanism", "CoulombViscous", "Dahl", "Data", "FixedLoad", "Friction",
           "Joint", "Journal", "LuGre", "Mechanism", "Model", "PinBearing", "Point", "Stribeck", "Support",
           "compile_mechanism", "from_pseudo_inertia", "make_data", "pseudo_inertia"]
