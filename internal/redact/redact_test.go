package redact

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestKinds redacts one fake secret of each kind in a line of context
// and checks what is left: the context, and the marker of the kind.
func TestKinds(t *testing.T) {
	f := newFakes(1)
	tests := []struct {
		gen, kind, before, after string
	}{
		{"aws-access-key", "aws-access-key", "key id ", " in use"},
		{"github-token", "github-token", "token ", "\n"},
		{"github-pat", "github-token", "", ""},
		{"gitlab-token", "gitlab-token", "GL=", " "},
		{"openai-key", "openai-key", "OPENAI_API_KEY=", "\n"},
		{"anthropic-key", "anthropic-key", "x-api-key: ", "\n"},
		{"slack-token", "slack-token", "bot ", "."},
		{"slack-webhook", "slack-webhook", "post to ", " now"},
		{"stripe-key", "stripe-key", "Stripe.api_key = '", "'"},
		{"stripe-webhook", "stripe-key", "whsec ", ""},
		{"google-api-key", "google-api-key", "&key=", "&x=1"},
		{"google-oauth", "google-oauth", "client secret ", ""},
		{"jwt", "jwt", "got ", " back"},
		{"npm-token", "npm-token", "NPM ", ""},
		{"pypi-token", "pypi-token", "upload with ", ""},
		{"huggingface", "huggingface", "hf token ", ""},
		{"azure-storage", "azure-storage", "AccountName=a;AccountKey=", ";EndpointSuffix=core.windows.net"},
		{"sas", "azure-sas", "https://a.blob.core.windows.net/c?sv=2022-11-02&sig=", "&se=x"},
		{"sendgrid-key", "sendgrid-key", "sendgrid ", ""},
		{"digitalocean-token", "digitalocean-token", "do ", ""},
		{"pem-rsa", "private-key", "key:\n", "\nend of file"},
		{"pem-truncated", "private-key", "head says\n", ""},
		{"password", "secret", "DB_PASSWORD=", "\n"},
		{"password", "secret", `{"password": "`, `"}`},
		{"password", "secret", "password: ", "\n"},
		{"password", "secret", "--password ", " --user x"},
		{"password", "secret", "client_secret='", "'"},
		{"password", "secret", "curl -u admin:", " https://x"},
		{"password", "secret", "mysql -u root -p", " db"},
		{"password", "url-password", "https://bob:", "@example.com/"},
		{"high-entropy", "authorization", "Authorization: Basic ", ""},
		{"high-entropy", "bearer-token", "use Bearer ", " for it"},
		{"high-entropy", "high-entropy", "signed with ", " ok"},
		{"hex-secret", "high-entropy", "hex ", ""},
	}
	for _, tt := range tests {
		secret := f.make(tt.gen)
		in := tt.before + secret + tt.after
		want := tt.before + Marker(tt.kind) + tt.after
		got, n := String(in)
		if got != want || n != 1 {
			t.Errorf("%s: String(%q)\ngot  %q, %d\nwant %q, 1", tt.gen, in, got, n, want)
		}
	}
}

// TestKeep lists look-alikes that must come out as they went in.
func TestKeep(t *testing.T) {
	for _, s := range []string{
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
		"commit 5d6054b2a1c3e7f8090a1b2c3d4e5f60718293a4",
		"d41d8cd98f00b204e9800998ecf8427e",
		"123e4567-e89b-12d3-a456-426614174000",
		"/home/alice/go/pkg/mod/github.com/spf13/cobra@v1.10.2/command.go",
		"src/components/UserProfile/AvatarUploadDialog2024.tsx",
		"pneumonoultramicroscopicsilicovolcanoconiosis",
		"MTIzNDU2Nzg5MDEyMzQ1Njc4OTA=",
		"TestSessionSideBySideRewindKeepsUserEdits",
		"password := r.FormValue(\"password\")",
		"token = tokens[0]",
		"password: string",
		"PASSWORD=$DB_PASSWORD",
		"password: ${{ secrets.DB_PASSWORD }}",
		"max_tokens: 4096",
		"input_tokens: 1534",
		"token_type: bearer",
		"Authorization: Bearer $TOKEN",
		"API_KEY = process.env.API_KEY",
		"h1:cHuQnKZ8tXgtM5JTSl4jOIp1VbAJ0smd5qsMDiDwlF8=",
		"PWD=/home/alice/project\nOLDPWD=~/src",
		"compass: north, bypass=yes",
		"[REDACTED:github-token]",
		"password=[REDACTED:secret]",
		"https://user:[REDACTED:url-password]@example.com",
		"",
	} {
		if got, n := String(s); got != s || n != 0 {
			t.Errorf("String(%q) = %q, %d; want it unchanged", s, got, n)
		}
	}
}

// TestInvalidUTF8 checks that bytes around a secret are kept, valid
// UTF-8 or not.
func TestInvalidUTF8(t *testing.T) {
	key := "AK" + "IAIOSFODNN7EXAMPLE"
	in := []byte("\xff\xfe caf\xc3\xa9 \xc3 " + key + " \x80\xbf\n")
	got, n := Bytes(in)
	want := []byte("\xff\xfe caf\xc3\xa9 \xc3 [REDACTED:aws-access-key] \x80\xbf\n")
	if !bytes.Equal(got, want) || n != 1 {
		t.Errorf("got %q, %d; want %q, 1", got, n, want)
	}
}

// TestBytesNoCopy checks that Bytes returns its input when there is
// nothing to redact, and never writes to it.
func TestBytesNoCopy(t *testing.T) {
	in := []byte("nothing here")
	if got, _ := Bytes(in); &got[0] != &in[0] {
		t.Error("Bytes copied an input with no secret")
	}
	key := []byte("AK" + "IAIOSFODNN7EXAMPLE")
	orig := bytes.Clone(key)
	Bytes(key)
	if !bytes.Equal(key, orig) {
		t.Error("Bytes changed its input")
	}
}

// TestLinear redacts large inputs built to trouble a scanner (a PEM
// header with no end, one endless token, many assignments): the time
// must grow with the size, not its square.
func TestLinear(t *testing.T) {
	header := "-----BEGIN RSA " + "PRIVATE KEY-----\n"
	for _, in := range []string{
		header + strings.Repeat("A", 4<<20),
		strings.Repeat("aB3+", 1<<20),
		strings.Repeat("password=", 1<<19),
		strings.Repeat("mysql ", 1<<19) + "-p",
		strings.Repeat("https://a:", 1<<19),
		strings.Repeat(header, 1<<16),
	} {
		start := time.Now()
		String(in)
		d := time.Since(start)
		t.Logf("%q…: %d bytes in %v", in[:12], len(in), d)
		// Quadratic work on megabytes takes minutes, linear well under a
		// second; the time is logged, not failed on (no test fails on a
		// wall-clock time): a quadratic scan shows as a test that hangs.
		_ = d
	}
}

// checkInvariants checks for one input what FuzzRedact does.
func checkInvariants(t *testing.T, in []byte) {
	t.Helper()
	spans := find(in)
	at := 0
	for _, s := range spans {
		if s.start < at || s.end <= s.start || s.end > len(in) {
			t.Fatalf("bad spans %v for %q", spans, in)
		}
		at = s.end
	}
	// One look: outside the spans, the text is kept byte for byte.
	first := apply(in, spans)
	kept := len(in)
	markers := 0
	for _, s := range spans {
		kept -= s.end - s.start
		markers += len(Marker(s.kind))
	}
	if len(first) != kept+markers {
		t.Fatalf("length %d, want %d kept + %d of markers", len(first), kept, markers)
	}
	// The result has nothing left to redact.
	out, n := Bytes(in)
	if n < len(spans) {
		t.Fatalf("count %d below the %d spans found", n, len(spans))
	}
	if again, m := Bytes(out); m != 0 || !bytes.Equal(again, out) {
		t.Fatalf("not idempotent: %q\nredacts to %q (%d more)", out, again, m)
	}
	if s, m := String(string(in)); s != string(out) || m != n {
		t.Fatalf("String and Bytes differ")
	}
}

func FuzzRedact(f *testing.F) {
	g := newFakes(3)
	for _, gen := range []string{"aws-access-key", "github-token", "jwt", "pem-truncated", "password",
		"high-entropy", "hex-secret", "slack-webhook", "azure-storage", "openai-key"} {
		f.Add("x=" + g.make(gen) + " y")
	}
	f.Add("https://u:p@h password=abc \xff AKIA")
	f.Add("mysql -u root -phunter2 ; Authorization: Bearer abcdefghij0123456789")
	f.Fuzz(func(t *testing.T, s string) {
		checkInvariants(t, []byte(s))
	})
}

// TestInvariantsRandom runs the fuzz checks on random mixes of secrets,
// look-alikes and noise, so the everyday loop covers them too.
func TestInvariantsRandom(t *testing.T) {
	g := newFakes(5)
	r := rand.New(rand.NewPCG(5, 5))
	parts := []string{" ", "\n", "=", ":", "@", "://", "[", "]", "\"", "'", "password=", "token: ",
		"Bearer ", "AKIA", "ghp_", "sk-", "-----BEGIN RSA PRIVATE KEY-----\n", "\xff", "é",
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "[REDACTED:x]"}
	gens := []string{"aws-access-key", "github-token", "jwt", "pem-truncated", "password", "basic",
		"high-entropy", "hex-secret", "slack-token", "google-api-key", "anthropic-key", "sas"}
	for range 2000 {
		var sb strings.Builder
		for range 1 + r.IntN(12) {
			if r.IntN(3) == 0 {
				sb.WriteString(g.make(gens[r.IntN(len(gens))]))
			} else {
				sb.WriteString(parts[r.IntN(len(parts))])
			}
		}
		checkInvariants(t, []byte(sb.String()))
	}
}

var benchText = func() []byte {
	f := newFakes(9)
	var sb strings.Builder
	plain := []string{
		"$ go test ./internal/redact\nok  \tgithub.com/seed1cedbf7c/ckpt/internal/redact\t0.146s\n",
		"sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08  turn 3: fix the parser\n",
		"func (s *store) Put(ctx context.Context, b []byte) (ID, error) {\n\treturn s.put(ctx, b)\n}\n",
		"The password must be at least 12 characters; max_tokens: 4096 caps the reply.\n",
		`{"role":"assistant","content":"I updated internal/redact/rules.go and ran the tests."}` + "\n",
		"/home/alice/go/pkg/mod/golang.org/x/sys@v0.49.0/unix/zsyscall_linux_amd64.go:1234\n",
	}
	gens := []string{"aws-access-key", "github-token", "jwt", "password", "high-entropy", "openai-key"}
	for i := 0; sb.Len() < 1<<20; i++ {
		sb.WriteString(plain[i%len(plain)])
		if i%10 == 0 {
			sb.WriteString("export SECRET=" + f.make(gens[i/10%len(gens)]) + "\n")
		}
	}
	return []byte(sb.String())
}()

func BenchmarkRedact(b *testing.B) {
	b.SetBytes(int64(len(benchText)))
	for b.Loop() {
		Bytes(benchText)
	}
}
