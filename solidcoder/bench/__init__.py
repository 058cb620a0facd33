"""The benchmark runner: concurrent, resumable runs of a strategy on a dataset (`runner`), their run directory
(`store`, `calls`), the two kinds of task (`tasks`), scores (`metrics`) and reports (`report`, `html`).
`command` is the library side of `solidcoder bench` and `solidcoder report`."""
