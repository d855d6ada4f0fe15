package redact

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const (
	upperDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	alnum       = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	urlSafe     = alnum + "-_"
	std64       = alnum + "+/"
	hexDigits   = "0123456789abcdef"
)

// fakes makes fake secrets that have the form of real ones. The
// well-known prefixes are split ("gh"+"p_") so that this file and the
// corpus hold no literal a secret scanner would flag.
type fakes struct{ r *rand.Rand }

func newFakes(seed uint64) *fakes { return &fakes{rand.New(rand.NewPCG(seed, 17))} }

func (f *fakes) pick(alpha string, n int) string {
	for {
		b := make([]byte, n)
		for i := range b {
			b[i] = alpha[f.r.IntN(len(alpha))]
		}
		// A real token of this alphabet has digits and both cases; one
		// that by chance lacks them is not what the rules are for.
		if !strings.ContainsRune(alpha, 'a') || !strings.ContainsRune(alpha, 'A') || mixed(b) {
			return string(b)
		}
	}
}

func (f *fakes) pem(kind string, lines int, end bool) string {
	var sb strings.Builder
	sb.WriteString("-----BEGIN " + kind + "PRIVATE" + " KEY-----\n")
	for range lines {
		sb.WriteString(f.pick(std64, 64) + "\n")
	}
	sb.WriteString(f.pick(std64, 40) + "==\n")
	if end {
		sb.WriteString("-----END " + kind + "PRIVATE" + " KEY-----")
	}
	return sb.String()
}

// make returns a fake secret made by the named generator.
func (f *fakes) make(gen string) string {
	switch gen {
	case "aws-access-key":
		return "AK" + "IA" + f.pick(upperDigits, 16)
	case "aws-secret":
		return f.pick(std64, 40)
	case "aws-session":
		return "IQoJb3JpZ2luX2Vj" + f.pick(std64, 200) + "=="
	case "github-token":
		return "gh" + "p_" + f.pick(alnum, 36)
	case "github-pat":
		return "github" + "_pat_" + "11" + f.pick(upperDigits, 20) + "_" + f.pick(alnum, 59)
	case "gitlab-token":
		return "gl" + "pat-" + f.pick(urlSafe, 20)
	case "openai-key":
		return "sk" + "-proj-" + f.pick(urlSafe, 56) + "T3Blbk" + "FJ" + f.pick(urlSafe, 56)
	case "anthropic-key":
		return "sk" + "-ant-api03-" + f.pick(urlSafe, 93) + "AA"
	case "slack-token":
		return "xo" + "xb-" + f.pick("0123456789", 12) + "-" + f.pick("0123456789", 13) + "-" + f.pick(alnum, 24)
	case "slack-webhook":
		return "https://hooks.slack" + ".com/services/T" + f.pick(upperDigits, 8) + "/B" + f.pick(upperDigits, 10) + "/" + f.pick(alnum, 24)
	case "stripe-key":
		return "sk" + "_live_" + f.pick(alnum, 24)
	case "stripe-webhook":
		return "wh" + "sec_" + f.pick(alnum, 32)
	case "google-api-key":
		return "AI" + "za" + "Sy" + f.pick(urlSafe, 33)
	case "google-oauth":
		return "GOC" + "SPX-" + f.pick(urlSafe, 28)
	case "google-refresh":
		return "1//0" + f.pick(urlSafe, 99)
	case "jwt":
		enc := base64.RawURLEncoding.EncodeToString
		return enc([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." +
			enc([]byte(fmt.Sprintf(`{"sub":"%d","name":"Jane Doe","iat":1516239022}`, f.r.IntN(1e9)))) + "." + f.pick(urlSafe, 43)
	case "npm-token":
		return "np" + "m_" + f.pick(alnum, 36)
	case "pypi-token":
		return "py" + "pi-AgEIcHlwaS5vcmc" + f.pick(urlSafe, 120)
	case "huggingface":
		return "h" + "f_" + f.pick(alnum, 34)
	case "azure-storage":
		return f.pick(std64, 86) + "=="
	case "sas":
		return f.pick(alnum, 43) + "%3D"
	case "sendgrid-key":
		return "S" + "G." + f.pick(urlSafe, 22) + "." + f.pick(urlSafe, 43)
	case "digitalocean-token":
		return "do" + "p_v1_" + f.pick(hexDigits, 64)
	case "password":
		return f.pick(alnum, 10) + "!" + f.pick(alnum, 4)
	case "basic":
		return base64.StdEncoding.EncodeToString([]byte("admin:" + f.pick(alnum, 14)))
	case "b64-password":
		return base64.StdEncoding.EncodeToString([]byte(f.pick(alnum, 16)))
	case "django":
		return "django-insecure-" + f.pick(alnum+"!@#%^*-_=+", 50)
	case "high-entropy":
		return f.pick(std64, 40)
	case "git-sha":
		return f.pick(hexDigits, 40)
	case "hex-secret":
		return f.pick(hexDigits, 48)
	case "pem-openssh":
		return f.pem("OPENSSH ", 6, true)
	case "pem-rsa":
		return f.pem("RSA ", 20, true)
	case "pem-truncated":
		return f.pem("EC ", 3, false)
	case "pem-json":
		return strings.ReplaceAll(f.pem("", 25, true)+"\n", "\n", `\n`)
	}
	panic("no fake secret generator " + gen)
}

var placeholderRE = regexp.MustCompile(`\{\{([a-z0-9-]+)(?:\|([a-z0-9-]+))?\}\}`)

// fill replaces each {{gen}} or {{gen|kind}} in tmpl with a fake secret
// and returns the text, the secrets and the marker each should become.
func fill(f *fakes, tmpl string) (text string, secrets, kinds []string) {
	text = placeholderRE.ReplaceAllStringFunc(tmpl, func(m string) string {
		sm := placeholderRE.FindStringSubmatch(m)
		s := f.make(sm[1])
		kind := sm[2]
		if kind == "" {
			kind = sm[1]
		}
		secrets = append(secrets, s)
		kinds = append(kinds, kind)
		return s
	})
	return text, secrets, kinds
}

// TestCorpusSecrets redacts realistic prompts and tool output (shell
// logs, .env dumps, curl commands, JSON configs) with fake secrets of
// every kind in them: each secret must go, with the expected marker.
func TestCorpusSecrets(t *testing.T) {
	files, _ := filepath.Glob("testdata/secret/*")
	if len(files) == 0 {
		t.Fatal("no files in testdata/secret")
	}
	for _, file := range files {
		tmpl, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for seed := range uint64(20) {
			text, secrets, kinds := fill(newFakes(seed), string(tmpl))
			out, n := String(text)
			if n < len(secrets)/2 {
				t.Errorf("%s seed %d: %d redactions for %d secrets", file, seed, n, len(secrets))
			}
			if strings.Contains(out, "AKIAIOSFODNN7EXAMPLE") {
				t.Errorf("%s seed %d: the AWS example key survived", file, seed)
			}
			for i, s := range secrets {
				if strings.Contains(out, s) || len(s) > 24 && strings.Contains(out, s[len(s)-16:]) {
					t.Errorf("%s seed %d: %s secret %q survived in:\n%s", file, seed, kinds[i], s, around(out, s))
				}
				if !strings.Contains(out, Marker(kinds[i])) {
					t.Errorf("%s seed %d: no %s in:\n%s", file, seed, Marker(kinds[i]), out)
				}
			}
			if t.Failed() {
				return
			}
		}
	}
}

func around(out, s string) string {
	i := strings.Index(out, s)
	if i < 0 {
		i = strings.Index(out, s[len(s)-16:])
	}
	return out[max(0, i-120):min(len(out), i+len(s)+40)]
}

// TestCorpusKeep runs the look-alikes (sha256 and git ids, UUIDs, paths,
// go.sum and SRI hashes, SSH public keys, Go and minified code, prose
// about passwords) through: nothing may change.
func TestCorpusKeep(t *testing.T) {
	files, _ := filepath.Glob("testdata/keep/*")
	if len(files) == 0 {
		t.Fatal("no files in testdata/keep")
	}
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		out, n := Bytes(text)
		if n != 0 {
			for _, s := range find(text) {
				t.Errorf("%s: %s redacted: %q", file, s.kind, text[s.start:s.end])
			}
			_ = out
		}
	}
}
