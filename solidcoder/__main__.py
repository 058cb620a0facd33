"""`python -m solidcoder` runs the command line."""

from solidcoder.cli import main

main()
