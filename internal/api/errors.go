package api

import (
	"net/http"

	"github.com/go-chi/chi/v5/middleware"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/wire"
)

func (s *Server) writeErr(w http.ResponseWriter, r *http.Request, err error) {
	e := proxy.AsError(err)
	code := httpStatus(e.Code)
	if code == http.StatusInternalServerError {
		s.log.Error("internal error", "request_id", middleware.GetReqID(r.Context()), "path", r.URL.Path, "err", err)
	} else {
		// The session id, when the error names one, ties the request to
		// the session's own log lines.
		s.log.Info("request refused", "request_id", middleware.GetReqID(r.Context()), "path", r.URL.Path, "code", e.Code,
			"session_id", e.Details["session_id"], "message", e.Message)
	}
	s.writeError(w, r, e, code)
}

func (s *Server) writeError(w http.ResponseWriter, _ *http.Request, e *proxy.Error, code int) {
	s.writeJSON(w, code, wire.ErrorBody{Error: e.Code, Message: e.Message, Details: e.Details, Retryable: e.Retryable, Suggestion: e.Suggestion})
}

// codes is the HTTP status of each error code; any other code is 500.
var codes = map[string]int{
	proxy.EINVALID:         http.StatusBadRequest,
	proxy.ESESSIONMISSING:  http.StatusNotFound,
	proxy.EREFMISSING:      http.StatusNotFound,
	proxy.ETOOLMISSING:     http.StatusNotFound,
	proxy.ENODEMISSING:     http.StatusNotFound,
	proxy.ENOENDPOINT:      http.StatusNotFound,
	proxy.ESESSIONCLOSED:   http.StatusGone,
	proxy.EMAXSESSIONS:     http.StatusTooManyRequests,
	proxy.EORIGIN:          http.StatusForbidden,
	proxy.EHOST:            http.StatusForbidden,
	proxy.EDOMAINBLOCKED:   http.StatusForbidden,
	proxy.EUNAUTHORIZED:    http.StatusUnauthorized,
	proxy.EFORBIDDEN:       http.StatusForbidden,
	proxy.EUNAVAILABLE:     http.StatusServiceUnavailable,
	proxy.ETIMEOUT:         http.StatusGatewayTimeout,
	proxy.ESTORAGEFULL:     http.StatusInsufficientStorage,
	proxy.EELEMENTMISSING:  http.StatusUnprocessableEntity,
	proxy.ENOTINTERACTIVE:  http.StatusUnprocessableEntity,
	proxy.EINVALIDSELECTOR: http.StatusUnprocessableEntity,
	proxy.ENAVIGATION:      http.StatusUnprocessableEntity,
	proxy.EBROWSER:         http.StatusUnprocessableEntity,
	proxy.EDOWNLOADMISSING: http.StatusNotFound,
	proxy.EPAGEMISSING:     http.StatusNotFound,
	proxy.EPROFILEMISSING:  http.StatusNotFound,
	proxy.ETOOLARGE:        http.StatusRequestEntityTooLarge,
	proxy.ECONTROLHELD:     http.StatusConflict,
	proxy.EHUMANINCONTROL:  http.StatusConflict,
}

// httpStatus is the status an error code is answered with.
func httpStatus(code string) int {
	if s, ok := codes[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}
