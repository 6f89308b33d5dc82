"""HASFL's training plan and runs on the shared split engine: :mod:`.experiments` (the result store, pilot constants,
problems of the notebooks), :mod:`.training` (settings, decisions, the clock, one cached run), :mod:`.train_run`
(the training record, under its own code hash), :mod:`.train_config`, :mod:`.train_jobs`, :mod:`.train_plan` (the
runs of Figs. 2a-11, claim ratios), :mod:`.plan_analysis` and :mod:`.calibrate` (our bound calibrated on fixed-cut
runs)."""
