"""Running untrusted programs: the sandbox pool, the judges and the variable tracer, on the host; the code that runs
inside the sandbox (the zygote, the candidate's process, the judge process) is in `inside/`."""
