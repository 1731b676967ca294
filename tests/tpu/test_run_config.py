"""RunConfig built from plain values: the checkpoint cadence stays on iterations_per_loop boundaries."""
import logging

import pytest

from estimator_tpu.tpu import run_config


@pytest.mark.parametrize('save_steps, iterations, expected', [(15, 10, 20), (20, 10, 20), (1000, 300, 1200),
                                                               (5, 50, 50), (7, 1, 7)])
def test_checkpoint_cadence_is_rounded_up_to_the_loop(save_steps, iterations, expected, caplog):
  with caplog.at_level(logging.INFO):
    assert run_config.checkpoint_steps_on_loop_boundary(save_steps, iterations) == expected
  messages = [r.getMessage() for r in caplog.records if 'save_checkpoints_steps' in r.getMessage()]
  if expected == save_steps:
    assert messages == []
  else:
    assert messages == ['save_checkpoints_steps=%d is not a multiple of iterations_per_loop=%d (--iterations); '
                        'TPUEstimator saves only between loops, so checkpoints are saved every %d steps instead.'
                        % (save_steps, iterations, expected)]


def test_run_config_uses_the_adjusted_cadence(tmp_path):
  config = run_config.build_run_config(str(tmp_path), iterations_per_loop=10, num_shards=8,
                                       save_checkpoints_steps=15, master='')
  assert config.save_checkpoints_steps == 20
  assert config.tpu_config.iterations_per_loop == 10
