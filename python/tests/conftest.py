import anonfusion as af
import pytest


@pytest.fixture
def session(tmp_path):
    """A session whose privacy ledger is a scratch file, never the user's."""
    return af.Session(ledger=str(tmp_path / "ledger.tsv"), progress=False)
