// Package redact replaces text inside plain strings and inside the strings
// of JSON documents: the one place that walks a JSON document to mask (or
// reveal) values in it. What is replaced, and with what, is the caller's:
// policy masks configured secrets, the session's credential vault masks and
// reveals its values.
package redact

import (
	"bytes"
	"encoding/json"
)

// Replacer is the text substitution a Redactor applies: a
// *strings.Replacer, or any other mapping with that method.
type Replacer interface {
	Replace(s string) string
}

// Then returns a Replacer that applies a, then b, so that two owners of
// values to mask share one walk of each document. Either may be nil; the
// result is nil when both are, so that a Redactor built on it still knows
// it has nothing to do.
func Then(a, b Replacer) Replacer {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return then{a, b}
}

type then struct{ first, second Replacer }

func (t then) Replace(s string) string { return t.second.Replace(t.first.Replace(s)) }

// SkipDocument implements Skipper when both parts can tell.
func (t then) SkipDocument(raw []byte) bool {
	a, aok := t.first.(Skipper)
	b, bok := t.second.(Skipper)
	return aok && bok && a.SkipDocument(raw) && b.SkipDocument(raw)
}

// Skipper is a Replacer that can tell from a JSON document's bytes that it
// would replace nothing in it, so that the document is not decoded and
// walked for nothing (a mask that needs a marker the bytes lack).
type Skipper interface {
	SkipDocument(raw []byte) bool
}

// Redactor applies a Replacer to text and to JSON documents. The zero
// options are the ones for masking — keys are masked too, and a document
// that does not decode is masked as text — so that leaving a field out never
// lets a value through; revealing opts out with SkipKeys and KeepInvalid.
// A Redactor is a value; it is safe for concurrent use when its Replacer and
// Media are.
type Redactor struct {
	// Replacer does the replacing; nil replaces nothing.
	Replacer Replacer
	// SkipKeys leaves object keys as they are; otherwise they are replaced
	// like string values (a recorded document's keys can hold page text).
	SkipKeys bool
	// KeepInvalid returns a document that does not decode (or re-encode)
	// unchanged; otherwise it is replaced in as text, so that a broken
	// document does not carry a value through unmasked.
	KeepInvalid bool
	// Media, when set, is given every media item (see JSON) and its base64
	// payload, and returns what stands in the item's place and whether that
	// differs from the item. Unset, media items are left as they are.
	Media func(item map[string]any, data string) (any, bool)
}

// String applies the Replacer to s.
func (r Redactor) String(s string) string {
	if r.Replacer == nil || s == "" {
		return s
	}
	return r.Replacer.Replace(s)
}

// JSON applies the Replacer to every string value of a JSON document, and to
// every key unless SkipKeys. It decodes and re-encodes, so a replacement can
// never land inside an escape sequence and a replacement holding quotes or
// backslashes stays valid JSON; a value the document spells with escapes
// (\u003c for <) is found too. Media items — objects with a mimeType and a
// base64 "data" or "blob" string: MCP image and audio content, blob
// resources — are not walked: replacing inside base64 would corrupt the
// data, and it is not text. They go to Media when it is set.
//
// The bytes come back unchanged, byte for byte, when nothing was replaced.
// Otherwise the result is the first JSON value of raw re-encoded by
// encoding/json: object keys sorted, numbers exactly as written, <, > and &
// not escaped, no trailing newline.
func (r Redactor) JSON(raw json.RawMessage) json.RawMessage {
	if sk, ok := r.Replacer.(Skipper); ok && len(raw) > 0 && sk.SkipDocument(raw) {
		r.Replacer = nil // nothing to replace: only media items may change
	}
	if len(raw) == 0 || (r.Replacer == nil && r.Media == nil) {
		return raw
	}
	if r.Replacer == nil && !bytes.Contains(raw, []byte("mimeType")) && !bytes.Contains(raw, []byte(`\u`)) {
		// Only a media item could change, and it needs a mimeType key,
		// which a document without \u escapes cannot hide.
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return r.invalid(raw)
	}
	doc, changed := r.walk(doc)
	if !changed {
		return raw
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return r.invalid(raw)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// invalid is what JSON returns for a document it cannot decode or encode.
func (r Redactor) invalid(raw json.RawMessage) json.RawMessage {
	if r.KeepInvalid {
		return raw
	}
	return json.RawMessage(r.String(string(raw)))
}

// walk replaces inside a decoded document and reports whether anything
// changed. Arrays are changed in place; objects are rebuilt, since a key
// may change.
func (r Redactor) walk(v any) (any, bool) {
	switch x := v.(type) {
	case string:
		out := r.String(x)
		return out, out != x
	case []any:
		changed := false
		for i, e := range x {
			var c bool
			if x[i], c = r.walk(e); c {
				changed = true
			}
		}
		return x, changed
	case map[string]any:
		if data, ok := mediaData(x); ok {
			if r.Media != nil {
				return r.Media(x, data)
			}
			// Other fields of the item (mimeType…) cannot hold typed text.
			return x, false
		}
		changed := false
		out := make(map[string]any, len(x))
		for k, e := range x {
			nk := k
			if !r.SkipKeys {
				nk = r.String(k)
			}
			ne, c := r.walk(e)
			if c || nk != k {
				changed = true
			}
			out[nk] = ne
		}
		return out, changed
	}
	// Numbers (json.Number), booleans and null hold no text.
	return v, false
}

// mediaData returns the base64 payload of a media item: an object with a
// mimeType and a string "data" (MCP image/audio content) or "blob" (an
// embedded blob resource).
func mediaData(m map[string]any) (string, bool) {
	if _, ok := m["mimeType"]; !ok {
		return "", false
	}
	for _, k := range []string{"data", "blob"} {
		if s, ok := m[k].(string); ok {
			return s, true
		}
	}
	return "", false
}
