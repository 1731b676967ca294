"""Where things are: the repository, the tests and the support scripts run as programs."""
import os

SUPPORT_DIR = os.path.dirname(os.path.abspath(__file__))
TESTS_DIR = os.path.dirname(SUPPORT_DIR)
REPO_ROOT = os.path.dirname(TESTS_DIR)
PORT_FIXTURES = os.path.join(TESTS_DIR, 'porting', 'fixtures')
PORT_ENTRIES = os.path.join(TESTS_DIR, 'porting', 'entries')
