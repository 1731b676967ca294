"""The exact findings of the port report on each pattern fixture (tests/porting/port_fixtures/): each kind of miss or
false finding real programs showed it (docs/PORT_REPORT.md), reproduced in a program of our own. Used by
tests/porting/test_port_patterns.py and tests/bench/test_port_yardstick.py."""
from estimator_tpu.porting.report import ADVICE
from estimator_tpu.porting.report import REQUIRED
from estimator_tpu.porting.report import UNKNOWN

R, A, U = REQUIRED, ADVICE, UNKNOWN

# fixture -> [(file, line, rule, severity)], each with what it is about.
PATTERNS = {
    # Driving code under `if __name__ == '__main__':`: the names assigned there are followed.
    'main_block': [
        ('ner_tagger.py', 31, 15, R),  # from_generator yields tf.string, and the model looks strings up
        ('ner_tagger.py', 35, 4, R),  # padded_batch with padded_shapes of None: a dynamic sentence length
        ('ner_tagger.py', 35, 4, R),  # ... and no drop_remainder
        ('ner_tagger.py', 40, 15, R),  # a vocabulary table inside model_fn
        ('ner_tagger.py', 44, 4, R),  # tf.sequence_mask(lengths) without maxlen
        ('ner_tagger.py', 48, 5, R),  # PREDICT branch: write_predictions predicts with the __main__ estimator
        ('ner_tagger.py', 50, 15, R),
        ('ner_tagger.py', 56, 5, R),
        ('ner_tagger.py', 56, 5, R),  # eval_metric_ops
        ('ner_tagger.py', 58, 6, R),
        ('ner_tagger.py', 59, 5, A),  # an EstimatorSpec in TRAIN only: TPUEstimator accepts it
        ('ner_tagger.py', 63, 3, R),  # params holds 'batch_size' (4th positional argument of the Estimator)
        ('ner_tagger.py', 64, 3, R),  # functools.partial binds input_fn's params
        ('ner_tagger.py', 67, 1, R),
        ('ner_tagger.py', 67, 2, A),
        ('ner_tagger.py', 67, 8, A),
        ('ner_tagger.py', 68, 1, R),
        ('ner_tagger.py', 68, 17, A),  # model_dir 'results/model', positional
    ],
    # An input pipeline in a method of a class the input_fn instantiates.
    'class_input': [
        ('images.py', 30, 3, R),  # the method's batch size comes from a partial, not params
        ('images.py', 30, 4, R),
        ('train.py', 10, 3, R),  # the partial leaves input_fn no params
        ('train.py', 21, 6, R),
        ('train.py', 22, 5, A),
        ('train.py', 28, 1, R),
    ],
    # A bound method of a scanned class as input_fn (defined in its base): followed, and right as it is.
    'bound_method_input': [],
    'logging_hooks': [
        ('train.py', 22, 5, R),
        ('train.py', 23, 6, R),
        ('train.py', 25, 5, A),
        ('train.py', 25, 8, R),  # training_hooks: a LoggingTensorHook on model_fn's tensors
        ('train.py', 28, 3, R),
        ('train.py', 32, 3, R),
        ('train.py', 36, 1, R),
        ('train.py', 38, 8, R),  # hooks= from a maker chosen by name, and model_fn names tensors to be fetched
        ('train.py', 39, 9, R),  # a StopAtStepHook is a host hook (no rule 8), but on a TPU train needs steps
        ('train.py', 40, 8, R),  # a hook maker given tensors_to_log
    ],
    'reserved_params': [
        ('resnet_like.py', 21, 3, R),  # a learning rate from params['batch_size'], the program's global batch
        ('resnet_like.py', 22, 6, R),
        ('resnet_like.py', 23, 5, A),
        ('resnet_like.py', 34, 1, R),
        ('resnet_like.py', 35, 3, R),  # params={'batch_size': ...}: reserved (the reshape at 18 is per core: fine)
    ],
    'namespace_params': [
        ('trainer.py', 14, 6, R),
        ('trainer.py', 15, 5, A),
        ('trainer.py', 22, 3, R),  # params.train_batch_size is the program's own key, not params['batch_size']
        ('trainer.py', 30, 3, R),  # params=args, an argparse Namespace
        ('trainer.py', 31, 1, R),
    ],
    # Premade estimators over string columns, built by a builder that a run loop gets as a parameter.
    'premade_strings': [
        ('census.py', 32, 1, R),
        ('census.py', 32, 15, R),  # vocabulary, hash and crossed columns inside the premade model
        ('census.py', 32, 17, A),  # model_dir handed down from main(): a local path
        ('census.py', 33, 1, R),
        ('census.py', 33, 15, R),
        ('census.py', 33, 17, A),
        ('census.py', 39, 15, R),  # decode_csv's string record_defaults, fed as they are
        ('census.py', 45, 3, R),
        ('census.py', 45, 4, R),
        ('census.py', 49, 3, R),
        ('census.py', 52, 3, R),
        ('run_loop.py', 15, 8, R),  # a LoggingTensorHook on the premade model's head
        ('run_loop.py', 15, 9, R),
        ('run_loop.py', 16, 9, R),
    ],
    'columns_in_model_fn': [
        ('regression.py', 19, 15, R),  # input_layer over params['feature_columns'], built in main()
        ('regression.py', 29, 6, R),  # the optimizer class comes from params
        ('regression.py', 30, 5, A),
        ('regression.py', 32, 5, R),
        ('regression.py', 32, 5, R),
        ('regression.py', 36, 15, R),  # Python strings fed as they are
        ('regression.py', 37, 3, R),
        ('regression.py', 37, 4, R),
        ('regression.py', 49, 1, R),
        ('regression.py', 51, 3, R),
        ('regression.py', 52, 3, R),
        ('regression.py', 52, 9, R),
    ],
    'in_memory_dtypes': [
        ('iris.py', 29, 15, R),  # np.loadtxt's float64, read in another function
        ('iris.py', 30, 3, R),
        ('iris.py', 30, 4, R),
        ('iris.py', 33, 3, R),
        ('iris.py', 36, 6, R),
        ('iris.py', 37, 5, A),
        ('iris.py', 42, 1, R),
        ('iris.py', 43, 3, R),
        ('iris.py', 46, 15, R),  # uint8 labels through numpy_input_fn
        ('iris.py', 47, 3, R),
    ],
    'distribute_strategy': [
        ('towers.py', 23, 6, A),  # per-device towers placed with tf.device
        ('towers.py', 28, 6, R),
        ('towers.py', 29, 5, A),
        ('towers.py', 41, 1, R),
        ('towers.py', 41, 1, R),  # train_distribute: Estimator.train's distributed path, not the TPU loop
        ('towers.py', 41, 2, A),
        ('towers.py', 41, 8, A),
        ('towers.py', 42, 1, R),
        ('towers.py', 43, 3, R),
    ],
    'argparse_steps': [
        ('task.py', 27, 5, R),
        ('task.py', 28, 6, R),
        ('task.py', 29, 5, A),
        ('task.py', 37, 3, R),
        ('task.py', 43, 9, R),  # EvalSpec(steps=args.eval_steps), --eval-steps defaulting to None
        ('task.py', 44, 1, R),
        ('task.py', 44, 2, A),
        ('task.py', 44, 8, A),
        ('task.py', 45, 1, R),
        ('task.py', 46, 14, A),  # it reads TF_CONFIG: a cluster a TPU slice replaces
    ],
    # A TPUEstimator program whose PREDICT branch (EstimatorSpec, scaffold=) only serves the CPU export.
    'predict_branch_export': [],
    # Export and interactive scripts with plain Estimators of their own: nothing runs on a TPU there.
    'serving_scripts': [
        ('export.py', 14, 1, A),  # the ported model_fn's TPUEstimatorSpec needs TPUEstimator(use_tpu=False) here
        ('export.py', 14, 17, A),
        ('interact.py', 16, 1, A),
        ('interact.py', 16, 17, A),
        ('main.py', 19, 6, R),
        ('main.py', 20, 5, A),
        ('main.py', 23, 3, R),
        ('main.py', 27, 3, R),
        ('main.py', 27, 4, R),
        ('main.py', 31, 1, R),
        ('main.py', 31, 17, A),
    ],
    # The dataset function reaches the run loop as a parameter; helpers named like input_fns are not input_fns.
    'run_loop_input': [
        ('run_loop.py', 9, 3, R),
        ('run_loop.py', 9, 4, R),  # map_and_batch(drop_remainder=False), reached through the parameter
        ('run_loop.py', 25, 5, R),
        ('run_loop.py', 26, 6, R),
        ('run_loop.py', 27, 5, A),
        ('run_loop.py', 31, 1, R),
        ('run_loop.py', 33, 3, R),
        ('run_loop.py', 37, 3, R),
    ],
    'iterator_predict': [
        ('blog_estimator.py', 16, 17, A),  # os.path.exists on the data folder
        ('blog_estimator.py', 17, 17, A),
        ('blog_estimator.py', 27, 3, R),
        ('blog_estimator.py', 27, 4, R),
        ('blog_estimator.py', 29, 3, R),  # returns iterator tensors, and the program predicts with it
        ('blog_estimator.py', 32, 3, R),
        ('blog_estimator.py', 37, 5, R),
        ('blog_estimator.py', 39, 6, R),
        ('blog_estimator.py', 40, 5, A),
        ('blog_estimator.py', 43, 1, R),
        ('blog_estimator.py', 44, 3, R),
        ('blog_estimator.py', 44, 9, R),
        ('blog_estimator.py', 45, 3, R),
    ],
    'contrib_rnn': [
        ('sketch_rnn.py', 13, 19, A),
        ('sketch_rnn.py', 22, 18, R),  # LSTMBlockFusedCell: no XLA kernel
        ('sketch_rnn.py', 22, 19, A),
        ('sketch_rnn.py', 26, 6, R),  # optimize_loss(optimizer='Adam'): no CrossShardOptimizer
        ('sketch_rnn.py', 26, 7, R),  # ... and its summaries inside model_fn
        ('sketch_rnn.py', 26, 19, A),
        ('sketch_rnn.py', 29, 5, R),
        ('sketch_rnn.py', 29, 5, R),
        ('sketch_rnn.py', 41, 3, R),  # HParams(batch_size=...) as params
        ('sketch_rnn.py', 41, 19, A),
        ('sketch_rnn.py', 42, 1, R),  # a subclass of tf.contrib.learn.RunConfig as config
        ('sketch_rnn.py', 42, 1, R),
        ('sketch_rnn.py', 42, 2, A),
        ('sketch_rnn.py', 42, 8, A),
    ],
    'boosted_trees_factory': [
        ('higgs.py', 15, 3, R),
        ('higgs.py', 20, 3, R),
        ('higgs.py', 22, 3, R),
        ('higgs.py', 22, 4, R),
        ('higgs.py', 33, 1, R),  # a factory function builds and trains a premade estimator
        ('higgs.py', 33, 19, A),
        ('higgs.py', 35, 9, R),  # ... whose evaluate has no steps
    ],
}
