"""CodeRL+ training (extra `train`): GRPO on code generation plus execution-semantics alignment.

`alignment` builds alignment tasks from failed rollouts with the tracer, `alignment_reward` and `code_reward` are
the two rewards (Eq. 5 and Eq. 4 of the paper), `mixing` streams and mixes prompts, `trainer` wires them into
TRL's GRPOTrainer, `config` holds the paper defaults, `memory` the allocator default and the GPU memory model. Only
`trainer` and `metrics` import torch/TRL.
"""
