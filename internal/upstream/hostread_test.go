package upstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

func TestSplitSessionMessage(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		key, msg   string
		ok         bool
	}{
		{"answer", `{"s":"s1","m":{"jsonrpc":"2.0","id":3,"result":{}}}` + "\n", "s1", `{"jsonrpc":"2.0","id":3,"result":{}}`, true},
		{"crlf", `{"s":"s2","m":{"id":1}}` + "\r\n", "s2", `{"id":1}`, true},
		{"no newline", `{"s":"s2","m":{"id":1}}`, "s2", `{"id":1}`, true},
		{"message not checked here", `{"s":"s1","m":{"id":1},"x":2}`, "s1", `{"id":1},"x":2`, true},
		{"opened", `{"s":"s1","opened":{"ms":3}}`, "", "", false},
		{"closed", `{"s":"s1","closed":{"reason":"x"}}`, "", "", false},
		{"pong", `{"pong":1,"sessions":0}`, "", "", false},
		{"escaped key", `{"s":"a\"b","m":{}}`, "", "", false},
		{"empty key", `{"s":"","m":{}}`, "", "", false},
		{"empty message", `{"s":"s1","m":}`, "", "", false},
		{"truncated: the transport rejects it", `{"s":"s1","m":{}`, "s1", `{`, true},
		{"spaced", `{ "s":"s1","m":{}}`, "", "", false},
		{"blank", "\n", "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, msg, ok := splitSessionMessage([]byte(tc.line))
			if diff := cmp.Diff([]any{tc.key, tc.msg, tc.ok}, []any{key, string(msg), ok}); diff != "" {
				t.Errorf("splitSessionMessage(%q) (-want +got):\n%s", tc.line, diff)
			}
		})
	}
}

// repeatLines reads as n copies of line.
type repeatLines struct {
	line []byte
	n    int
	off  int
}

func (r *repeatLines) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	c := copy(p, r.line[r.off:])
	if r.off += c; r.off == len(r.line) {
		r.off, r.n = 0, r.n-1
	}
	return c, nil
}

// BenchmarkHostRead is the proxy's side of a hosted session's answer: the
// host's stdout line read, routed and decoded up to the waiting call, for
// an answer of a few hundred bytes (browser_evaluate) and snapshots of
// 43 KB and 500 KB.
func BenchmarkHostRead(b *testing.B) {
	for _, size := range []int{0, 43 << 10, 500 << 10} {
		b.Run(fmt.Sprintf("answer_%dKB", size>>10), func(b *testing.B) {
			text := `### Result\n\"Table\"\n### Ran Playwright code\n` + "```js\\nawait page.evaluate('() => document.title');\\n```"
			if size > 0 {
				var sb strings.Builder
				for i := 0; sb.Len() < size; i++ {
					fmt.Fprintf(&sb, `  - row \"item %d\" [ref=e%d]\n`, i, i)
				}
				text = sb.String()
			}
			line := []byte(`{"s":"s1","m":{"result":{"content":[{"type":"text","text":"` + text + `"}]},"jsonrpc":"2.0","id":7}}` + "\n")
			if !json.Valid(bytes.TrimSpace(line)) {
				b.Fatalf("the benchmark's line is not JSON: %.200s", line)
			}
			quiet := slog.New(slog.DiscardHandler)
			h := &SessionHost{logger: quiet, sessions: map[string]*HostedSession{}, pings: map[int64]chan Pong{}, readerDone: make(chan struct{})}
			s := &HostedSession{host: h, key: "s1", logger: quiet, opened: make(chan error, 1), done: make(chan struct{})}
			s.tr = &hostTransport{s: s, responses: map[string]chan *transport.JSONRPCResponse{}, done: make(chan struct{})}
			answered := make(chan *transport.JSONRPCResponse, 1)
			s.tr.responses[mcp.NewRequestId(int64(7)).String()] = answered
			h.sessions["s1"] = s
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			b.ResetTimer()
			h.read(&repeatLines{line: line, n: b.N}, make(chan *hostReady, 1))
			b.StopTimer()
			if resp := <-answered; !bytes.Contains(resp.Result, []byte(`"content"`)) {
				b.Fatalf("the waiting call got %+v", resp)
			}
		})
	}
}
