package mcpserver

import (
	"context"
	"math"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock"
)

// progressEvery is how often a request_human that waits tells its client
// it still does (when the call asked for progress): some MCP clients end
// a tool call that has been silent for a while.
const progressEvery = 10 * time.Second

// WithHuman answers request_human through h: the session manager in
// proxy-server's own process, mcp-bridge's HTTP client. Without it, the
// session service answers it when it is a proxy.HumanService too.
func WithHuman(h proxy.HumanService) Option { return func(c *config) { c.human = h } }

// withClock sets the clock request_human's progress ticks by.
func withClock(c clock.Clock) Option { return func(cfg *config) { cfg.clock = c } }

// humanService is what answers request_human, nil for nothing.
func (s *Server) humanService() proxy.HumanService {
	if s.human != nil {
		return s.human
	}
	h, _ := s.sessions.(proxy.HumanService)
	return h
}

// requestHuman answers request_human: the session named (else the
// caller's default one) waits for a person, and the answer says whether
// one handed back, what they did, and what changed on the page since.
func (s *Server) requestHuman(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	h := s.humanService()
	if h == nil {
		return s.errorResult(ctx, proxy.Errorf(proxy.ETOOLMISSING, "this server cannot ask a person")), nil
	}
	reason, timeout, err := humanArguments(req)
	if err != nil {
		return s.errorResult(ctx, err), nil
	}
	// A session made only for this would have nothing for a person to
	// do: no page was ever opened.
	id, err := s.existingSession(ctx, req, "open the page with the browser tools first, then request_human")
	if err != nil {
		return s.errorResult(ctx, err), nil
	}
	sess, err := s.sessions.GetSession(s.acting(ctx), id)
	if err != nil {
		return s.errorResult(ctx, err), nil
	}
	if token := progressToken(req); token != nil {
		stop := s.reportWaiting(ctx, token, waitingMessage(sess.LiveURL))
		defer stop()
	}
	res, err := h.RequestHuman(s.acting(ctx), id, reason, timeout)
	if err != nil {
		return s.errorResult(ctx, err), nil
	}
	if res.LiveURL == "" {
		res.LiveURL = sess.LiveURL
	}
	return mcp.NewToolResultText(humanAnswer(res)), nil
}

// humanArguments reads request_human's reason and timeout (seconds), refused
// as the HTTP route refuses them.
func humanArguments(req mcp.CallToolRequest) (string, time.Duration, error) {
	reason, err := optionalString(req, "reason")
	if err != nil {
		return "", 0, err
	}
	var timeout time.Duration
	if v, ok := req.GetArguments()["timeout"]; ok && v != nil {
		secs, isNum := v.(float64)
		if !isNum || math.IsNaN(secs) || math.IsInf(secs, 0) {
			return "", 0, proxy.Errorf(proxy.EINVALID, "timeout must be a number of seconds, got %v", v)
		}
		// Bounded before the conversion, so that a huge number cannot wrap
		// into an allowed duration.
		if max := proxy.MaxHumanTimeout.Seconds(); secs < 0 || secs > max {
			e := proxy.Errorf(proxy.EINVALID, "timeout must be between 0 (the default, %g) and %g seconds, got %g", proxy.DefaultHumanTimeout.Seconds(), max, secs)
			e.Details = map[string]any{"field": "timeout"}
			return "", 0, e
		}
		timeout = time.Duration(secs * float64(time.Second))
	}
	return reason, timeout, proxy.ValidHumanRequest(reason, timeout)
}

func progressToken(req mcp.CallToolRequest) mcp.ProgressToken {
	if req.Params.Meta == nil {
		return nil
	}
	return req.Params.Meta.ProgressToken
}

func waitingMessage(liveURL string) string {
	if liveURL == "" {
		return "waiting for a person"
	}
	return "waiting for a person: " + liveURL
}

// reportWaiting sends the request's client a progress notification every
// progressEvery (progress: the seconds waited) until stop, which returns
// once no more can be sent.
func (s *Server) reportWaiting(ctx context.Context, token mcp.ProgressToken, message string) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	start := s.clock.Now()
	go func() {
		defer close(done)
		for clock.Sleep(ctx, s.clock, progressEvery) == nil {
			waited := math.Round(s.clock.Now().Sub(start).Seconds())
			params := map[string]any{"progressToken": token, "progress": waited, "message": message}
			if err := s.mcp.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), params); err != nil {
				s.log.DebugContext(ctx, "request_human progress not sent", "err", err)
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// humanAnswer is request_human's answer: whether a person handed back and
// what they did, then the snapshot taken after as any call answers it.
func humanAnswer(res *proxy.HumanResult) string {
	var b strings.Builder
	handed := "no"
	if res.HandedBack {
		handed = "yes"
	}
	writeLine(&b, "handed_back", handed)
	person := "no actions"
	if len(res.Actions) > 0 {
		person = strings.Join(res.Actions, "; ")
	}
	writeLine(&b, "person", oneLine(person))
	if res.Control != nil {
		writeLine(&b, "control", "a person still holds the browser (since "+res.Control.Since.UTC().Format(time.RFC3339)+"); your actions answer HUMAN_IN_CONTROL until they hand back")
	}
	if res.Result != nil {
		b.WriteString(strings.TrimSuffix(Answer(res.Result), "\n"))
		b.WriteByte('\n')
	}
	if res.LiveURL != "" {
		writeLine(&b, "live_url", res.LiveURL)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
