package redact

import (
	"bytes"
	"regexp"
)

// A rule finds one kind of secret with a regular expression. If the
// expression has a group named "v", only that group is redacted (the
// value of an assignment, the password of a URL); otherwise the whole
// match is. A rule runs only if its input holds one of its literals
// (checked case-insensitively when fold is set): a cheap filter that
// keeps the many expressions off text that cannot match.
type rule struct {
	kind     string
	re       *regexp.Regexp
	literals [][]byte
	fold     bool
	// keep reports whether a match is not a secret after all (a type
	// name, a placeholder, code); nil keeps nothing.
	keep func(v []byte) bool
	// rank orders rules whose matches start at the same byte: the lower
	// names the secret (a GitHub token in GITHUB_TOKEN=… is a
	// github-token, not a generic assignment).
	rank int
}

func init() {
	for i := range rules {
		if rules[i].fold {
			for j, l := range rules[i].literals {
				rules[i].literals[j] = bytes.ToLower(l)
			}
		}
	}
}

func lits(s ...string) [][]byte {
	b := make([][]byte, len(s))
	for i, x := range s {
		b[i] = []byte(x)
	}
	return b
}

// Ranks: a secret in a known container (a service account's
// private_key) first, then token formats, then context rules.
const (
	rankContainer = iota
	rankFormat
	rankContext
	rankGeneric
)

// secretKey is the name of a setting whose value is a secret: it ends in
// one of the words below (DB_PASSWORD, client_secret, x-api-key,
// _authToken, GITHUB_TOKEN) so that max_tokens, token_type or
// secret_name are not taken for one.
const secretKey = `[A-Za-z0-9_.-]*?(?:` +
	`[Pp]ass(?:word|wd|phrase)?|PASS(?:WORD|WD|PHRASE)?|PWD|[Pp]wd|` +
	`[Ss]ecret(?:[_-]?[Kk]ey(?:[_-]?[Bb]ase)?)?|SECRET(?:_KEY(?:_BASE)?)?|` +
	`[Aa]pi[_-]?[Kk]ey|API[_-]?KEY|[Aa]pikey|APIKEY|` +
	`[Aa]ccess[_-]?[Kk]ey(?:[_-]?[Ii]d)?|ACCESS[_-]?KEY(?:_ID)?|` +
	`[Pp]rivate[_-]?[Kk]ey(?:[_-]?[Ii]d)?|PRIVATE[_-]?KEY|` +
	`[Tt]oken|TOKEN|[Cc]redentials?|CREDENTIALS?|` +
	`[Aa]uth[_-]?[Kk]ey|AUTH[_-]?KEY|[Ss]ession[_-]?[Kk]ey|SESSION[_-]?KEY|` +
	`[Cc]onnection[_-]?[Ss]tring|CONNECTION[_-]?STRING)`

var keyRE = regexp.MustCompile(`^(?:--?)?` + secretKey + `$`)

// isSecretKey reports whether name (a JSON key, a setting) names a secret.
func isSecretKey(name []byte) bool {
	if len(name) > 64 {
		return false
	}
	return keyRE.Match(name)
}

var rules = []rule{
	// --- token formats -------------------------------------------------
	{kind: "private-key", rank: rankFormat, literals: lits("PRIVATE KEY"),
		// A whole PEM block; a block cut off before its END line (a
		// truncated tool output) up to where its base64 stops.
		re: regexp.MustCompile(`-----BEGIN[ A-Z0-9]{0,20} PRIVATE KEY(?: BLOCK)?-----` +
			`(?:[\s\S]*?-----END[ A-Z0-9]{0,20} PRIVATE KEY(?: BLOCK)?-----|` +
			`(?:[A-Za-z0-9+/=:,\s-]|\\[nr])*)`)},
	{kind: "aws-access-key", rank: rankFormat, literals: lits("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
		re: regexp.MustCompile(`\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`)},
	{kind: "github-token", rank: rankFormat, literals: lits("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
		re: regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{50,255})\b`)},
	{kind: "gitlab-token", rank: rankFormat, literals: lits("gl"),
		re: regexp.MustCompile(`\bgl(?:pat|dt|rt|ptt|soat|cbt|imt|agent|oas|ft|ffct)-[A-Za-z0-9_-]{20,}`)},
	{kind: "anthropic-key", rank: rankFormat, literals: lits("sk-ant-"),
		re: regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_-]{32,}`)},
	{kind: "openai-key", rank: rankFormat, literals: lits("sk-"),
		re:   regexp.MustCompile(`\bsk-(?:(?:proj|svcacct|admin|None)-)?[A-Za-z0-9_-]{32,}`),
		keep: func(v []byte) bool { return bytes.HasPrefix(v, []byte("sk-ant-")) || !mixed(v) }},
	{kind: "slack-token", rank: rankFormat, literals: lits("xox", "xapp-"),
		re: regexp.MustCompile(`\b(?:xox[abposre]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,})`)},
	{kind: "slack-webhook", rank: rankFormat, literals: lits("hooks.slack.com"),
		re: regexp.MustCompile(`https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,}`)},
	{kind: "stripe-key", rank: rankFormat, literals: lits("_live_", "_test_", "whsec_"),
		re: regexp.MustCompile(`\b(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9+/=]{24,})`)},
	{kind: "google-api-key", rank: rankFormat, literals: lits("AIza"),
		re: regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`)},
	{kind: "google-oauth", rank: rankFormat, literals: lits("GOCSPX-", "ya29."),
		re: regexp.MustCompile(`\b(?:GOCSPX-[A-Za-z0-9_-]{28}|ya29\.[A-Za-z0-9_-]{20,})`)},
	{kind: "jwt", rank: rankFormat, literals: lits("eyJ"),
		re: regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`)},
	{kind: "npm-token", rank: rankFormat, literals: lits("npm_"),
		re: regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36}\b`)},
	{kind: "pypi-token", rank: rankFormat, literals: lits("pypi-"),
		re: regexp.MustCompile(`\bpypi-Ag[A-Za-z0-9_-]{50,}`)},
	{kind: "huggingface", rank: rankFormat, literals: lits("hf_", "api_org_"),
		re:   regexp.MustCompile(`\b(?:hf_|api_org_)[A-Za-z0-9]{34,}\b`),
		keep: func(v []byte) bool { return !mixed(v) }},
	{kind: "azure-storage", rank: rankFormat, literals: lits("AccountKey="),
		fold: true,
		re:   regexp.MustCompile(`(?i:AccountKey)=(?P<v>[A-Za-z0-9+/]{40,}={0,2})`)},
	{kind: "azure-sas", rank: rankFormat, literals: lits("sig="),
		re: regexp.MustCompile(`[?&]sig=(?P<v>[A-Za-z0-9%+/=_-]{20,})`)},
	{kind: "sendgrid-key", rank: rankFormat, literals: lits("SG."),
		re: regexp.MustCompile(`\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}`)},
	{kind: "digitalocean-token", rank: rankFormat, literals: lits("dop_v1_", "doo_v1_", "dor_v1_"),
		re: regexp.MustCompile(`\bdo[por]_v1_[a-f0-9]{64}\b`)},

	// --- context: a secret because of where it stands ------------------
	{kind: "gcp-service-account", rank: rankContainer, literals: lits(`"private_key"`),
		re: regexp.MustCompile(`"private_key"\s*:\s*"(?P<v>-----BEGIN[^"]*)"`)},
	{kind: "url-password", rank: rankContext, literals: lits("://"),
		re:   regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.-]{0,20}://[^\s/:@'"<>]{0,128}:(?P<v>[^\s/@'"<>]{1,256})@[A-Za-z0-9\[]`),
		keep: placeholder},
	{kind: "authorization", rank: rankContext, literals: lits("authorization"), fold: true,
		re:   regexp.MustCompile(`(?i:authorization)["']?\s*[:=]\s*["']?(?i:bearer|basic|token|bot|digest)\s+(?P<v>[A-Za-z0-9._~+/=-]{8,})`),
		keep: placeholder},
	{kind: "bearer-token", rank: rankContext, literals: lits("bearer"), fold: true,
		re:   regexp.MustCompile(`\b(?i:bearer)\s+(?P<v>[A-Za-z0-9._~+/-]{16,}=*)`),
		keep: func(v []byte) bool { return placeholder(v) || !mixed(v) }},

	// --- generic assignments: password=…, "api_key": "…", secret: … ----
	{kind: "secret", rank: rankGeneric,
		literals: lits("pass", "pwd", "secret", "key", "token", "credential", "connection"), fold: true,
		re: regexp.MustCompile(`(?:^|[^A-Za-z0-9_./-])["'` + "`" + `]?(?:--?)?` + secretKey +
			`["'` + "`" + `]?\s{0,4}(?:=>|:=|=|:)\s{0,4}` +
			`(?:"(?P<v>[^"\n]{1,512})"|'(?P<v>[^'\n]{1,512})'|(?P<v>[^\s"'` + "`" + `,;&]{1,512}))`),
		keep: assignedCode},
	// mysql -psecret, curl -u user:pass, --password value
	{kind: "secret", rank: rankGeneric, literals: lits("--pass", "--token", "-u ", "--user ", "--api-key", "--secret"),
		re: regexp.MustCompile(`(?:^|\s)(?:--(?:password|passwd|token|api-key|secret|client-secret)\s+|(?:-u|--user)\s+[^\s:'"]{1,64}:)` +
			`(?:"(?P<v>[^"\n]{1,512})"|'(?P<v>[^'\n]{1,512})'|(?P<v>[^\s"'` + "`" + `,;&]{1,512}))`),
		keep: assignedCode},
	{kind: "secret", rank: rankGeneric, literals: lits("mysql", "mariadb"),
		re:   regexp.MustCompile(`\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n|;&]{0,200}?\s-p(?P<v>[^\s"'` + "`" + `;&|]{2,128})`),
		keep: placeholder},
}

// marker reports whether v starts with a redaction marker: redacting a
// marker again would make a second pass find what the first left.
func marker(v []byte) bool { return bytes.HasPrefix(v, []byte("[REDACTED:")) }

// placeholder reports whether v stands for a secret rather than being
// one: a variable ($TOKEN, ${{ secrets.X }}, %PASS%, <password>), masking
// (****, xxxx) or a marker.
func placeholder(v []byte) bool {
	if len(v) == 0 || marker(v) {
		return true
	}
	switch v[0] {
	case '$', '%', '<', '{':
		return true
	}
	if bytes.Contains(v, []byte("{{")) || bytes.Contains(v, []byte("${")) {
		return true
	}
	same := true
	for _, c := range v[1:] {
		if c != v[0] {
			same = false
			break
		}
	}
	return same && (v[0] == '*' || v[0] == 'x' || v[0] == 'X' || v[0] == '.' || v[0] == '-')
}

// notValues are what follows "password:" or "token =" in code and
// configuration without being a secret: types, empty values, lookups.
var notValues = map[string]bool{
	"string": true, "str": true, "String": true, "&str": true, "bytes": true, "[]byte": true,
	"number": true, "int": true, "bool": true, "boolean": true, "any": true, "object": true,
	"null": true, "nil": true, "None": true, "NULL": true, "undefined": true, "true": true,
	"false": true, "True": true, "False": true, "optional": true, "required": true,
	"secret": true, "password": true, "token": true, "redacted": true, "REDACTED": true,
	"changeme": true, "example": true, "env": true, "value": true,
}

// assignedCode reports whether the value of a secret-named setting is
// not a secret: a placeholder, a type or keyword, a small number (a
// count, a port), or code (a call, an index, a field: getenv("X"),
// tokens[0], cfg.Password).
func assignedCode(v []byte) bool {
	if placeholder(v) || notValues[string(v)] {
		return true
	}
	if len(v) < 6 && allIn(v, "0123456789") {
		return true
	}
	if bytes.ContainsAny(v, "()[]{}") {
		return true
	}
	// A dotted lower-case path (os.environ, self.password, process.env.X)
	// is a lookup; a password with dots usually has digits or capitals.
	if bytes.IndexByte(v, '.') > 0 && allIn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_.") &&
		!bytes.HasSuffix(v, []byte(".")) {
		return true
	}
	return false
}

func allIn(v []byte, set string) bool {
	for _, c := range v {
		if bytes.IndexByte([]byte(set), c) < 0 {
			return false
		}
	}
	return true
}

// mixed reports whether v has a digit, a lower- and an upper-case
// letter, as a random token of any length past 20 almost always does,
// and words, paths and identifiers often do not.
func mixed(v []byte) bool {
	var d, l, u bool
	for _, c := range v {
		switch {
		case c >= '0' && c <= '9':
			d = true
		case c >= 'a' && c <= 'z':
			l = true
		case c >= 'A' && c <= 'Z':
			u = true
		}
	}
	return d && l && u
}
