"""Processes the tests start: is anything of a process group left?"""
import os


def group_alive(pgid):
  """True while some process of the process group `pgid` exists (signal 0 only checks)."""
  try:
    os.killpg(pgid, 0)
  except ProcessLookupError:
    return False
  return True
