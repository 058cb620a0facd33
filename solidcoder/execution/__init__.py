"""Running untrusted programs: the sandbox pool, the judges and the variable tracer."""
