package proxy

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestValidProfileName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"github", true}, {"a", true}, {"work.gmail_2-fa", true}, {"0day", true},
		{strings.Repeat("a", 64), true}, {strings.Repeat("a", 65), false},
		{"", false}, {"GitHub", false}, {".hidden", false}, {"-x", false}, {"a/b", false},
		{"../x", false}, {"a b", false}, {"é", false}, {"a\x00", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidProfileName("name", tc.name)
			if (err == nil) != tc.ok {
				t.Fatalf("ValidProfileName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
			}
			if err != nil && ErrorCode(err) != EINVALID {
				t.Errorf("code %s, want %s", ErrorCode(err), EINVALID)
			}
		})
	}
}

func TestCheckStorageState(t *testing.T) {
	good := `{"cookies":[
	  {"name":"sid","value":"s3cret","domain":".example.com","path":"/","expires":1900000000,"httpOnly":true,"secure":true,"sameSite":"Lax"},
	  {"name":"tmp","value":"x","domain":"127.0.0.1","path":"/","expires":-1,"httpOnly":false,"secure":false,"sameSite":"Strict"},
	  {"name":"old","value":"y","domain":"a.example.org","path":"/","expires":1800000000,"httpOnly":false,"secure":false}],
	 "origins":[{"origin":"http://127.0.0.1:8080","localStorage":[{"name":"token","value":"t0k"}],"indexedDB":[]}]}`
	got, err := CheckStorageState(json.RawMessage(good))
	if err != nil {
		t.Fatal(err)
	}
	exp := time.Unix(1800000000, 0).UTC()
	want := StorageState{Origins: []string{"127.0.0.1", "a.example.org", "example.com", "http://127.0.0.1:8080"}, CookiesExpireAt: &exp}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if _, err := CheckStorageState(json.RawMessage(`{"cookies":[],"origins":[]}`)); err != nil {
		t.Errorf("empty state: %v", err)
	}

	for _, tc := range []struct{ name, state, field string }{
		{"not json", `{`, "state"},
		{"array", `[]`, "state"},
		{"empty", ``, "state"},
		{"no cookies", `{"origins":[]}`, "cookies"},
		{"no origins", `{"cookies":[]}`, "origins"},
		{"cookies not array", `{"cookies":{},"origins":[]}`, "cookies"},
		{"cookie without domain", `{"cookies":[{"name":"a","value":"SECRETVALUE","path":"/","expires":-1}],"origins":[]}`, "cookies[0].domain"},
		{"cookie without value", `{"cookies":[{"name":"a","domain":"x","path":"/","expires":-1}],"origins":[]}`, "cookies[0].value"},
		{"cookie value a number", `{"cookies":[{"name":"a","value":1,"domain":"x","path":"/","expires":-1}],"origins":[]}`, "cookies.value"},
		{"bad sameSite", `{"cookies":[{"name":"a","value":"b","domain":"x","path":"/","expires":-1,"sameSite":"lax"}],"origins":[]}`, "cookies[0].sameSite"},
		{"origin missing", `{"cookies":[],"origins":[{"localStorage":[]}]}`, "origins[0].origin"},
		{"origin not an origin", `{"cookies":[],"origins":[{"origin":"example.com","localStorage":[]}]}`, "origins[0].origin"},
		{"localStorage without value", `{"cookies":[],"origins":[{"origin":"http://a","localStorage":[{"name":"k"}]}]}`, "origins[0].localStorage[0].value"},
		{"indexedDB not array", `{"cookies":[],"origins":[{"origin":"http://a","localStorage":[],"indexedDB":{}}]}`, "origins[0].indexedDB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CheckStorageState(json.RawMessage(tc.state))
			e := AsError(err)
			if err == nil || e.Code != EINVALID {
				t.Fatalf("err = %v, want %s", err, EINVALID)
			}
			if e.Details["field"] != tc.field {
				t.Errorf("field %v, want %s (%s)", e.Details["field"], tc.field, e.Message)
			}
			if strings.Contains(e.Message, "SECRETVALUE") {
				t.Errorf("a value of the state reached the error: %s", e.Message)
			}
		})
	}
}
