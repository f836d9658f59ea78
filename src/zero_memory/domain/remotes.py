"""A git remote, spelled one way: how a project and an anchor's repository are known across clones."""

from __future__ import annotations

import re

SCP_REMOTE_RE = re.compile(r"^(?:[\w.-]+@)?([\w.-]+):(?!//)(.+)$")


def normalize_remote(remote: str) -> str:
    """``git@github.com:Org/Repo.git`` and ``https://github.com/org/repo`` name the same remote."""
    text = remote.strip()
    match = SCP_REMOTE_RE.match(text)
    if match and "://" not in text:
        host, path = match.group(1), match.group(2)
    else:
        without_scheme = text.split("://", 1)[-1]
        without_user = without_scheme.split("@", 1)[-1] if "@" in without_scheme.split("/", 1)[0] else without_scheme
        host, _, path = without_user.partition("/")
        host = host.split(":", 1)[0]
    path = path.strip("/").removesuffix(".git")
    return f"{host.lower()}/{path.lower()}"
