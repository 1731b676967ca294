"""Damaging files on purpose, for the fault tests."""


def flip_byte(path, offset):
  """Inverts the byte at `offset` of a file in place (damage a CRC-protected record, a header, ...)."""
  with open(path, 'r+b') as f:
    f.seek(offset)
    byte = f.read(1)
    f.seek(offset)
    f.write(bytes([byte[0] ^ 0xff]))
