"""The S.O.L.I.D. stages' machinery that strategies compose (the loop itself is `strategies/algorithm1.py`).

base (reading replies: code, verdict words, samples), oracle (red-team tests from a reply, free text or JSON
fields), live (execution in the sandbox: `Evaluation` of a program on a suite of public and generated tests),
debug (the tracer's real values on a failing test).
"""
