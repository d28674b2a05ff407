"""Benchmarks of pinkctl (scripts, not tests): run them as ``python -m bench.NAME``.

- :mod:`bench.step_latency`: per-tick time of ``PinkIKController.forward`` against raw pink
  and mink ``solve_ik`` on the same problem, in the same run.
- :mod:`bench.tracking`: figure-eight tracking errors, kinematic loop and MuJoCo closed loop.
- :mod:`bench.ik_protocol`: one-shot / global IK on TRAC-IK's protocol.
- :mod:`bench.readme`: runs them and rewrites the tables of ``docs/performance.md``.
"""
