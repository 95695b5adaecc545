"""The evaluator's budgets for one run: how deep its calls nest, how many steps it takes, how many turns a
loop makes. The interpreter (``analyzer.symbolic.interp``) enforces them; a call shared between runs
(``analyzer.symbolic.memo``) is replayed only where its steps fit in what is left of the run's."""

MAX_DEPTH = 60
MAX_STEPS = 400_000
MAX_LOOP = 2_000
