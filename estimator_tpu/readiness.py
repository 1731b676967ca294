"""`python -m estimator_tpu.readiness`: the readiness check's command line (estimator_tpu/porting/readiness/):
on named functions (cli.py), or with --run on a whole program (program_run.py)."""
import importlib.machinery
import os
import sys

from estimator_tpu.runtime.errors import UserError

EXIT_BAD_INPUT = 2


def main(argv=None):
  argv = sys.argv[1:] if argv is None else argv
  try:
    # TensorFlow is imported here, with the working folder first on sys.path (`python -m` puts it there).
    from estimator_tpu.porting.readiness import cli  # pylint: disable=g-import-not-at-top
    from estimator_tpu.porting.readiness import program_run  # pylint: disable=g-import-not-at-top
  except Exception as e:  # noqa: BLE001 -- told as one line when the working folder shadows what TensorFlow imports
    shadowing = shadowing_modules(os.getcwd(), e.__traceback__)
    if not shadowing:
      raise
    sys.stderr.write('error: %s\n' % UserError(
        'TensorFlow failed to import: %s in this folder shadow%s the installed package%s of that name, which '
        'TensorFlow imports (the program, run from here, stops the same way).' % (
            ', '.join(path for _, path in shadowing), 's' if len(shadowing) == 1 else '',
            '' if len(shadowing) == 1 else 's'),
        'run the command from another folder (with the program\'s folder on PYTHONPATH if it imports its '
        'modules), or rename %s.' % ' and '.join(path for _, path in shadowing)))
    return EXIT_BAD_INPUT
  own = argv[:argv.index('--')] if '--' in argv else argv
  if '--run' in own:
    return program_run.main(argv)
  return cli.main(argv)


def shadowing_modules(folder, trace):
  """[(name, file)] of the modules of `folder` that the failed import ran (frames of its traceback) and that hide a
  package of the same name elsewhere on sys.path (a program's own tensorboard.py beside its training script)."""
  folder = os.path.realpath(folder)
  elsewhere = [p for p in sys.path if p and os.path.realpath(p) != folder]
  found = []
  while trace is not None:
    path = os.path.realpath(trace.tb_frame.f_code.co_filename)
    trace = trace.tb_next
    relative = os.path.relpath(path, folder)
    if relative.startswith(os.pardir) or not relative.endswith('.py'):
      continue
    name = relative.split(os.sep)[0]
    name = name[:-len('.py')] if name.endswith('.py') else name
    if (name, relative) not in found and importlib.machinery.PathFinder.find_spec(name, elsewhere) is not None:
      found.append((name, relative))
  return found


if __name__ == '__main__':
  sys.exit(main())
