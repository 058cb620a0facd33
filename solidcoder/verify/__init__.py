"""Generate-prune-then-rank: cheap weak verifiers prune candidates, an outcome reward model ranks the rest."""
