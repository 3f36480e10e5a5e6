"""INLP (Ravfogel et al. 2020): train NON-PRIV, then remove linearly decodable attribute information from
its representation r = E(h) by iterated null-space projection, and retrain the classifier on P·r.

Each iteration fits one linear classifier (logistic regression) per protected attribute on the currently
projected training representations and adds its weight rows to the removed directions; P projects onto
the intersection of the null spaces of all rows so far (Ravfogel et al. §3). A fresh classifier head is
then trained on P·E(h) with E frozen, selected on dev like NON-PRIV; the released representation is P·E(h). ``n_iter`` defaults to 5, within FEDERATE's range 2–7 for small data (15–45 for Bios).
"""

from __future__ import annotations

from privtext.methods.spec import FEDERATE_FAMILY, MethodSpec

SPEC = MethodSpec("inlp", grid_params=("n_iter",), defaults={**FEDERATE_FAMILY, "n_iter": 5, "attributes": None},
                  model="privtext.methods.inlp_model:INLP",
                  label="INLP", colour="#CC79A7", marker="v")
