"""Names of an imported robot made distinct identifiers (URDF and MJCF import).

A robot file names links and joints in separate namespaces and freely (``LF_HAA`` may be a link
and a joint, ``base-link.001`` is legal); fmu_mb needs identifiers that are distinct across both,
since they become FMU variable names (``LF_HAA.q``, ``forearm.tip_w``) and model-file names. The
scheme (documented in docs/mechanisms.md, "What is repaired, what is refused"):

* every name becomes an identifier (:func:`fmu_mb.registry.identifier`: other characters → ``_``);
* joints keep that identifier (their names carry the FMU's inputs and outputs), unless it is
  reserved or taken by an earlier joint: then ``_joint`` is appended (``_joint2``, … if needed);
* links keep theirs unless a joint, an earlier link or a reserved word has it: then ``_link``
  (``_link2``, …) is appended;
* the reserved words are the world frame ``ground``, the variable prefixes ``model`` and
  ``solver``, and the base joints fmu_mb adds (``floating_base``, ``<root>_fixed``).

Every rename is reported: one warning per reserved word, one listing the link/joint clashes.
"""
from __future__ import annotations

from ..model.constraints import GROUND
from ..registry import identifier

#: words no imported link or joint may be called (world frame, variable prefixes, added base joints)
RESERVED = (GROUND, "model", "solver", "floating_base")


def _fresh(base: str, suffix: str, taken: set) -> str:
    name, k = f"{base}{suffix}", 2
    while name in taken:
        name, k = f"{base}{suffix}{k}", k + 1
    return name


def distinct_names(links: list[str], joints: list[str], root: str | None = None) -> tuple[dict, dict, list]:
    """({link name: identifier}, {joint name: identifier}, warnings) by the module's scheme;
    ``root``: the root link's name in the file (its added fixed joint ``<root>_fixed`` is reserved)."""
    warnings, clashes = [], []
    reserved = set(RESERVED)
    link_ids: dict[str, str] = {}
    taken: set = set()
    # the root link first: the added base joint's name derives from its identifier
    order = ([root] if root is not None else []) + [n for n in links if n != root]
    joint_taken: set = {identifier(j) for j in joints}
    for name in order:
        ident = identifier(name)
        if ident in reserved or ident in taken or ident in joint_taken:
            new = _fresh(ident, "_link", taken | joint_taken | reserved)
            if ident in reserved:
                warnings.append(f"link '{name}' is renamed '{new}' ('{ident}' is reserved: "
                                + ("the fixed world frame)" if ident == GROUND else "a name fmu_mb uses itself)"))
            elif ident in joint_taken:
                clashes.append(f"{name} → {new}")
            else:
                warnings.append(f"link '{name}' is renamed '{new}' (another link's name gives the same identifier "
                                f"'{ident}')")
            ident = new
        link_ids[name] = ident
        taken.add(ident)
    if root is not None:
        reserved.add(f"{link_ids[root]}_fixed")
    joint_ids: dict[str, str] = {}
    jtaken: set = set(taken)
    for name in joints:
        ident = identifier(name)
        if ident in reserved or ident in jtaken - taken:
            new = _fresh(ident, "_joint", jtaken | reserved)
            why = ("is reserved: a name fmu_mb uses itself" if ident in reserved else
                   "is taken by another joint's identifier")
            warnings.append(f"joint '{name}' is renamed '{new}' ('{ident}' {why})")
            ident = new
        joint_ids[name] = ident
        jtaken.add(ident)
    if clashes:
        warnings.append("links named like a joint get the suffix _link (links and joints share FMU variable "
                        f"names): {', '.join(clashes)}")
    return link_ids, joint_ids, warnings
