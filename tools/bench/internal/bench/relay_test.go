package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// echoChild plays a stdio MCP server behind the relays: it answers every
// request with its own id and method, and sends a notification of its own
// before each answer, which the relays must drop.
func echoChild(t *testing.T, in io.Reader, out io.WriteCloser) {
	t.Helper()
	defer out.Close()
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Errorf("child got %q: %v", sc.Text(), err)
			return
		}
		if len(m.ID) == 0 {
			continue
		}
		io.WriteString(out, `{"jsonrpc":"2.0","method":"notifications/message","params":{}}`+"\n")
		io.WriteString(out, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"method":"`+m.Method+`"}}`+"\n")
	}
}

func TestRelays(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	childInR, childInW := io.Pipe()
	childOutR, childOutW := io.Pipe()
	go echoChild(t, childInR, childOutW)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- RelayServer(ctx, slog.New(slog.DiscardHandler), ln, childInW, childOutR) }()

	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		``,
		`{"jsonrpc":"2.0","id":"two","method":"tools/list"}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	if err := RelayClient(ctx, "http://"+ln.Addr().String()+"/", strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	// The two requests may be answered in either order.
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	slices.Sort(got)
	want := []string{
		`{"jsonrpc":"2.0","id":"two","result":{"method":"tools/list"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"method":"initialize"}}`,
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("relayed answers (-want +got):\n%s", diff)
	}

	childInW.Close()
	if err := <-served; err != nil {
		t.Errorf("RelayServer: %v", err)
	}
}
