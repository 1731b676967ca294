import sys, time
t=time.time()
from estimator_tpu.runtime import storage
from estimator_tpu.runtime.errors import exit_on_user_error
print('import %.1f' % (time.time()-t), file=sys.stderr)
t=time.time()
try:
  exit_on_user_error(storage.check_paths, [('data_dir', sys.argv[1]), ('model_dir', sys.argv[2])])
finally:
  print('check %.1f' % (time.time()-t), file=sys.stderr)
