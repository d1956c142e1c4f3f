"""plan-devices: TVM's PlanDevices for level-1 programs (`planner.py`), with the cost-aware
strategy (`cost_strategy.py`) and the min-cut placement algorithm it solves
(`placement_cost.py`)."""

from .planner import PlanDevicesPass

__all__ = ["PlanDevicesPass"]
