package bridge

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"time"
)

// maxIdleConns bounds the kept-alive connections to proxy-server: a bridge
// has one conversation, so more than a few requests at once are rare.
const maxIdleConns = 4

// connTransport is the bridge's http.RoundTripper for a plain-HTTP
// proxy-server. Each exchange runs in the caller's goroutine: it writes the
// request and reads the answer on a kept-alive connection itself, where
// net/http's Transport hands every request to a writing goroutine and
// every answer back from a reading one. On a small VM each of those
// hand-offs can wake a thread on the call's path (docs/BENCHMARKS.md §1 has
// the figures).
//
// It keeps what the bridge's retry rules rely on (Client.roundTrip): dial
// errors are net/http's (*net.OpError, Op "dial"), httptrace's GotConn
// fires once a connection is had, and a request is never written twice. A
// kept connection that proxy-server has closed meanwhile (idle timeout,
// restart) is found before it is used, so it costs a dial, not a failed
// call. It must never be used for https: it speaks HTTP/1.1 on the bare
// connection.
type connTransport struct {
	dialer net.Dialer

	mu   sync.Mutex
	idle []*keptConn
}

type keptConn struct {
	conn net.Conn
	br   *bufio.Reader
	bw   *bufio.Writer
}

// aLongTimeAgo is a deadline that has passed: it unblocks a read or write
// in progress at once.
var aLongTimeAgo = time.Unix(1, 0)

// RoundTrip implements http.RoundTripper.
func (t *connTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	kc, reused, err := t.conn(ctx, req.URL.Host)
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	if trace := httptrace.ContextClientTrace(ctx); trace != nil && trace.GotConn != nil {
		trace.GotConn(httptrace.GotConnInfo{Conn: kc.conn, Reused: reused})
	}
	// No goroutine waits for ctx: if it ends, the deadline ends the read
	// or write in progress.
	stop := context.AfterFunc(ctx, func() { _ = kc.conn.SetDeadline(aLongTimeAgo) })
	fail := func(err error) (*http.Response, error) {
		stop()
		kc.conn.Close()
		if cerr := ctx.Err(); cerr != nil {
			return nil, fmt.Errorf("%w (%v)", cerr, err)
		}
		return nil, err
	}
	if err := req.Write(kc.bw); err != nil {
		return fail(err)
	}
	if err := kc.bw.Flush(); err != nil {
		return fail(err)
	}
	resp, err := http.ReadResponse(kc.br, req)
	if err != nil {
		return fail(err)
	}
	resp.Body = &keptBody{ReadCloser: resp.Body, t: t, kc: kc, stop: stop, reuse: !resp.Close && !req.Close}
	return resp, nil
}

// conn returns a kept connection that is still open, or a new one.
func (t *connTransport) conn(ctx context.Context, host string) (kc *keptConn, reused bool, err error) {
	for {
		t.mu.Lock()
		n := len(t.idle)
		if n == 0 {
			t.mu.Unlock()
			break
		}
		kc = t.idle[n-1]
		t.idle = t.idle[:n-1]
		t.mu.Unlock()
		if kc.br.Buffered() == 0 && stillOpen(kc.conn) {
			return kc, true, nil
		}
		kc.conn.Close()
	}
	c, err := t.dialer.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, false, err
	}
	return &keptConn{conn: c, br: bufio.NewReaderSize(c, 64<<10), bw: bufio.NewWriterSize(c, 64<<10)}, false, nil
}

// put keeps kc for the next request, or closes it when enough are kept.
func (t *connTransport) put(kc *keptConn) {
	t.mu.Lock()
	if len(t.idle) < maxIdleConns {
		t.idle = append(t.idle, kc)
		kc = nil
	}
	t.mu.Unlock()
	if kc != nil {
		kc.conn.Close()
	}
}

// CloseIdleConnections closes the kept connections (http.Client calls it).
func (t *connTransport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, kc := range idle {
		kc.conn.Close()
	}
}

// keptBody is an answer's body; once it has been read to its end the
// connection goes back to the transport.
type keptBody struct {
	io.ReadCloser
	t     *connTransport
	kc    *keptConn
	stop  func() bool
	reuse bool
	once  sync.Once
}

func (b *keptBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		b.release(true)
	}
	return n, err
}

// Close reads what is left of the answer (net/http's body does) and
// releases the connection if that worked.
func (b *keptBody) Close() error {
	err := b.ReadCloser.Close()
	b.release(err == nil)
	return err
}

// release gives the connection back when the whole answer was read, the
// server keeps it open and ctx did not touch its deadline; otherwise it
// closes it.
func (b *keptBody) release(whole bool) {
	b.once.Do(func() {
		if b.stop() && whole && b.reuse {
			b.t.put(b.kc)
			return
		}
		b.kc.conn.Close()
	})
}
