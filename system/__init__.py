"""The system description (`description.py`), device identities (`devices.py`) and the
cost model (`cost.py`): below the passes and the runtime, importing neither."""
