package redact

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// mask is the Replacer of most cases: two values, the longer one first so
// that it is masked whole.
var mask = strings.NewReplacer("hunter22-long", "<M2>", "hunter22", "<M1>", `q"u\o<te>&`, "<Q>")

func TestString(t *testing.T) {
	tests := []struct {
		name string
		r    Redactor
		in   string
		want string
	}{
		{"replaced", Redactor{Replacer: mask}, "pw hunter22 and hunter22-long", "pw <M1> and <M2>"},
		{"nothing to replace", Redactor{Replacer: mask}, "clean", "clean"},
		{"empty", Redactor{Replacer: mask}, "", ""},
		{"no replacer", Redactor{}, "hunter22", "hunter22"},
		{"raw JSON is only text", Redactor{Replacer: mask}, `{"hunter22":1}`, `{"<M1>":1}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.r.String(tc.in)); diff != "" {
				t.Errorf("String(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestJSON(t *testing.T) {
	masker := Redactor{Replacer: mask}
	revealer := Redactor{Replacer: strings.NewReplacer("<P>", `a"b\c<d>&e`), SkipKeys: true, KeepInvalid: true}
	// dropImages stands in an image item's place with a text item.
	dropImages := Redactor{Replacer: mask, Media: func(item map[string]any, data string) (any, bool) {
		if item["type"] != "image" {
			return item, false
		}
		return map[string]any{"type": "text", "text": "dropped " + data}, true
	}}
	const same = "\x00same" // the output must be the input, byte for byte
	tests := []struct {
		name string
		r    Redactor
		in   string
		want string // exact bytes; same: the input
	}{
		{"string value", masker, `{"text":"pw hunter22"}`, `{"text":"pw <M1>"}`},
		{"top-level string", masker, `"hunter22"`, `"<M1>"`},
		{"longest first", masker, `["hunter22-long hunter22"]`, `["<M2> <M1>"]`},
		{"nested objects and arrays", masker,
			`{"content":[{"type":"text","text":"a hunter22"},[["hunter22-long"],{"deep":{"x":"hunter22"}}]],"z":"clean"}`,
			`{"content":[{"text":"a <M1>","type":"text"},[["<M2>"],{"deep":{"x":"<M1>"}}]],"z":"clean"}`},
		{"keys are masked", masker, `{"hunter22":"v","b":{"x hunter22-long":1}}`, `{"<M1>":"v","b":{"x <M2>":1}}`},
		{"keys skipped", revealer, `{"<P>":"<P>"}`, `{"<P>":"a\"b\\c<d>&e"}`},
		{"keys skipped, nothing else", revealer, `{"<P>": 1}`, same},
		// The value is found though the document escapes it, and the
		// output does not escape <, > and & for HTML.
		{"escaped quotes and HTML characters", masker, `{"t":"x q\"u\\o\u003cte\u003e\u0026 y"}`, `{"t":"x <Q> y"}`},
		{"revealed value is escaped for JSON", revealer, `{"f":"s = '<P>'"}`, `{"f":"s = 'a\"b\\c<d>&e'"}`},
		{"placeholder escaped by json.Marshal", revealer, `["\u003cP\u003e"]`, `["a\"b\\c<d>&e"]`},
		// A replacement in the raw bytes would hit the "n" of \n.
		{"after an escape", Redactor{Replacer: strings.NewReplacer("nabcd", "<N>")}, `{"t":"line\nabcd"}`, same},
		{"numbers, booleans and null are kept as written", masker,
			`{"a":1.50,"b":-0e+10,"c":12345678901234567890123,"d":true,"e":null,"f":false,"s":"hunter22"}`,
			`{"a":1.50,"b":-0e+10,"c":12345678901234567890123,"d":true,"e":null,"f":false,"s":"<M1>"}`},
		{"unchanged keeps its bytes", masker, "{ \"a\" : [1.0, \"clean\"],\n \"b\":null }", same},
		{"keys are sorted on re-encoding", masker, `{"z":1,"a":"hunter22","m":2}`, `{"a":"<M1>","m":2,"z":1}`},
		{"image data untouched", masker, `{"type":"image","mimeType":"image/png","data":"hunter22"}`, same},
		{"blob untouched", masker, `{"uri":"hunter22","mimeType":"application/pdf","blob":"hunter22"}`, same},
		{"media item beside text", masker,
			`[{"type":"image","mimeType":"image/png","data":"hunter22"},{"type":"text","text":"hunter22"}]`,
			`[{"data":"hunter22","mimeType":"image/png","type":"image"},{"text":"<M1>","type":"text"}]`},
		{"no mimeType is not media", masker, `{"type":"image","data":"hunter22"}`, `{"data":"<M1>","type":"image"}`},
		{"data that is not a string is not media", masker, `{"mimeType":"hunter22","data":1}`, `{"data":1,"mimeType":"<M1>"}`},
		{"media hook replaces", dropImages, `[{"type":"image","mimeType":"image/png","data":"QUFB"}]`, `[{"text":"dropped QUFB","type":"text"}]`},
		{"media hook keeps", dropImages, `[{"type":"audio","mimeType":"audio/wav","data":"hunter22"}]`, same},
		{"media hook without a replacer", Redactor{Media: dropImages.Media}, `{"type":"image","mimeType":"image/png","data":"QUFB"}`, `{"text":"dropped QUFB","type":"text"}`},
		{"media hook without a replacer, key escaped", Redactor{Media: dropImages.Media}, `{"type":"image","mime\u0054ype":"image/png","data":"QUFB"}`, `{"text":"dropped QUFB","type":"text"}`},
		{"media hook without a replacer, no media", Redactor{Media: dropImages.Media}, `{"type":"text","text":"hunter22"}`, same},
		{"invalid JSON is masked as text", masker, `{"t":"hunter22`, `{"t":"<M1>`},
		{"invalid JSON kept", revealer, `{"t":"<P>`, same},
		// Only the first value decodes; what follows it goes when the
		// first value changes.
		{"trailing data, changed", masker, `{"t":"hunter22"} {"u":"hunter22"}`, `{"t":"<M1>"}`},
		{"trailing data, unchanged", masker, `{"t":"clean"} {"u":"hunter22"}`, same},
		{"empty", masker, ``, same},
		{"no replacer", Redactor{}, `"hunter22"`, same},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if want == same {
				want = tc.in
			}
			if diff := cmp.Diff(want, string(tc.r.JSON(json.RawMessage(tc.in)))); diff != "" {
				t.Errorf("JSON(%s) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestThen(t *testing.T) {
	first := strings.NewReplacer("hunter22", "<M1>")
	second := strings.NewReplacer("<M1>", "<again>", "cred", "<C>")
	if got := Then(first, second).Replace("hunter22 cred"); got != "<again> <C>" {
		t.Errorf("Then(first, second) = %q, want the second applied to the first's output", got)
	}
	if Then(nil, nil) != nil {
		t.Error("Then(nil, nil) is not nil: a Redactor built on it would walk every document")
	}
	if got := Then(nil, second).Replace("cred"); got != "<C>" {
		t.Errorf("Then(nil, second) = %q", got)
	}
	if got := Then(first, nil).Replace("hunter22"); got != "<M1>" {
		t.Errorf("Then(first, nil) = %q", got)
	}
}

// markerReplacer replaces "secret" and can tell from a document's bytes that
// it holds none; calls counts the strings it was given.
type markerReplacer struct{ calls *int }

func (m markerReplacer) Replace(s string) string {
	*m.calls++
	return strings.ReplaceAll(s, "secret", "<masked>")
}

func (m markerReplacer) SkipDocument(raw []byte) bool { return !bytes.Contains(raw, []byte("secret")) }

func TestSkipper(t *testing.T) {
	var calls int
	r := Redactor{Replacer: markerReplacer{&calls}}
	plain := json.RawMessage(`{"a":"nothing here","b":["x"]}`)
	if got := r.JSON(plain); string(got) != string(plain) || calls != 0 {
		t.Errorf("a document the replacer skips: %s, %d strings walked; want it unchanged and none", got, calls)
	}
	if got := r.JSON(json.RawMessage(`{"a":"a secret"}`)); string(got) != `{"a":"a <masked>"}` {
		t.Errorf("a document with the marker: %s", got)
	}
	// In a chain, a part that cannot tell keeps the walk.
	calls = 0
	chained := Redactor{Replacer: Then(strings.NewReplacer("x", "y"), markerReplacer{&calls})}
	if got := chained.JSON(plain); string(got) != `{"a":"nothing here","b":["y"]}` {
		t.Errorf("a chain with a plain replacer: %s", got)
	}
	both := Redactor{Replacer: Then(markerReplacer{&calls}, markerReplacer{&calls})}
	calls = 0
	if got := both.JSON(plain); string(got) != string(plain) || calls != 0 {
		t.Errorf("a chain of skippers: %s, %d strings walked", got, calls)
	}
}
