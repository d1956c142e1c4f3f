"""plan-devices: TVM's PlanDevices for level-1 programs (`planning.py` holds the pass and
its algorithm; `planner.py` phases 1-4, `rewrite.py` phase 5, `specialisation.py` the
clones of callees), with the cost-aware strategy (`cost_strategy.py`) and the min-cut
placement algorithm it solves (`placement_cost.py`). Placement domains, the union-find
the phases share, are `analysis/placement_domains.py`."""

from .planning import PlanDevicesPass

__all__ = ["PlanDevicesPass"]
