"""Beyond NTHR (notebook 07): THR weights both ways, the NLL and SMAUG-style regularisers, clip-higher.

The methods' names live here; tiny_model's own versions of the functions notebook 07 grades
are in reference.py (07's take tokens and validate their inputs; docs/notebook-07-plan.md),
the one module of tiny_model that implements graded maths. Training calls the seam's (seam.py)
07 functions when they are set and reference.py's otherwise; every other graded quantity (advantages,
sequence log likelihoods, the NTHR token scores and threshold) comes through the seam from
notebooks 05 and 06. The clipped surrogate's own version is reference.grpo_loss.

THR (token hidden reward; Deng et al., arXiv 2510.03669) is a token's first-order influence on
the likelihood of the group's correct responses under a GRPO step. A step on token (j, k) with
advantage A_j moves ln pi(y_i+) by about lr * A_j * sum_{k'} <e_jk, e_ik'> <h_jk, h_ik'> (the
NTHR derivation of arXiv 2505.18830, with notebook 06's ``token_scores``), so

    THR_jk = A_j * s_jk,   s_jk = sum over the correct responses' tokens (i, k') of
                                  <e_jk, e_ik'> <h_jk, h_ik'>.

THR > 0: the token's update raises the correct responses (exploitation); THR < 0: it lowers
them (on an incorrect response, the LLD tokens NTHR selects), which keeps mass for alternatives
(exploration). The reweighting multiplies the advantage of the dominant tokens (|THR| > tau, tau
NTHR's threshold) by 1 + p * sign(THR): p > 0 exploits (amplify positive THR, weaken negative),
p < 0 explores (the reverse); thr_only keeps the dominant tokens and masks the others. The
threshold, the weights and the value of p are our reconstruction from the paper's abstract and
reviews: its method section could not be opened (tiny_model/__init__.py, simplification 8).
"""

from __future__ import annotations

THR_METHODS = ("thr_exploit", "thr_explore", "thr_only")
REGULARISED = ("nll", "smaug")
NEW_METHODS = THR_METHODS + REGULARISED
