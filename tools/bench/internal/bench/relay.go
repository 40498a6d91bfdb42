package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
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

const maxRelayMessage = 64 << 20

func lines(r io.Reader) *bufio.Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxRelayMessage)
	return sc
}

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
	sc := lines(in)
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
			resp, err := c.Do(req)
			if err != nil {
				return
			}
			defer resp.Body.Close()
			if body, err := io.ReadAll(resp.Body); err == nil && len(body) > 0 {
				mu.Lock()
				defer mu.Unlock()
				_, _ = out.Write(append(body, '\n'))
			}
		})
	}
	wg.Wait()
	return sc.Err()
}

// RelayServer answers POST / on ln: the body goes to the child's stdin as
// one line; a request (it has an id) is answered with the child's response
// to that id, a notification with 202 and no body. Messages the child sends
// on its own are dropped: the benchmark's client needs none. It returns
// when ctx ends or the child's output does.
func RelayServer(ctx context.Context, log *slog.Logger, ln net.Listener, childIn io.Writer, childOut io.Reader) error {
	var (
		writeMu, mu sync.Mutex
		pending     = map[string]chan []byte{}
	)
	handler := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var head struct {
			ID json.RawMessage `json:"id"`
		}
		body, err := io.ReadAll(req.Body)
		if err == nil {
			err = json.Unmarshal(body, &head)
		}
		if err != nil {
			http.Error(w, "not a JSON-RPC message: "+err.Error(), http.StatusBadRequest)
			return
		}
		key, reply := string(head.ID), make(chan []byte, 1)
		if key != "" && key != "null" {
			mu.Lock()
			pending[key] = reply
			mu.Unlock()
			defer func() { mu.Lock(); delete(pending, key); mu.Unlock() }()
		}
		writeMu.Lock()
		_, err = childIn.Write(append(bytes.TrimSpace(body), '\n'))
		writeMu.Unlock()
		switch {
		case err != nil:
			http.Error(w, "writing to the child: "+err.Error(), http.StatusBadGateway)
		case key == "" || key == "null":
			w.WriteHeader(http.StatusAccepted)
		default:
			select {
			case msg := <-reply:
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(msg)
			case <-req.Context().Done():
			}
		}
	})
	done := make(chan error, 1)
	go func() {
		// Each response line of the child goes to the request waiting for
		// its id; the child's own requests and notifications have a method.
		sc := lines(childOut)
		for sc.Scan() {
			var head struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(sc.Bytes(), &head) != nil || head.Method != "" || len(head.ID) == 0 {
				continue
			}
			mu.Lock()
			if ch := pending[string(head.ID)]; ch != nil {
				select {
				case ch <- bytes.Clone(sc.Bytes()):
				default: // a duplicate answer
				}
			}
			mu.Unlock()
		}
		done <- sc.Err()
	}()
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
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
