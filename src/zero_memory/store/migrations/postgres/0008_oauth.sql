-- OAuth 2.1 for remote MCP clients: registered clients, each user's grants, and the
-- codes and tokens issued under a grant. Codes and tokens are stored only as SHA-256
-- digests; every row that belongs to a person carries their user_id.

CREATE TABLE oauth_clients (
    id TEXT COLLATE "C" PRIMARY KEY,
    name TEXT COLLATE "C" NOT NULL,
    secret_hash TEXT COLLATE "C",
    metadata TEXT COLLATE "C" NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL
);

CREATE TABLE oauth_grants (
    id TEXT COLLATE "C" PRIMARY KEY,
    user_id TEXT COLLATE "C" NOT NULL REFERENCES users(id),
    client_id TEXT COLLATE "C" NOT NULL REFERENCES oauth_clients(id),
    scopes TEXT COLLATE "C" NOT NULL,
    resource TEXT COLLATE "C" NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL,
    last_used_at TEXT COLLATE "C",
    revoked_at TEXT COLLATE "C"
);
CREATE INDEX oauth_grants_user ON oauth_grants(user_id, created_at);

CREATE TABLE oauth_codes (
    code_hash TEXT COLLATE "C" PRIMARY KEY,
    grant_id TEXT COLLATE "C" NOT NULL REFERENCES oauth_grants(id),
    user_id TEXT COLLATE "C" NOT NULL REFERENCES users(id),
    client_id TEXT COLLATE "C" NOT NULL,
    redirect_uri TEXT COLLATE "C" NOT NULL,
    redirect_uri_explicit INTEGER NOT NULL,
    code_challenge TEXT COLLATE "C" NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL,
    expires_at TEXT COLLATE "C" NOT NULL,
    used_at TEXT COLLATE "C"
);
CREATE INDEX oauth_codes_user ON oauth_codes(user_id);

CREATE TABLE oauth_tokens (
    id TEXT COLLATE "C" PRIMARY KEY,
    kind TEXT COLLATE "C" NOT NULL,
    token_hash TEXT COLLATE "C" NOT NULL,
    grant_id TEXT COLLATE "C" NOT NULL REFERENCES oauth_grants(id),
    user_id TEXT COLLATE "C" NOT NULL REFERENCES users(id),
    client_id TEXT COLLATE "C" NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL,
    expires_at TEXT COLLATE "C" NOT NULL,
    used_at TEXT COLLATE "C",
    revoked_at TEXT COLLATE "C"
);
CREATE INDEX oauth_tokens_grant ON oauth_tokens(grant_id);
CREATE INDEX oauth_tokens_user ON oauth_tokens(user_id);
