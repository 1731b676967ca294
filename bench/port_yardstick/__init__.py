"""The port report measured on real Estimator programs (docs/PORT_REPORT.md): the program list, our hand judgments
of every `required` change each program needs, and the scorer (score.py)."""
