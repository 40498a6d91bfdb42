-- Which MCP client a session belongs to: a digest of one mcp-bridge's (or
-- one /mcp session's) secret identity, never the identity itself. Another
-- client is told the session does not exist. '' is a session made through
-- the HTTP API directly (or before owners were recorded): only the operator
-- sees it.

-- +goose Up
ALTER TABLE sessions ADD COLUMN owner TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE sessions DROP COLUMN owner;
