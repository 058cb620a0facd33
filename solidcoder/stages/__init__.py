"""The stages of the S.O.L.I.D. pipeline, one module each, composed by `solidcoder.pipeline`.

planning (shift-left edge cases, plan simulation), coding (K candidates), simulation (the model traces its code:
a preliminary filter), oracle (red-team property tests and the judge that rejects invalid ones), live (execution
in the sandbox), accumulation (the monotonic test suite), debug (fixes from real traces). Every prompt is a
template under prompts/stages/.
"""
