package redact

import (
	"bytes"
	"encoding/base64"
	"math"
)

// Tokens shorter than minToken or longer than maxToken are never taken
// for secrets by their entropy alone: short ones are too often chance,
// and long ones are data (an image, a file's content, a source map), not
// a credential; the formats with a prefix are found at any length.
const (
	minToken = 20
	maxToken = 1024
	minHex   = 32
)

// digestLen are the lengths of hex digests (MD5, SHA-1 — a git object
// id, SHA-224, SHA-256 — a ckpt object id, SHA-384, SHA-512): such hex
// is an id, not a secret.
var digestLen = map[int]bool{32: true, 40: true, 56: true, 64: true, 96: true, 128: true}

// tokenByte reports whether c can be part of a base64, base64url or hex
// token. '=' is not: it is padding only at a token's end (see
// appendEntropic), and an assignment sign anywhere else.
func tokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '+' || c == '/' || c == '_' || c == '-'
}

// appendEntropic appends to spans the high-entropy tokens of b[from:to].
// Each byte is looked at a bounded number of times, so this is linear.
func appendEntropic(spans []span, b []byte, from, to int) []span {
	i := from
	for i < to {
		if !tokenByte(b[i]) {
			i++
			continue
		}
		j := i
		for j < to && tokenByte(b[j]) {
			j++
		}
		end := j
		// Padding: up to two '=' that end the token.
		for k := 0; k < 2 && end < to && b[end] == '='; k++ {
			end++
		}
		if end < to && (b[end] == '=' || tokenByte(b[end])) {
			end = j // "KEY=value": the '=' is an assignment
		}
		if kind := classify(b, i, j); kind != "" {
			spans = append(spans, span{start: i, end: end, kind: kind, rank: rankGeneric})
		}
		i = end
	}
	return spans
}

// classify returns the kind of secret the token b[i:j] is ("" for none).
func classify(b []byte, i, j int) string {
	tok := b[i:j]
	if len(tok) < minToken || len(tok) > maxToken {
		return ""
	}
	if hexish(tok) {
		if secretHex(tok) {
			return "high-entropy"
		}
		return ""
	}
	if hashed(b, i) {
		return ""
	}
	// Cut a path or an option into its parts: a secret is one random run,
	// a path is several short words.
	core := bytes.Trim(tok, "-_/+")
	if len(core) < minToken || !mixed(core) || bytes.HasPrefix(core, []byte("AAAA")) && sshKey(b, i) {
		return ""
	}
	if wordy(core) > 0.5 || entropy(core) < minEntropy(len(core)) {
		return ""
	}
	if decodesToText(core) {
		return ""
	}
	return "high-entropy"
}

// hexish reports whether tok is hex digits, maybe in groups joined by
// '-' (a UUID).
func hexish(tok []byte) bool {
	for _, c := range tok {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == '-') {
			return false
		}
	}
	return true
}

// secretHex reports whether a hex token holds a random hex run that is
// not a digest: at least minHex digits, not of a digest's length, with
// both letters and digits and high entropy (hex peaks at 4 bits).
func secretHex(tok []byte) bool {
	for part := range bytes.SplitSeq(tok, []byte("-")) {
		if len(part) < minHex || digestLen[len(part)] {
			continue
		}
		if allIn(part, "0123456789") || allIn(part, "abcdefABCDEF") {
			continue
		}
		if entropy(part) >= 3.3 {
			return true
		}
	}
	return false
}

// hashPrefixes introduce a digest written in base64 (go.sum "h1:",
// Subresource Integrity "sha512-", "sha256:"): not secrets.
var hashPrefixes = [][]byte{[]byte("h1:"), []byte("sha1-"), []byte("sha256-"), []byte("sha384-"),
	[]byte("sha512-"), []byte("sha256:"), []byte("sha512:"), []byte("sha1:"), []byte("md5-"), []byte("md5:")}

// hashed reports whether the token at b[i:] is a digest by its prefix,
// inside the token (sha512-…) or just before it (h1:…).
func hashed(b []byte, i int) bool {
	for _, p := range hashPrefixes {
		if bytes.HasPrefix(b[i:], p) {
			return true
		}
		if i >= len(p) && bytes.Equal(b[i-len(p):i], p) {
			return true
		}
	}
	return false
}

// sshKey reports whether the token at b[i:] follows "ssh-rsa ",
// "ssh-ed25519 ", "ecdsa-sha2-nistp256 " and the like: an SSH public
// key, which is not a secret.
func sshKey(b []byte, i int) bool {
	k := i - 1
	for k >= 0 && (b[k] == ' ' || b[k] == '\t') {
		k--
	}
	w := k + 1
	for w > 0 && b[w-1] != ' ' && b[w-1] != '\t' && b[w-1] != '\n' && b[w-1] != '"' {
		w--
	}
	word := b[w : k+1]
	return bytes.HasPrefix(word, []byte("ssh-")) || bytes.HasPrefix(word, []byte("ecdsa-")) ||
		bytes.HasPrefix(word, []byte("sk-ssh-")) || bytes.HasPrefix(word, []byte("sk-ecdsa-"))
}

// entropy is the Shannon entropy of b in bits per byte.
func entropy(b []byte) float64 {
	var count [256]int
	for _, c := range b {
		count[c]++
	}
	n := float64(len(b))
	h := 0.0
	for _, c := range count {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// minEntropy is the entropy a token of n bytes must reach to be taken
// for random. A random base62 token of n bytes has an entropy near
// log2(n) for small n (few bytes repeat) and near 5.9 for large n; the
// bar sits below that by a margin that lets through about one random
// token in a thousand (see TestEntropyCalibration).
func minEntropy(n int) float64 {
	return math.Min(math.Log2(float64(n))*0.8, 4.3)
}

// wordy returns the share of b in runs of three or more lower-case
// letters (after an optional capital): high in identifiers, paths and
// words (someFunctionName, internal/redact), low in random tokens.
func wordy(b []byte) float64 {
	in := 0
	for i := 0; i < len(b); {
		j := i
		if b[j] >= 'A' && b[j] <= 'Z' {
			j++
		}
		k := j
		for k < len(b) && b[k] >= 'a' && b[k] <= 'z' {
			k++
		}
		if k-j >= 3 {
			in += k - i
			i = k
			continue
		}
		i++
	}
	return float64(in) / float64(len(b))
}

// decodesToText reports whether b is base64 of printable ASCII (base64
// of a number, a name, a sentence): encoded text, not a random key.
func decodesToText(b []byte) bool {
	s := string(bytes.TrimRight(b, "="))
	var dec []byte
	var err error
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		if dec, err = enc.DecodeString(s); err == nil {
			break
		}
	}
	if err != nil || len(dec) == 0 {
		return false
	}
	for _, c := range dec {
		if c < 0x20 && c != '\n' && c != '\t' && c != '\r' || c > 0x7e {
			return false
		}
	}
	return true
}
