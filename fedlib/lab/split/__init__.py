"""The split engine's lab: its benchmark (:mod:`.bench`, ``python -m fedlib.lab.bench sfl``) and the round timeline
figure (:mod:`.timeline`). The literal per-device reference the tests (and the benchmark's per-client loop) hold the
engine to is ``tests/reference_split.py``."""
