"""The fixers, each the port of the rules it names, in the order the port runs them: a later fixer sees what an
earlier one decided (the batch sizes the estimator gets, the evaluations padded, the model_fns that weight)."""
from estimator_tpu.porting.rewrite.fixers import contrib_names
from estimator_tpu.porting.rewrite.fixers import exact_evaluation
from estimator_tpu.porting.rewrite.fixers import infeed_dtypes
from estimator_tpu.porting.rewrite.fixers import input_params
from estimator_tpu.porting.rewrite.fixers import model_fns
from estimator_tpu.porting.rewrite.fixers import tpu_estimator

FIXERS = (
    contrib_names.fix,  # rule 19
    exact_evaluation.plan,  # rule 9: which evaluations are padded
    tpu_estimator.fix,  # rules 1, 2, 8
    input_params.give_params_and_batch,  # rules 3, 4
    exact_evaluation.pad,  # rule 9
    input_params.pin_static_batches,  # rule 4
    infeed_dtypes.fix,  # rule 15
    model_fns.fix,  # rules 3, 5, 6, 7, 9
)
