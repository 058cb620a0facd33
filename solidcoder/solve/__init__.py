"""`solidcoder solve`, one package as `bench/` is: `command.py` reads the input, checks it, builds the models and
prints the answer; `run.py` runs one problem through the machinery a bench run uses and judges the answer."""
