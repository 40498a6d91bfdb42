package nodes

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// playwrightBox is what a Playwright server answers a client of another
// minor version (abridged).
const playwrightBox = `╔══════════════════════════════════╗
║ Playwright version mismatch:     ║
║   - server version: v1.57        ║
║   - client version: v1.64        ║
╚══════════════════════════════════╝`

func TestHTTPProberAnswers(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		body    string
		wantErr error // nil: up
		mention string
	}{
		{"matching playwright refuses the bad handshake", http.StatusBadRequest, "", nil, ""},
		{"other version", http.StatusPreconditionRequired, playwrightBox, ErrVersionMismatch, "it runs v1.57"},
		{"unauthorized", http.StatusUnauthorized, "", ErrUnauthorized, "401"},
		{"forbidden", http.StatusForbidden, "", ErrUnauthorized, "403"},
		{"server error", http.StatusBadGateway, "", errAny, "502"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got http.Header
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got = r.Header.Clone()
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			ep := Endpoint{ID: "n", URL: "ws" + strings.TrimPrefix(srv.URL, "http") + "/pw?token=s3cret", Header: http.Header{"X-Api-Key": {"k"}}}
			err := HTTPProber{Version: "1.64.0"}.Probe(context.Background(), ep)
			switch {
			case tt.wantErr == nil && err != nil:
				t.Fatalf("Probe = %v, want up", err)
			case tt.wantErr == errAny && err == nil, tt.wantErr != nil && tt.wantErr != errAny && !errors.Is(err, tt.wantErr):
				t.Fatalf("Probe = %v, want %v", err, tt.wantErr)
			}
			if err != nil && (!strings.Contains(err.Error(), tt.mention) || strings.Contains(err.Error(), "s3cret")) {
				t.Errorf("error %q: want it to mention %q and not the token", err, tt.mention)
			}
			if ua := got.Get("User-Agent"); !strings.HasPrefix(ua, "Playwright/1.64.0 ") {
				t.Errorf("User-Agent %q, want the pinned Playwright version first", ua)
			}
			if got.Get("X-Api-Key") != "k" {
				t.Errorf("the endpoint's header was not sent: %v", got)
			}
		})
	}
}

// errAny stands for any error in the table above.
var errAny = errors.New("any error")

func TestHTTPProberNoNode(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	err = HTTPProber{Version: "1.64.0"}.Probe(context.Background(), Endpoint{ID: "n", URL: "ws://" + addr + "/pw"})
	if err == nil {
		t.Fatal("Probe of a closed port succeeded")
	}
	if !Decisive(err) {
		t.Errorf("a refused connection (%v) does not take the node down at once", err)
	}
}

// TestHTTPProberSlowNode probes a node that accepts the connection and
// never answers, as a node too loaded to answer in time does: a failure,
// not one that takes the node down at once.
func TestHTTPProberSlowNode(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	release := make(chan struct{})
	defer close(release)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { <-release; c.Close() }()
		}
	}()
	// The timeout is the prober's, not an assertion: whatever it is, an
	// unanswered probe must end in a failure that is not decisive.
	err = HTTPProber{Version: "1.64.0", Timeout: 50 * time.Millisecond}.Probe(context.Background(), Endpoint{ID: "n", URL: "ws://" + ln.Addr().String() + "/pw"})
	if err == nil {
		t.Fatal("Probe of a node that never answers succeeded")
	}
	if Decisive(err) {
		t.Errorf("a probe that timed out (%v) takes the node down at once", err)
	}
}
