package api

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestExport(t *testing.T) {
	tests := []struct {
		name, path  string
		wantStatus  int
		wantType    string
		wantFile    string
		wantContain string
	}{
		{"playwright by default", "/sessions/" + knownID + "/export", 200, "text/plain; charset=utf-8", `attachment; filename="session-` + knownID + `.spec.ts"`, "await page.goto('http://127.0.0.1:1/');\n  await expect(page).toHaveURL(\"http://127.0.0.1:1/\");"},
		{"json", "/sessions/" + knownID + "/export?format=json", 200, "application/json", `attachment; filename="session-` + knownID + `.json"`, `"page_title": "One"`},
		{"unknown format", "/sessions/" + knownID + "/export?format=har", 400, "application/json", "", "INVALID_PARAMETERS"},
		{"unknown session", "/sessions/nope/export", 404, "application/json", "", "SESSION_NOT_FOUND"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			New(&fakeSessions{}, fakeContent{}).ServeHTTP(rec, newRequest("GET", tt.path, nil))
			if rec.Code != tt.wantStatus || rec.Header().Get("Content-Type") != tt.wantType || rec.Header().Get("Content-Disposition") != tt.wantFile {
				t.Fatalf("GET %s = %d %q %q, want %d %q %q", tt.path, rec.Code, rec.Header().Get("Content-Type"), rec.Header().Get("Content-Disposition"), tt.wantStatus, tt.wantType, tt.wantFile)
			}
			if !strings.Contains(rec.Body.String(), tt.wantContain) {
				t.Errorf("GET %s: body lacks %q:\n%s", tt.path, tt.wantContain, rec.Body)
			}
			if tt.wantType == "application/json" && !json.Valid(rec.Body.Bytes()) {
				t.Errorf("GET %s: not JSON", tt.path)
			}
		})
	}
}
