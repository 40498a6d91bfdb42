package proxy

import "time"

// ValidHumanRequest checks a request_human as every surface takes it: a
// reason is required (the person reads it), and the timeout is 0 (the
// default) up to MaxHumanTimeout.
func ValidHumanRequest(reason string, timeout time.Duration) error {
	if reason == "" {
		e := Errorf(EINVALID, "reason is required: say what the person should do")
		e.Details = map[string]any{"field": "reason"}
		return e
	}
	if timeout < 0 || timeout > MaxHumanTimeout {
		e := Errorf(EINVALID, "timeout must be between 0 (the default, %s) and %s, got %s", DefaultHumanTimeout, MaxHumanTimeout, timeout)
		e.Details = map[string]any{"field": "timeout"}
		return e
	}
	return nil
}
