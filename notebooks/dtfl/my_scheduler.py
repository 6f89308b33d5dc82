"""A tier scheduler of my own for DTFL: the tiers DTFL's rule chooses once every client has been observed, then
kept for the rest of the run (notebooks/dtfl/dtfl_your_method.ipynb runs it as ``"my_scheduler:StaticTiers"``).

DTFL's scheduler (Sec. 3.3, Algorithm 1 lines 21-35) re-assigns every client's tier every round from the moving
average of its observed times, so a client whose CPU or link changes is moved to another tier. This variant asks
what that re-scheduling is worth: it assigns by DTFL's own rule (the largest tier whose estimated time is within the
straggler's, T_max = max_k min_m T̂_k(m)) at the first round where every client has an observation, and never
changes a tier again, whatever the clients' resources do afterwards. Records are keyed by this module's source: edit
it and only its runs are trained again.
"""
import numpy as np

from fedlib.dtfl import TierScheduler


class StaticTiers(TierScheduler):
    """DTFL's tier assignment, frozen once every client has been observed (the module docstring).

    Built by the library like DTFL's own scheduler, ``StaticTiers(time_model, num_clients, alpha, initial_tier,
    min_tier)``; :meth:`assign` returns ``[K]`` tiers in min_tier..M each round."""

    frozen = None

    def assign(self, mbps, samples, mask=None):
        if self.frozen is not None:
            return self.frozen.copy()
        tiers = super().assign(mbps, samples, mask)              # DTFL's rule (Algorithm 1 lines 31-33)
        if not np.isnan(self.estimate(mbps, samples)[:, 0]).any():   # every client observed: keep these tiers
            self.frozen = tiers.copy()
        return tiers
