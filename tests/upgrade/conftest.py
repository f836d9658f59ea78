from tests.cli.conftest import zm  # noqa: F401  (fixture)
from tests.pg import pg_server, pg_url  # noqa: F401  (fixtures)
