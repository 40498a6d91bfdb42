-- A session's browser options (viewport, user agent, device, locale, time
-- zone, colour scheme, engine) as the JSON it was created with: every
-- worker the session gets later (after a crash, a suspension, a server
-- restart) is started with them again. NULL is the server's defaults.

-- +goose Up
ALTER TABLE sessions ADD COLUMN options TEXT;

-- +goose Down
ALTER TABLE sessions DROP COLUMN options;
