"""The one solving core every strategy runs on, in `bench` and in `solve` alike.

`calls`: the recording model access (roles, the per-problem call cap, replay of paid replies, one record per call
for both the trajectory and the replay log). `context`: the `SolveContext` a strategy gets (that model, the
prompts, the sandbox pool, the sampling settings) and `ask`, the one way a strategy talks to a model.
"""
