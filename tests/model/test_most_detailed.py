"""Each model file's MOST_DETAILED (fmu_mb.registry.most_detailed): the one list of "full detail" that the
benchmarks, the accuracy tests and the mechanism pages read (they each wrote it out before, six copies)."""
from __future__ import annotations

import itertools

import pytest

from fmu_mb import registry
from fmu_mb.model import compile_mechanism
from fmu_mb.model import options as opt

MODELS = registry.available()


@pytest.mark.parametrize("name", MODELS)
def test_most_detailed_has_the_most_states_of_any_choice(name):
    """Full detail turns every physical effect on: no combination of the model's Choice and Flag options (Count
    options at their defaults) compiles to more state variables (flexible links, sprung bases, friction
    bristles) than MOST_DETAILED does with the other options at their defaults."""
    mod = registry.load(name)
    detail = registry.most_detailed(name)
    axes = {k: (list(o.values) if isinstance(o, opt.Choice) else [False, True])
            for k, o in getattr(mod, "OPTIONS", {}).items() if isinstance(o, (opt.Choice, opt.Flag))}
    assert set(detail) <= set(getattr(mod, "OPTIONS", {})), detail
    most = compile_mechanism(mod.build(**detail)).model.nx
    for combo in itertools.product(*axes.values()):
        options = dict(zip(axes, combo))
        assert compile_mechanism(mod.build(**options)).model.nx <= most, (options, detail)


def test_options_become_the_fmu_parameter_values():
    """A Choice becomes the index of its value (the FMU's Integer), read back by the option's own check; an
    unknown option is refused with the ones there are."""
    for name in MODELS:
        mod, detail = registry.load(name), registry.most_detailed(name)
        for key, value in registry.as_fmu_parameters(name, detail).items():
            option = key.removeprefix("model.")
            assert mod.OPTIONS[option].check(key, value) == detail[option]
    assert registry.as_fmu_parameters("crane", {"link": "flexible", "damping": 0.0}) == {"model.link": 1,
                                                                                          "model.damping": 0.0}
    with pytest.raises(KeyError, match="model 'crane' has no option 'links' \\(options: link, n_div"):
        registry.as_fmu_parameters("crane", {"links": "flexible"})
