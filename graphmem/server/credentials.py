"""An instance's password: made once, and given to Neo4j before its server first opens Bolt.

The first start writes a random password for user ``neo4j`` to the instance's ``password``
file, then has Neo4j's own ``neo4j-admin dbms set-initial-password`` write ``data/dbms/auth.ini``
with it. Neo4j applies that file while its system database starts, before Bolt opens, so no
client ever meets a server with a default password; it applies it as well to an existing store
whose ``neo4j`` user still has the default password (docs/security.md). Clients read the file
with graphmem.settings.credentials.
"""

from __future__ import annotations

import os
import secrets
import subprocess
from pathlib import Path

from graphmem.errors import BackendError
from graphmem.server.host import PRIVATE_UMASK
from graphmem.server.java import Java
from graphmem.settings.trust import write_private

__all__ = ["ADMIN_CLASS", "auth_ini", "ensure_password", "set_initial_password"]

ADMIN_CLASS = "org.neo4j.cli.AdminTool"
"""The entry point of Neo4j's admin tool, on the server's own jars."""


def auth_ini(instance_dir: Path) -> Path:
    """Where set-initial-password writes the password, under the instance's data folder."""
    return instance_dir / "data" / "dbms" / "auth.ini"


def ensure_password(password_file: Path) -> bool:
    """Create the password file if there is none (True when created now); keep it private."""
    if password_file.is_file():
        os.chmod(password_file, 0o600)
        return False
    # Hex: a password starting with "-" would be read as an option by the admin tool.
    write_private(password_file, secrets.token_hex(24) + "\n")
    return True


def set_initial_password(java: Java, lib_dir: Path, instance_dir: Path, conf_dir: Path, password: str) -> None:
    """Have Neo4j's admin tool (on the jars of ``lib_dir``) write the instance's auth.ini with ``password``.

    The java launcher reads the main class and its arguments from an argument file, so the
    password never appears in the process list, which every local user can read.

    Raises BackendError when the tool fails or does not finish in 300 s.
    """
    argfile = instance_dir / ".set-password.args"
    args = ["-cp", f"{lib_dir}/*", ADMIN_CLASS, "dbms", "set-initial-password", "--", password]
    write_private(argfile, "\n".join(_argfile_quote(arg) for arg in args) + "\n")
    env = {**os.environ, "NEO4J_HOME": str(instance_dir), "NEO4J_CONF": str(conf_dir)}
    try:
        done = subprocess.run(
            [java.path, f"@{argfile}"],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
            umask=PRIVATE_UMASK,  # it writes data/dbms/auth.ini
        )
    except subprocess.TimeoutExpired:
        raise BackendError("Neo4j's set-initial-password did not finish in 300 s") from None
    finally:
        argfile.unlink(missing_ok=True)
    if done.returncode != 0 or not auth_ini(instance_dir).is_file():
        lines = [line for line in (done.stderr + done.stdout).splitlines() if line.strip()]
        raise BackendError(
            f"Neo4j's set-initial-password failed (exit {done.returncode})" + (f": {lines[-1][:300]}" if lines else "")
        )


def _argfile_quote(arg: str) -> str:
    # Java argument files split on whitespace; inside double quotes a backslash escapes.
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'
