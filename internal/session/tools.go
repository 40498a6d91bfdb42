package session

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

// listed is what Tools shows for the selection ctx acts under: upstream's
// tools of the selected groups (without those the policy switched off),
// then the proxy's own tools of the selected groups — only if upstream can
// run their programs.
func (m *Manager) listed(ctx context.Context, tools []upstream.Tool) []upstream.Tool {
	sel := m.selection(ctx)
	var out []upstream.Tool
	for _, t := range visibleTools(m.opts.Policy, tools) {
		if sel.Has(toolset.UpstreamGroup(t.Name)) {
			out = append(out, t)
		}
	}
	if !hasTool(tools, toolset.RunTool) {
		return out
	}
	for _, t := range sel.Tools() {
		if m.opts.Policy.ToolEnabled(t.Name) {
			out = append(out, upstream.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, Annotations: t.Annotations()})
		}
	}
	return out
}

// selection is the tool groups a request lists and calls: its client's own
// choice, else the server's.
func (m *Manager) selection(ctx context.Context) toolset.Selection {
	return toolset.FromContext(ctx, m.opts.Toolset)
}

func hasTool(tools []upstream.Tool, name string) bool {
	for _, t := range tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// resolveTool finds the tool a call names: one of the proxy's own (ext is
// then set) or upstream's. A tool of a group the request's selection does
// not hold is not found, like any unknown name.
func (m *Manager) resolveTool(ctx context.Context, name string) (upstream.Tool, *toolset.Tool, error) {
	notFound := func(why string) (upstream.Tool, *toolset.Tool, error) {
		e := proxy.Errorf(proxy.ETOOLMISSING, "%s", why)
		e.Details = map[string]any{"tool": name}
		return upstream.Tool{}, nil, e
	}
	sel := m.selection(ctx)
	unselected := func(group string) (upstream.Tool, *toolset.Tool, error) {
		return notFound("tool " + name + " is in tool group " + group + ", which is not selected (" + sel.String() +
			"); the server selects groups with PROXY_TOOLSETS, a client its own (mcp-bridge --toolsets, /mcp?toolsets=)")
	}
	if ext, ok := sel.Lookup(name); ok {
		_, runner, err := m.lookupTool(ctx, toolset.RunTool)
		if err != nil {
			return upstream.Tool{}, nil, err
		}
		if !runner {
			return notFound("tool " + name + " needs upstream's " + toolset.RunTool + ", which this @playwright/mcp does not offer")
		}
		return upstream.Tool{Name: ext.Name, Description: ext.Description, InputSchema: ext.InputSchema}, ext, nil
	}
	tool, ok, err := m.lookupTool(ctx, name)
	if err != nil {
		return upstream.Tool{}, nil, err
	}
	if !ok {
		if ext, own := toolset.All().Lookup(name); own {
			return unselected(ext.Group)
		}
		return notFound("no tool named " + quote(name))
	}
	if g := toolset.UpstreamGroup(name); !sel.Has(g) {
		return unselected(g)
	}
	return tool, nil, nil
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// forwarded is what a call sends to its worker, and how to read the answer.
type forwarded struct {
	tool   string
	params json.RawMessage
	ext    *toolset.Tool // set for the proxy's own tools
	blob   string        // their encoded arguments, kept out of the record
}

// blobMark stands in the record for a program's encoded arguments: the
// request row holds them once, masked; in the echoed code they would not be.
const blobMark = "(arguments: see the request)"

// imageMark stands in the record for an image a program returned as base64:
// the image itself is stored as an image of the ref.
const imageMark = "(image stored with this ref)"

// upstreamCall is the worker call for a tool call: itself for upstream's
// tools, the tool's program for the proxy's own.
func (m *Manager) upstreamCall(ctx context.Context, name string, ext *toolset.Tool, params json.RawMessage) (forwarded, error) {
	if ext == nil {
		return forwarded{tool: name, params: params}, nil
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
