"""The checks of a whole module that devplan runs after the op verifiers: the placement
attributes of the `vdev` dialect, then a `vdev.system` given in the module.

`devplan.parse`, `devplan.apply`, devplan-opt and `default-pipeline` (after each of its
passes) all run this one list: `verify_located(module, MODULE_VERIFIERS)`.
"""

from __future__ import annotations

from xdsl.ir import Operation

from ..diagnostics import ModuleVerifier
from ..dialects.vdev import verify_placement_attributes


def verify_system_attribute(module: Operation) -> None:
    """The module verifier of `vdev.system`: it loads the system description (and the
    device kinds it names) only when a module is verified, not on `import devplan`."""
    from .description import verify_system_attribute as verify

    verify(module)


MODULE_VERIFIERS: tuple[ModuleVerifier, ...] = (
    verify_placement_attributes,
    verify_system_attribute,
)
