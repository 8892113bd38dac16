"""Random mechanisms for cross-checks against reference engines (tooling, as Pinocchio's
sample models: the test suite and bench/ draw their random trees here)."""
from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from fmu_mb.model import GROUND, Body, Joint, Mechanism, Support


def random_inertia(rng):
    """A physically valid inertia about the centre of mass: principal moments from a
    random box, rotated randomly."""
    m = rng.uniform(0.2, 5.0)
    a, b, c = rng.uniform(0.05, 0.8, 3)
    I = m / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    R = Rotation.random(random_state=rng).as_matrix()
    return m, R @ I @ R.T


def random_tree(seed: int, n_links: int = 6, base: str | None = None, kinds=("revolute", "prismatic"),
                with_spherical: bool = False) -> Mechanism:
    """A random tree: ``base`` None (fixed), 'springs' (free joint on 4 exact supports)
    or 'linearized' (same supports, paper 001 linearization)."""
    rng = np.random.default_rng(seed)
    mech = Mechanism(f"tree{seed}", gravity=tuple(rng.normal(0, 1, 3) + np.array([0, 0, -9.81])))
    names = []
    if base is not None:
        m, I = random_inertia(rng)
        mech.add(Body("base", m * 5, tuple(rng.normal(0, 0.1, 3)), I * 5),
                 Joint("base_joint", "free", GROUND, "base"))
        for corner in ((0.5, 0.4, -0.1), (-0.5, 0.4, -0.1), (-0.5, -0.4, -0.1), (0.5, -0.4, -0.1)):
            mech.supports.append(Support("base", corner, tuple(rng.uniform(1e4, 1e5, 3)),
                                         tuple(rng.uniform(10, 100, 3))))
        mech.support_model = "exact" if base == "springs" else "linearized"
        names.append("base")
    kinds = list(kinds) + (["spherical", "universal"] if with_spherical else [])
    for i in range(n_links):
        parent = GROUND if not names else names[rng.integers(0, len(names))]
        if base is not None and i == 0:
            parent = "base"
        kind = kinds[rng.integers(0, len(kinds))]
        m, I = random_inertia(rng)
        name = f"l{i}"
        R0 = Rotation.random(random_state=rng).as_matrix()
        mech.add(Body(name, m, tuple(rng.normal(0, 0.3, 3)), I),
                 Joint(f"j{i}", kind, parent, name, origin=tuple(rng.normal(0, 0.5, 3)), rotation=R0,
                       axis=tuple(rng.normal(0, 1, 3)),
                       axes=(tuple(rng.normal(0, 1, 3)), tuple(rng.normal(0, 1, 3)))))
        names.append(name)
    return mech
