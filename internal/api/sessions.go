package api

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/go-chi/chi/v5"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/wire"
)

func (s *Server) handleTools(w http.ResponseWriter, r *http.Request) {
	tools, err := s.sessions.Tools(r.Context())
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, wire.ToolsBody{Tools: tools})
}

func (s *Server) handleCreateSession(w http.ResponseWriter, r *http.Request) {
	// The body is optional: the session's browser options, or nothing.
	var raw json.RawMessage
	if err := decodeBody(r, &raw, true); err != nil {
		s.writeErr(w, r, err)
		return
	}
	opts, err := proxy.DecodeBrowserOptions(raw)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	sess, err := s.sessions.CreateSession(r.Context(), opts)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusCreated, sess)
}

func (s *Server) handleListSessions(w http.ResponseWriter, r *http.Request) {
	ss, err := s.sessions.ListSessions(r.Context())
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if ss == nil {
		ss = []*proxy.Session{}
	}
	s.writeJSON(w, http.StatusOK, wire.SessionsBody{Sessions: ss})
}

func (s *Server) handleGetSession(w http.ResponseWriter, r *http.Request) {
	sess, err := s.sessions.GetSession(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, sess)
}

func (s *Server) handleCloseSession(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	if err := s.sessions.CloseSession(r.Context(), id); err != nil {
		s.writeErr(w, r, err)
		return
	}
	sess, err := s.sessions.GetSession(r.Context(), id)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, sess)
}

func (s *Server) handleResumeSession(w http.ResponseWriter, r *http.Request) {
	if err := decodeBody(r, &struct{}{}, true); err != nil {
		s.writeErr(w, r, err)
		return
	}
	sess, restored, err := s.sessions.ResumeSession(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, wire.ResumeBody{Session: sess, Restored: restored})
}

func (s *Server) handleCall(w http.ResponseWriter, r *http.Request) {
	var body wire.CallBody
	if err := decodeBody(r, &body, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if body.SessionID == "" {
		s.writeErr(w, r, proxy.Errorf(proxy.EINVALID, "session_id is required"))
		return
	}
	if err := objectParams(body.Params); err != nil {
		s.writeErr(w, r, err)
		return
	}
	res, err := s.sessions.Call(r.Context(), proxy.CallRequest{SessionID: body.SessionID, Tool: body.Tool, Params: body.Params, RequestID: body.RequestID, Changes: body.Changes})
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if len(res.Encoded) > 0 {
		s.writeJSON(w, http.StatusOK, res.Encoded) // as the manager encoded it
		return
	}
	s.writeJSON(w, http.StatusOK, res)
}

// objectParams refuses a call body whose params are not a JSON object
// (absent or null stand for {}), so that nothing else reaches a session.
// The body decoder has checked that they are valid JSON, so their first
// byte tells; the session manager decodes them, once.
func objectParams(p json.RawMessage) error {
	p = bytes.TrimLeft(p, " \t\r\n")
	if len(p) == 0 || p[0] == '{' || string(p) == "null" {
		return nil
	}
	e := proxy.Errorf(proxy.EINVALID, "params must be a JSON object")
	e.Details = map[string]any{"field": "params"}
	return e
}

// handleValidate answers whether a call would be refused before it reaches
// a session (200 {"valid":true}, or the error the call would get).
func (s *Server) handleValidate(w http.ResponseWriter, r *http.Request) {
	var body wire.ValidateBody
	if err := decodeBody(r, &body, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if err := s.sessions.Validate(r.Context(), body.Tool, body.Params); err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, wire.ValidBody{Valid: true})
}

// handleAddCredential puts a value in the credential vault. The value is
// never logged or returned: errors name the rule, not the value.
func (s *Server) handleAddCredential(w http.ResponseWriter, r *http.Request) {
	var body wire.CredentialBody
	if err := decodeBody(r, &body, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	placeholder, err := s.sessions.AddCredential(r.Context(), body.Value)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusCreated, wire.CredentialAnswer{Placeholder: placeholder})
}
