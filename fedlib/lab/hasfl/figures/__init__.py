"""HASFL's figures: :mod:`.plots` (latency, bound and optimiser figures) and :mod:`.train_plots` (the training
figures). They compute no record, so a figure edit redraws from the result store."""
