package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// schemas compiles each upstream tool's input schema once, so a call's
// params are checked before anything is stored or forwarded: the model gets
// INVALID_PARAMETERS naming the field instead of an upstream error text, and
// the browser never sees the call.
type schemas struct {
	mu       sync.Mutex
	compiled map[string]*jsonschema.Schema // by tool name; nil: schema unusable
	printer  *message.Printer              // the validator's messages, in English
}

// decodeParams is the rule for a call's arguments, applied in the one
// decoding of them: a JSON object, with absent or null meaning {}; anything
// else is INVALID_PARAMETERS naming the field. Numbers stay as written
// (json.Number), as the schema validator wants them.
func decodeParams(p json.RawMessage) (json.RawMessage, map[string]any, error) {
	if len(p) == 0 || string(p) == "null" {
		return json.RawMessage(`{}`), map[string]any{}, nil
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(p))
	obj, isObj := v.(map[string]any)
	if err != nil || !isObj {
		if err == nil {
			err = fmt.Errorf("got %s", jsonKind(v))
		}
		e := proxy.Errorf(proxy.EINVALID, "params must be a JSON object: %v", err)
		e.Details = map[string]any{"field": "params"}
		return nil, nil, e
	}
	return p, obj, nil
}

// jsonKind names the JSON type of a decoded value.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	default:
		return "a number"
	}
}

// check validates decoded arguments against tool's input schema. A schema
// that does not compile is not enforced (upstream remains the judge) rather
// than blocking the tool.
func (s *schemas) check(tool proxy.Tool, args map[string]any) error {
	sch := s.schema(tool)
	if sch == nil {
		return nil
	}
	err := sch.Validate(args)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil
	}
	s.mu.Lock()
	if s.printer == nil {
		s.printer = message.NewPrinter(language.English)
	}
	p := s.printer
	s.mu.Unlock()
	field, msg := describe(ve, p)
	e := proxy.Errorf(proxy.EINVALID, "%s: %s: %s", tool.Name, field, msg)
	e.Details = map[string]any{"tool": tool.Name, "field": field}
	e.Suggestion = "Fix that parameter; GET /tools (or the MCP tool list) has the tool's input schema."
	return e
}

func (s *schemas) schema(tool proxy.Tool) *jsonschema.Schema {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sch, ok := s.compiled[tool.Name]; ok {
		return sch
	}
	if s.compiled == nil {
		s.compiled = map[string]*jsonschema.Schema{}
	}
	var sch *jsonschema.Schema
	if doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(tool.InputSchema)); err == nil {
		relaxDefaults(doc)
		c := jsonschema.NewCompiler()
		url := "tool:///" + tool.Name + ".json"
		if c.AddResource(url, doc) == nil {
			sch, _ = c.Compile(url)
		}
	}
	s.compiled[tool.Name] = sch
	return sch
}

// describe reduces a validation error to its first leaf: the field (a
// params path such as params.url or params.values[0]) and what is wrong.
func describe(ve *jsonschema.ValidationError, p *message.Printer) (field, msg string) {
	leaf := ve
	for len(leaf.Causes) > 0 {
		causes := leaf.Causes
		sort.SliceStable(causes, func(i, j int) bool { return len(causes[i].InstanceLocation) > len(causes[j].InstanceLocation) })
		leaf = causes[0]
	}
	path := leaf.InstanceLocation
	msg = leaf.ErrorKind.LocalizedString(p)
	// Missing and unexpected properties are reported at their parent;
	// name the property.
	if name := propertyNamed(msg); name != "" {
		path = append(append([]string(nil), path...), name)
	}
	var b strings.Builder
	b.WriteString("params")
	for _, seg := range path {
		if seg != "" && strings.Trim(seg, "0123456789") == "" {
			b.WriteString("[" + seg + "]")
		} else {
			b.WriteString("." + seg)
		}
	}
	return b.String(), msg
}

// propertyNamed extracts the first name from "missing property 'x'" or
// "additional properties 'x' not allowed" (and the other plural forms).
func propertyNamed(msg string) string {
	if !strings.HasPrefix(msg, "missing propert") && !strings.HasPrefix(msg, "additional propert") {
		return ""
	}
	i := strings.IndexByte(msg, '\'')
	if i < 0 {
		return ""
	}
	j := strings.IndexByte(msg[i+1:], '\'')
	if j < 0 {
		return ""
	}
	return msg[i+1 : i+1+j]
}

// relaxDefaults makes properties that have a default optional. Upstream's
// schemas come from zod, which lists a property with a default under
// "required" (browser_take_screenshot's scale) although upstream fills it in
// when it is absent: enforcing that would refuse calls upstream accepts.
func relaxDefaults(node any) {
	switch n := node.(type) {
	case map[string]any:
		props, _ := n["properties"].(map[string]any)
		if req, ok := n["required"].([]any); ok && props != nil {
			kept := req[:0]
			for _, r := range req {
				name, _ := r.(string)
				if p, ok := props[name].(map[string]any); ok {
					if _, hasDefault := p["default"]; hasDefault {
						continue
					}
				}
				kept = append(kept, r)
			}
			n["required"] = kept
		}
		for _, v := range n {
			relaxDefaults(v)
		}
	case []any:
		for _, v := range n {
			relaxDefaults(v)
		}
	}
}
