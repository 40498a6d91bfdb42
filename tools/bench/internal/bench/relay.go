package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// The relays are the floor of the proxy path's shape: two more Go processes
// between an MCP client and a stdio MCP server, stdio → HTTP → stdio, doing
// nothing but moving bytes. The overhead scenario puts a plain
// @playwright/mcp behind them (side D), so that what any such path costs on
// this machine (process wake-ups, HTTP on loopback, Go's scheduler) shows
// apart from the proxy's own work (parsing, checks, the SQLite record).

// maxRelayMessage bounds one JSON-RPC message through the relays.
const maxRelayMessage = 64 << 20

// RelayClient sends every line of in to the relay server at url, one POST
// per message, and writes each non-empty answer to out as one line, as
// mcp-bridge does with proxy-server. It returns when in ends.
func RelayClient(ctx context.Context, url string, in io.Reader, out io.Writer) error {
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	defer c.CloseIdleConnections()
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), maxRelayMessage)
	for sc.Scan() {
		msg := bytes.Clone(sc.Bytes())
		if len(bytes.TrimSpace(msg)) == 0 {
			continue
		}
		// A request must not wait for the one before it: the client may
		// have several in flight.
		wg.Go(func() {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(msg))
			if err != nil {
				return
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := c.Do(req)
			if err != nil {
				return
			}
			body, err := io.ReadAll(io.LimitReader(resp.Body, maxRelayMessage))
			resp.Body.Close()
			if err != nil || len(body) == 0 {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			_, _ = out.Write(append(body, '\n'))
		})
	}
	wg.Wait()
	return sc.Err()
}

// RelayServer answers POST / on ln: the body goes to the child's stdin as
// one line; a request (it has an id) is answered with the child's response
// to that id, a notification with 202 and no body. Messages the child sends
// on its own (notifications, requests to the client) are dropped: the
// benchmark's client needs none. It returns when ctx ends or the child's
// output does.
func RelayServer(ctx context.Context, log *slog.Logger, ln net.Listener, childIn io.Writer, childOut io.Reader) error {
	r := &relay{childIn: childIn, pending: map[string]chan []byte{}}
	done := make(chan error, 1)
	go func() { done <- r.readChild(childOut) }()
	srv := &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go func() {
		select {
		case <-ctx.Done():
		case err := <-done:
			if err != nil {
				log.Warn("relay: reading the child", "err", err)
			}
		}
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

type relay struct {
	writeMu sync.Mutex
	childIn io.Writer

	mu      sync.Mutex
	pending map[string]chan []byte
}

func (r *relay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxRelayMessage))
	if err != nil {
		http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	body = bytes.TrimSpace(body)
	var head struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		http.Error(w, "not a JSON-RPC message: "+err.Error(), http.StatusBadRequest)
		return
	}
	key := string(head.ID)
	reply := make(chan []byte, 1)
	if key != "" && key != "null" {
		r.mu.Lock()
		r.pending[key] = reply
		r.mu.Unlock()
		defer func() {
			r.mu.Lock()
			delete(r.pending, key)
			r.mu.Unlock()
		}()
	}
	r.writeMu.Lock()
	_, err = r.childIn.Write(append(body, '\n'))
	r.writeMu.Unlock()
	switch {
	case err != nil:
		http.Error(w, "writing to the child: "+err.Error(), http.StatusBadGateway)
		return
	case key == "" || key == "null":
		w.WriteHeader(http.StatusAccepted)
		return
	}
	select {
	case msg := <-reply:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(msg)))
		_, _ = w.Write(msg)
	case <-req.Context().Done():
	}
}

// readChild hands each response line of the child to the request waiting
// for its id.
func (r *relay) readChild(out io.Reader) error {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), maxRelayMessage)
	for sc.Scan() {
		var head struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		line := sc.Bytes()
		if json.Unmarshal(line, &head) != nil || head.Method != "" || len(head.ID) == 0 {
			continue
		}
		r.mu.Lock()
		ch := r.pending[string(head.ID)]
		r.mu.Unlock()
		if ch != nil {
			select {
			case ch <- bytes.Clone(line):
			default: // a duplicate answer
			}
		}
	}
	return sc.Err()
}
