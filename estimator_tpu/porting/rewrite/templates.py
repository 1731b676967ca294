"""The code the rewrite adds to a program, as templates: {tf} is the file's name for the TF 1 API
(`tf` for `import tensorflow.compat.v1 as tf`), {tf2} its name for the TF 2 summary API. Written with 4-space
indents; LibCST prints them with the file's own.

The helpers are written into the files that use them, so a ported program needs nothing from estimator_tpu.
"""

WEIGHT_KEY = 'tpu_weight'

EXACT_EVAL_HELPERS = '''
def tpu_exact_eval_input(input_fn):
    # input_fn for evaluate() on a TPU, which runs full batches of params['batch_size'] only:
    # input_fn is read one example at a time (batches of 1 lose none), each example weighted 1
    # in features['tpu_weight'], then padded with copies of the first one, weighted 0: the
    # padding counts in no metric and in no loss.

    def add_weight(weight):
        def weighted(features, *labels):
            features = dict(features, tpu_weight=weight)
            return (features,) + labels if labels else features
        return weighted

    def padded_input_fn(params):
        examples = input_fn(params=dict(params, batch_size=1)).unbatch()
        padding = examples.take(1).map(add_weight(0.0)).repeat(params['batch_size'] - 1)
        dataset = examples.map(add_weight(1.0)).concatenate(padding)
        return dataset.batch(params['batch_size'], drop_remainder=True)

    return padded_input_fn


def tpu_eval_steps(input_fn, batch_size):
    # The number of batches of batch_size that input_fn (a tpu_exact_eval_input) yields; it reads
    # the input once.
    with {tf}.Graph().as_default():
        dataset = input_fn(params={{'batch_size': batch_size}})
        count = dataset.reduce({tf}.constant(0, {tf}.int64), lambda count, *batch: count + 1)
        with {tf}.Session() as session:
            return int(session.run(count))
'''

STATIC_BATCH_HELPER = '''
def tpu_static_batch(dataset, batch_size):
    # dataset with the leading dimension of every tensor set to batch_size: its batches are all
    # full (drop_remainder=True), which the steps after the batch may not keep in the shapes.

    def pin(*elements):
        for tensor in {tf}.nest.flatten(elements):
            if tensor.shape.ndims:
                tensor.set_shape([batch_size] + tensor.shape.as_list()[1:])
        return elements if len(elements) > 1 else elements[0]

    return dataset.map(pin)
'''

FLOAT32_HELPER = '''
def tpu_float32(value):
    # value (NumPy or pandas data) with its float64 made float32, on the host: the TPU infeed takes
    # no float64. Models that compute in float32 get the same values.
    if hasattr(value, 'select_dtypes'):  # a pandas DataFrame: its float64 columns
        return value.astype(dict.fromkeys(value.select_dtypes('float64').columns, 'float32'))
    return value.astype('float32') if str(getattr(value, 'dtype', '')) == 'float64' else value
'''

HOST_CALL = '''
def {name}({params}):
    writer = {tf2}.summary.create_file_writer({logdir})
    with writer.as_default(), {tf2}.summary.record_if(True):
        return {tf}.summary.all_v2_summary_ops()
'''

CROSS_SHARD = '''
if {params}['use_tpu']:
    {optimizer} = {tf}.tpu.CrossShardOptimizer({optimizer})
'''
