package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestJSON(t *testing.T) {
	f := newFakes(7)
	gh := f.make("github-token")
	pem := f.make("pem-rsa")
	pemJSON, _ := json.Marshal(pem)
	tests := []struct{ in, want string }{
		{`{"role":"user","content":"my token is ` + gh + `"}`,
			`{"role":"user","content":"my token is [REDACTED:github-token]"}`},
		// The key names a secret: the value goes whole.
		{`{"password": "hunter2", "user": "bob"}`, `{"password": "[REDACTED:secret]", "user": "bob"}`},
		{`{"api_key": "` + gh + `"}`, `{"api_key": "[REDACTED:github-token]"}`},
		{`{"api_key": "", "token": "$TOKEN", "password": null, "secret": 42}`,
			`{"api_key": "", "token": "$TOKEN", "password": null, "secret": 42}`},
		// Escaped content is decoded first: the PEM's \n are newlines.
		{`{"private_key": ` + string(pemJSON) + `}`, `{"private_key": "[REDACTED:private-key]"}`},
		{`{"output": "line1\nexport GITHUB_TOKEN=` + gh + `\n\u00e9\"q\""}`,
			`{"output": "line1\nexport GITHUB_TOKEN=[REDACTED:github-token]\né\"q\""}`},
		// A stream (JSON Lines), spacing and numbers kept.
		{"{\"a\": 1.50e3}\n[\"x\", \"AK" + "IAIOSFODNN7EXAMPLE\"]\n",
			"{\"a\": 1.50e3}\n[\"x\", \"[REDACTED:aws-access-key]\"]\n"},
		// Keys are redacted too.
		{`{"` + gh + `": true}`, `{"[REDACTED:github-token]": true}`},
		{``, ``},
	}
	for _, tt := range tests {
		got, n, err := JSON([]byte(tt.in))
		if err != nil {
			t.Errorf("JSON(%q): %v", tt.in, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("JSON(%q)\ngot  %s\nwant %s", tt.in, got, tt.want)
		}
		if again, m, err := JSON(got); err != nil || m != 0 || string(again) != string(got) {
			t.Errorf("JSON(%s) again: %s, %d more, %v", got, again, m, err)
		}
		if want := strings.Count(tt.want, "[REDACTED:"); n != want {
			t.Errorf("JSON(%q): count %d, want %d", tt.in, n, want)
		}
	}
	if _, _, err := JSON([]byte(`{"a": `)); err == nil {
		t.Error("JSON of a cut-off object: no error")
	}
}

// TestJSONCorpus redacts the JSON of the secret corpus as a session
// message would hold it: each file as a string in a message.
func TestJSONCorpus(t *testing.T) {
	f := newFakes(11)
	for _, gen := range []string{"aws-access-key", "jwt", "pem-openssh", "pem-json", "password", "slack-webhook"} {
		s := f.make(gen)
		msg, _ := json.Marshal(map[string]any{"role": "tool", "content": "Tool output:\nSECRET=" + s + "\n", "n": 3})
		got, n, err := JSON(msg)
		if err != nil || n == 0 || strings.Contains(string(got), s) || !json.Valid(got) {
			t.Errorf("%s: JSON(%s) = %s, %d, %v", gen, msg, got, n, err)
		}
	}
}

func FuzzJSON(f *testing.F) {
	f.Add([]byte(`{"password":"x","a":["AKIAIOSFODNN7EXAMPLE",1,null],"k\u00e9":"\ud83d\ude00"}`))
	f.Add([]byte("{\"s\":\"\xff\"}\n[]"))
	f.Fuzz(func(t *testing.T, in []byte) {
		out, n, err := JSON(in)
		if err != nil {
			return
		}
		if json.Valid(in) && !json.Valid(out) {
			t.Fatalf("JSON(%q) = %q: not valid", in, out)
		}
		if n == 0 && string(out) != string(in) {
			t.Fatalf("JSON(%q) changed it with nothing redacted: %q", in, out)
		}
		if again, m, err := JSON(out); err != nil || m != 0 || string(again) != string(out) {
			t.Fatalf("JSON(%q) = %q; again: %q, %d, %v", in, out, again, m, err)
		}
	})
}
