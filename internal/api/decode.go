package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"unicode/utf8"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

func parseBool(v, name string) (bool, error) {
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, proxy.Errorf(proxy.EINVALID, "%s must be true or false, got %q", name, v)
	}
	return b, nil
}

// decodeBody reads a JSON object body, refusing unknown fields, trailing
// data, invalid UTF-8 and oversize bodies with INVALID_PARAMETERS. An
// optional body may be empty.
func decodeBody(r *http.Request, v any, optional bool) error {
	// The body is read whole (MaxBytesHandler bounds it) because
	// encoding/json silently turns invalid UTF-8 into U+FFFD and keeps
	// json.RawMessage bytes as sent: the params would reach the browser
	// and the record differently from what the client meant.
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return decodeErr(err)
	}
	if !utf8.Valid(data) {
		return proxy.Errorf(proxy.EINVALID, "request body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if optional && errors.Is(err, io.EOF) {
			return nil
		}
		return decodeErr(err)
	}
	if dec.More() {
		return proxy.Errorf(proxy.EINVALID, "request body has data after the JSON object")
	}
	return nil
}

func decodeErr(err error) error {
	var mbe *http.MaxBytesError
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &mbe):
		return &proxy.Error{Code: proxy.EINVALID, Message: fmt.Sprintf("request body is larger than %d bytes", mbe.Limit),
			Details: map[string]any{"limit_bytes": mbe.Limit}, Suggestion: "Send a smaller request."}
	case errors.Is(err, io.EOF):
		return proxy.Errorf(proxy.EINVALID, "request body is empty; a JSON object is required")
	case errors.As(err, &se):
		return proxy.Errorf(proxy.EINVALID, "malformed JSON at byte %d: %v", se.Offset, se)
	case errors.As(err, &te):
		e := proxy.Errorf(proxy.EINVALID, "field %q must be %s, got %s", te.Field, te.Type, te.Value)
		e.Details = map[string]any{"field": te.Field}
		return e
	default:
		return proxy.Errorf(proxy.EINVALID, "invalid request body: %v", err)
	}
}

// writeJSON answers v with its length set, so that logRequests can send the
// answer before it logs.
func (s *Server) writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		s.log.Error("encoding response", "err", err)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"error":"INTERNAL_ERROR","message":"the answer could not be encoded","retryable":false}`+"\n")
		return
	}
	b = append(b, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(code)
	if _, err := w.Write(b); err != nil {
		s.log.Debug("writing response", "err", err)
	}
}
