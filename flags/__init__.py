"""absl flag definitions for the runnable programs, one module per concern.

Each module has a `define_*_flags()` function; a program calls the ones it needs (mnist_tpu.py calls them all)
and then `validators.register_cross_validators()` for the checks that span groups. Validation happens while
the command line is parsed, before any graph is built, and a bad value ends the program with one message that
says how to fix it.
"""
