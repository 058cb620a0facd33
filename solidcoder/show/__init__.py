"""`solidcoder show`: what a run did, problem by problem, in the terminal, as JSON and in the HTML report.

`load` reads a run directory, a bench run's (results.jsonl, calls.jsonl, executions.jsonl) or a `solve` run's
(trajectory.json), into the typed views of `views`: a listing line per problem and configuration, and per problem
a tree of phases (routing's tiers, else the strategy's run; then the scoring), each with its model calls and
executions in the order they happened. `terminal` prints them
(program text escaped, never read as markup), `html` renders them for the report (escaped, collapsible sections),
`command` is the command's library side. Runs recorded before executions were (issue 31) are shown with what they
have: their calls, the stages they name (a stage is always a step a strategy ran) and the hidden tests' verdict.
This package reads the run directory formats of `solidcoder.store` (result rows as its `ResultRow`) and imports
nothing of `bench`; the bench's report renders its views.
"""
