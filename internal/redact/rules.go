package redact

import (
	"bytes"
	"regexp"
	"sync"
)

// A rule finds one kind of secret. It looks for its literals (with
// bytes.Index, case-insensitively when fold is set) and, at each, runs
// its expression anchored where the match would begin, on a window of
// at most max bytes: Go's regexp runs in linear time, but slowly when it
// must try every position of a large text, and twenty expressions each
// scanning megabytes of tool output would be too slow.
//
// A match begins at the literal, or, when back is set, before it, as far
// as bytes of back go (a setting's name before "token", a URL's scheme
// before "://"), at most maxBack bytes. The byte before the match must
// satisfy before (a word boundary where the expression had \b).
//
// If the expression has groups named "v", only the one that took part is
// redacted (the value of an assignment, the password of a URL); the
// whole match otherwise.
type rule struct {
	kind     string
	literals [][]byte
	fold     bool
	back     string
	before   func(c byte) bool
	re       *regexp.Regexp
	max      int
	// need, if set, must be in the window for re to run there: a cheap
	// test that spares the expression most windows.
	need []byte
	// match, if set, is used in place of re: it returns the part to
	// redact of the match that starts at start and holds the literal at
	// p, and false if there is none.
	match func(b []byte, start, p int) (vs, ve int, ok bool)
	// keep reports whether a match is not a secret after all (a type
	// name, a placeholder, code); nil keeps nothing.
	keep func(v []byte) bool
	// rank orders rules whose matches start at the same byte: the lower
	// names the secret (a GitHub token in GITHUB_TOKEN=… is a
	// github-token, not a generic assignment).
	rank int
}

const (
	maxBack   = 64
	maxWindow = 512
)

// setup builds rules and dispatch once.
var setup sync.Once

func initRules() {
	rules = ruleTable()
	if len(rules) > 64 {
		panic("redact: more rules than find can track")
	}
	for i := range rules {
		r := &rules[i]
		if r.max == 0 {
			r.max = maxWindow
		}
		for _, l := range r.literals {
			if r.fold {
				l = lowerASCII(l)
			}
			dispatch[l[0]] = append(dispatch[l[0]], literal{i, l})
			if r.fold && l[0] >= 'a' && l[0] <= 'z' {
				dispatch[l[0]-'a'+'A'] = append(dispatch[l[0]-'a'+'A'], literal{i, l})
			}
		}
	}
}

// lowerASCII lowers the ASCII letters of b, and only them, so that
// offsets in the result are offsets in b.
func lowerASCII(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

func lits(s ...string) [][]byte {
	b := make([][]byte, len(s))
	for i, x := range s {
		b[i] = []byte(x)
	}
	return b
}

// anchored compiles an expression that must match where it is run.
func anchored(expr string) *regexp.Regexp { return regexp.MustCompile(`^(?:` + expr + `)`) }

func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// notWord is \b before a word character: the byte before is not one.
func notWord(c byte) bool { return !wordByte(c) }

func space(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// Ranks: a secret in a known container (a service account's
// private_key) first, then token formats, then context rules.
const (
	rankContainer = iota
	rankFormat
	rankContext
	rankGeneric
)

// secretWords end the name of a setting whose value is a secret
// (DB_PASSWORD, client_secret, x-api-key, _authToken, GITHUB_TOKEN), so
// that max_tokens, token_type or secret_name are not taken for one.
// Compared in lower case; the words after boundWords must also start the
// name or a part of it (DB_PASS, dbPass, but not bypass or compass).
var secretWords = []string{
	"password", "passwd", "passphrase", "secret", "secretkey", "secret_key", "secret-key",
	"secret_key_base", "apikey", "api_key", "api-key", "accesskey", "access_key", "access-key",
	"access_key_id", "accesskeyid", "access-key-id", "privatekey", "private_key", "private-key",
	"private_key_id", "privatekeyid", "private-key-id", "token", "credential", "credentials",
	"authkey", "auth_key", "auth-key", "sessionkey", "session_key", "session-key",
	"connectionstring", "connection_string", "connection-string",
	boundWords, "pass", "pwd",
}

const boundWords = ""

// isSecretKey reports whether name (a JSON key, a setting's name, maybe
// with a leading "--") names a secret.
func isSecretKey(name []byte) bool {
	name = bytes.TrimLeft(name, "-")
	if len(name) == 0 || len(name) > maxBack {
		return false
	}
	var buf [maxBack]byte
	low := buf[:len(name)]
	for i, c := range name {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	bound := false
	for _, w := range secretWords {
		if w == boundWords {
			bound = true
			continue
		}
		if !bytes.HasSuffix(low, []byte(w)) {
			continue
		}
		i := len(name) - len(w)
		if !bound || i == 0 || !wordByte(name[i-1]) || name[i-1] == '_' ||
			name[i] >= 'A' && name[i] <= 'Z' && name[i-1] >= 'a' && name[i-1] <= 'z' {
			return true
		}
	}
	return false
}

// value is the value of an assignment: quoted, or up to a space or a
// separator.
const value = `(?:"(?P<v>[^"\n]+)"|'(?P<v>[^'\n]+)'|(?P<v>[^\s"'` + "`" + `,;&]+))`

// rules are built, their expressions compiled, on the first redaction
// (setup), not when the package loads: every ckpt process, a hook's
// included, would pay for them at start.
var rules []rule

func ruleTable() []rule {
	return []rule{
		// --- token formats -------------------------------------------------
		// (PEM private keys: appendPEM.)
		{kind: "aws-access-key", rank: rankFormat, literals: lits("AKIA", "ASIA", "ABIA", "ACCA", "A3T"), before: notWord,
			re: anchored(`(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`)},
		{kind: "github-token", rank: rankFormat, literals: lits("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), before: notWord,
			re: anchored(`(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,})\b`)},
		{kind: "gitlab-token", rank: rankFormat, literals: lits("glpat-", "gldt-", "glrt-", "glptt-", "glsoat-", "glcbt-", "glimt-",
			"glagent-", "gloas-", "glft-", "glffct-"), before: notWord,
			re: anchored(`gl[a-z]{2,6}-[A-Za-z0-9_-]{20,}`)},
		{kind: "anthropic-key", rank: rankFormat, literals: lits("sk-ant-"), before: notWord,
			re: anchored(`sk-ant-[A-Za-z0-9_-]{32,}`)},
		{kind: "openai-key", rank: rankFormat, literals: lits("sk-"), before: notWord,
			re:   anchored(`sk-(?:(?:proj|svcacct|admin|None)-)?[A-Za-z0-9_-]{32,}`),
			keep: func(v []byte) bool { return bytes.HasPrefix(v, []byte("sk-ant-")) || !mixed(v) }},
		{kind: "slack-token", rank: rankFormat, literals: lits("xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xoxe-", "xapp-"),
			before: notWord, re: anchored(`(?:xox[abposre]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,})`)},
		{kind: "slack-webhook", rank: rankFormat, literals: lits("https://hooks.slack.com/"),
			re: anchored(`https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,}`)},
		{kind: "stripe-key", rank: rankFormat, literals: lits("sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_"), before: notWord,
			re: anchored(`(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9+/=]{24,})`)},
		{kind: "google-api-key", rank: rankFormat, literals: lits("AIza"), before: notWord,
			re: anchored(`AIza[0-9A-Za-z_-]{35}`)},
		{kind: "google-oauth", rank: rankFormat, literals: lits("GOCSPX-", "ya29."), before: notWord,
			re: anchored(`(?:GOCSPX-[A-Za-z0-9_-]{28}|ya29\.[A-Za-z0-9_-]{20,})`)},
		{kind: "jwt", rank: rankFormat, literals: lits("eyJ"), before: notWord, max: 8 << 10,
			re: anchored(`eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`)},
		{kind: "npm-token", rank: rankFormat, literals: lits("npm_"), before: notWord,
			re: anchored(`npm_[A-Za-z0-9]{36}\b`)},
		{kind: "pypi-token", rank: rankFormat, literals: lits("pypi-Ag"), before: notWord,
			re: anchored(`pypi-Ag[A-Za-z0-9_-]{50,}`)},
		{kind: "huggingface", rank: rankFormat, literals: lits("hf_", "api_org_"), before: notWord,
			re:   anchored(`(?:hf_|api_org_)[A-Za-z0-9]{34,}\b`),
			keep: func(v []byte) bool { return !mixed(v) }},
		{kind: "azure-storage", rank: rankFormat, literals: lits("AccountKey="), fold: true,
			re: anchored(`(?i:AccountKey)=(?P<v>[A-Za-z0-9+/]{40,}={0,2})`)},
		{kind: "azure-sas", rank: rankFormat, literals: lits("sig="), before: func(c byte) bool { return c == '?' || c == '&' },
			re: anchored(`sig=(?P<v>[A-Za-z0-9%+/=_-]{20,})`)},
		{kind: "sendgrid-key", rank: rankFormat, literals: lits("SG."), before: notWord,
			re: anchored(`SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}`)},
		{kind: "digitalocean-token", rank: rankFormat, literals: lits("dop_v1_", "doo_v1_", "dor_v1_"), before: notWord,
			re: anchored(`do[por]_v1_[a-f0-9]{64}\b`)},

		// --- context: a secret because of where it stands ------------------
		{kind: "gcp-service-account", rank: rankContainer, literals: lits(`"private_key"`), max: 8 << 10,
			re: anchored(`"private_key"\s*:\s*"(?P<v>-----BEGIN[^"]*)"`)},
		{kind: "url-password", rank: rankContext, literals: lits("://"), back: schemeBytes, before: notWord,
			re:   anchored(`[A-Za-z][A-Za-z0-9+.-]{0,20}://[^\s/:@'"<>]*:(?P<v>[^\s/@'"<>]+)@`),
			keep: placeholder},
		{kind: "authorization", rank: rankContext, literals: lits("authorization"), fold: true,
			re:   anchored(`(?i:authorization)["']?\s*[:=]\s*["']?(?i:bearer|basic|token|bot|digest)\s+(?P<v>[A-Za-z0-9._~+/=-]{8,})`),
			keep: placeholder},
		{kind: "bearer-token", rank: rankContext, literals: lits("bearer"), fold: true, before: notWord,
			re:   anchored(`(?i:bearer)\s+(?P<v>[A-Za-z0-9._~+/-]{16,}=*)`),
			keep: func(v []byte) bool { return placeholder(v) || !mixed(v) }},

		// --- generic assignments: password=…, "api_key": "…", secret: … ----
		{kind: "secret", rank: rankGeneric, fold: true, back: keyBytes, before: keyBoundary, match: assignment,
			literals: lits("pass", "pwd", "secret", "key", "token", "credential", "connection"),
			keep:     assignedCode},
		// --password value, curl -u user:pass
		{kind: "secret", rank: rankGeneric, before: space,
			literals: lits("--password", "--passwd", "--token", "--api-key", "--secret", "--client-secret", "-u ", "--user "),
			re:       anchored(`(?:--(?:password|passwd|token|api-key|secret|client-secret)\s+|(?:-u|--user)\s+[^\s:'"]+:)` + value),
			keep:     assignedCode},
		// mysql -psecret
		{kind: "secret", rank: rankGeneric, literals: lits("mysql", "mariadb"), before: notWord, max: 256,
			re:   anchored(`(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n|;&]*?\s-p(?P<v>[^\s"'` + "`" + `;&|]{2,})`),
			need: []byte("-p"), keep: placeholder},
	}
}

const (
	schemeBytes = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-"
	keyBytes    = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-\"'`"
)

// assignment matches a setting whose name names a secret and its value
// (DB_PASSWORD=…, "api_key": "…", secret: …), the name holding the
// literal at p and starting at start. It returns where the value starts
// and ends, and false if there is no such setting there.
func assignment(b []byte, start, p int) (vs, ve int, ok bool) {
	i := start
	if i < len(b) && quote(b[i]) {
		i++
	}
	e := p
	for e < len(b) && e-start <= maxBack && (wordByte(b[e]) || b[e] == '.' || b[e] == '-') {
		e++
	}
	if !isSecretKey(b[i:e]) {
		return 0, 0, false
	}
	if e < len(b) && quote(b[e]) {
		e++
	}
	e = skipBlanks(b, e)
	switch {
	case bytes.HasPrefix(b[e:], []byte("=>")), bytes.HasPrefix(b[e:], []byte(":=")):
		e += 2
	case bytes.HasPrefix(b[e:], []byte("::")), bytes.HasPrefix(b[e:], []byte("==")):
		return 0, 0, false
	case e < len(b) && (b[e] == '=' || b[e] == ':'):
		e++
	default:
		return 0, 0, false
	}
	return assignedValue(b, skipBlanks(b, e))
}

// assignedValue returns the value at b[i:]: in quotes (without them), or
// up to a space, quote, comma, semicolon or ampersand; at most 512 bytes.
func assignedValue(b []byte, i int) (vs, ve int, ok bool) {
	if i >= len(b) {
		return 0, 0, false
	}
	if quote(b[i]) {
		q := b[i]
		j := i + 1
		for j < len(b) && j-i <= 512 && b[j] != q && b[j] != '\n' {
			j++
		}
		if j >= len(b) || b[j] != q || j == i+1 {
			return 0, 0, false
		}
		return i + 1, j, true
	}
	j := i
	for j < len(b) && j-i < 512 && !space(b[j]) && !quote(b[j]) && b[j] != ',' && b[j] != ';' && b[j] != '&' {
		j++
	}
	return i, j, j > i
}

func quote(c byte) bool { return c == '"' || c == '\'' || c == '`' }

// skipBlanks skips up to four spaces or tabs (not newlines: a name at
// the end of a line has no value).
func skipBlanks(b []byte, i int) int {
	for k := 0; k < 4 && i < len(b) && (b[i] == ' ' || b[i] == '\t'); k++ {
		i++
	}
	return i
}

// keyBoundary: a setting's name starts after a byte that cannot be in a
// name, nor a '/' (so that https://x-access-token:… is a URL).
func keyBoundary(c byte) bool { return !wordByte(c) && c != '.' && c != '-' && c != '/' }

// appendPEM appends the PEM private key blocks of b: from a BEGIN line
// to its END line; without one (the text was cut off), to the end of the
// last line of base64 (or of a Proc-Type or DEK-Info header) after it.
// Lines end in a newline or in an escaped one (\n in JSON).
func appendPEM(found []span, b []byte) []span {
	endStart, endEnd := -2, -2 // the next END line found; -1: there is none
	for at := 0; ; {
		k := bytes.Index(b[at:], []byte("-----BEGIN"))
		if k < 0 {
			return found
		}
		p := at + k
		m := pemBegin.FindIndex(b[p:min(len(b), p+64)])
		if m == nil {
			at = p + len("-----BEGIN")
			continue
		}
		i := p + m[1]
		if endStart == -2 || endStart >= 0 && endStart < i {
			endStart, endEnd = nextPEMEnd(b, i)
		}
		end := endEnd
		if end < 0 {
			end = pemBody(b, i)
		}
		found = append(found, span{start: p, end: end, kind: "private-key", rank: rankFormat})
		at = end
	}
}

// nextPEMEnd returns where the first private key END line at or after
// from starts and ends; -1, -1 if there is none.
func nextPEMEnd(b []byte, from int) (int, int) {
	for j := from; ; {
		k := bytes.Index(b[j:], []byte("-----END"))
		if k < 0 {
			return -1, -1
		}
		j += k
		if e := pemEndLine.FindIndex(b[j:min(len(b), j+64)]); e != nil {
			return j, j + e[1]
		}
		j += len("-----END")
	}
}

// pemBody returns the end of the lines of base64 (and headers) that
// follow a BEGIN line ending at i.
func pemBody(b []byte, i int) int {
	end := i
	for {
		n := newline(b, end)
		if n == 0 {
			return end
		}
		j := end + n
		k := j
		for k < len(b) && (tokenByte(b[k]) || b[k] == '=') {
			k++
		}
		if k < len(b) && newline(b, k) == 0 {
			if !bytes.HasPrefix(b[j:], []byte("Proc-Type:")) && !bytes.HasPrefix(b[j:], []byte("DEK-Info:")) {
				return end
			}
			for k < len(b) && newline(b, k) == 0 {
				k++
			}
		}
		end = k
	}
}

var (
	pemBegin   = anchored(`-----BEGIN[ A-Z0-9]{0,20} PRIVATE KEY(?: BLOCK)?-----`)
	pemEndLine = anchored(`-----END[ A-Z0-9]{0,20} PRIVATE KEY(?: BLOCK)?-----`)
)

// newline returns the length of the line break at b[i:]: "\n", "\r\n",
// or an escaped "\\n" or "\\r\\n"; 0 if there is none.
func newline(b []byte, i int) int {
	for _, nl := range []string{"\n", "\r\n", `\n`, `\r\n`} {
		if bytes.HasPrefix(b[i:], []byte(nl)) {
			return len(nl)
		}
	}
	return 0
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
// not a secret: a placeholder, a type or keyword, a path, a small number
// (a count, a port), or code (a call, an index, a field: getenv("X"),
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
	// A path (PWD=/home/alice, OLDPWD=~/src).
	if v[0] == '/' || bytes.HasPrefix(v, []byte("~/")) || bytes.HasPrefix(v, []byte("./")) {
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
