package e2etest

import (
	"encoding/json"
	"fmt"
)

// DefaultSession reads a list_sessions answer and returns the id of the
// session it marks as the client's default: the one browser calls without
// a session_id go to, which their answers do not repeat.
func DefaultSession(listSessions string) (string, error) {
	var l struct {
		Sessions []struct {
			ID      string `json:"session_id"`
			Default bool   `json:"default"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(listSessions), &l); err != nil {
		return "", fmt.Errorf("list_sessions answered %q: %w", listSessions, err)
	}
	for _, s := range l.Sessions {
		if s.Default {
			return s.ID, nil
		}
	}
	return "", fmt.Errorf("list_sessions marks no default session: %s", listSessions)
}
