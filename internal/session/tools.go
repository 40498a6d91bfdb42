package session

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/catalog"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

// forwarded is what a call sends to its worker, and how to read the answer.
type forwarded struct {
	tool   string
	params json.RawMessage
	ext    *toolset.Own // set for the proxy's own tools
	blob   string       // their encoded arguments, kept out of the record
}

// blobMark stands in the record for a program's encoded arguments: the
// request row holds them once, masked; in the echoed code they would not be.
const blobMark = "(arguments: see the request)"

// imageMark stands in the record for an image a program returned as base64:
// the image itself is stored as an image of the ref.
const imageMark = "(image stored with this ref)"

// upstreamCall is the worker call for a tool call: itself for upstream's
// tools, the tool's program for the proxy's own.
func (m *Manager) upstreamCall(ctx context.Context, r *catalog.Resolved, params json.RawMessage) (forwarded, error) {
	ext := r.Own
	if ext == nil {
		return forwarded{tool: r.Tool.Name, params: params}, nil
	}
	args := params
	if ext.Name == "restore_state" {
		var err error
		if args, err = m.stateArgs(ctx, params); err != nil {
			return forwarded{}, err
		}
	}
	prog, err := ext.Build(args)
	if err != nil {
		return forwarded{}, proxy.Errorf(proxy.EINVALID, "%v", err)
	}
	return forwarded{tool: toolset.RunTool, params: prog.Args, ext: ext, blob: prog.Blob}, nil
}

// stateArgs resolves restore_state's ref_id into the state that save_state
// call recorded, in any session of the caller's; another client's ref is
// REF_NOT_FOUND, as an unknown one.
func (m *Manager) stateArgs(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	var p struct {
		State  json.RawMessage `json:"state"`
		RefID  string          `json:"ref_id"`
		Reload *bool           `json:"reload"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, proxy.Errorf(proxy.EINVALID, "params: %v", err)
	}
	if len(p.State) > 0 || p.RefID == "" {
		return params, nil
	}
	invalid := func(format string, a ...any) error {
		e := proxy.Errorf(proxy.EINVALID, format, a...)
		e.Details = map[string]any{"field": "params.ref_id", "ref_id": p.RefID}
		return e
	}
	req, err := m.store.GetRequest(ctx, p.RefID)
	if err != nil {
		return nil, err
	}
	if _, err := m.session(ctx, req.SessionID); err != nil {
		if proxy.ErrorCode(err) == proxy.ESESSIONMISSING {
			return nil, proxy.RefNotFound(p.RefID)
		}
		return nil, err
	}
	if req.ToolName != "save_state" {
		return nil, invalid("ref %s is a %s call; restore_state needs the ref_id of a save_state call", p.RefID, req.ToolName)
	}
	resp, err := m.store.GetResponse(ctx, p.RefID)
	if err != nil {
		return nil, err
	}
	parsed, err := upstream.Parse(json.RawMessage(resp.Result))
	if err != nil {
		return nil, invalid("the save_state call %s left no readable state", p.RefID)
	}
	out := toolset.Interpret(parsed.ResultText, errorText(parsed))
	var v struct {
		State json.RawMessage `json:"state"`
	}
	if out.Err != nil || json.Unmarshal(out.Value, &v) != nil || len(v.State) == 0 {
		return nil, invalid("the save_state call %s did not succeed; save the state again", p.RefID)
	}
	return json.Marshal(map[string]any{"state": v.State, "reload": p.Reload == nil || *p.Reload})
}

func errorText(p *upstream.Parsed) string {
	if p.IsError {
		return p.ErrorText
	}
	return ""
}

// scrub takes the program's encoded arguments out of upstream's answer.
func (f forwarded) scrub(raw string) string {
	if f.blob == "" {
		return raw
	}
	return strings.ReplaceAll(raw, f.blob, blobMark)
}

// interpret reads a program's answer; an image it returned becomes an image
// of the ref instead of base64 text in the record. For upstream's own
// tools it has nothing to do.
func (f forwarded) interpret(parsed *upstream.Parsed, resp *proxy.Response, ing *upstream.Ingested) toolset.Outcome {
	if f.ext == nil {
		return toolset.Outcome{}
	}
	out := toolset.Interpret(parsed.ResultText, errorText(parsed))
	if out.Image != nil {
		b64 := base64.StdEncoding.EncodeToString(out.Image.Data)
		resp.Result = strings.ReplaceAll(resp.Result, b64, imageMark)
		parsed.ResultText = strings.ReplaceAll(parsed.ResultText, b64, imageMark)
		ing.Images = append(ing.Images, proxy.Image{MimeType: out.Image.MimeType, Data: out.Image.Data})
	}
	return out
}

// setErrorCode gives a failed call result its code, whether a retry can
// help, and what to do (suggestion overrides the code's own).
func setErrorCode(res *proxy.CallResult, code, suggestion string) {
	e := proxy.Errorf(code, "")
	retry := e.Retryable
	res.ErrorCode, res.Retryable, res.Suggestion = code, &retry, e.Suggestion
	if suggestion != "" {
		res.Suggestion = suggestion
	}
}
