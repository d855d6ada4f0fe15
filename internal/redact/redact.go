package redact

import (
	"bytes"
	"slices"
	"strings"
)

// span is a secret found in a text: bytes [start, end) are replaced by a
// marker naming kind.
type span struct {
	start, end int
	kind       string
	rank       int
}

// String returns s with every secret it finds replaced by a marker
// "[REDACTED:kind]", and how many it replaced. Bytes that are not part
// of a secret are kept as they are, invalid UTF-8 included.
func String(s string) (string, int) {
	out, n := redact([]byte(s))
	if n == 0 {
		return s, 0
	}
	return string(out), n
}

// Bytes is [String] for a byte slice. The result is b itself when
// nothing was found, a new slice otherwise; b is never modified.
func Bytes(b []byte) ([]byte, int) { return redact(b) }

// maxRounds bounds how often redact looks again at its own output.
const maxRounds = 4

// redact replaces the secrets find reports, then looks again, as a
// marker can make what stood next to a secret read as one (a word
// boundary where there was none): it stops when a look finds nothing,
// so that redacting its result finds nothing either.
func redact(b []byte) ([]byte, int) {
	total := 0
	for range maxRounds {
		spans := find(b)
		if len(spans) == 0 {
			break
		}
		b = apply(b, spans)
		total += len(spans)
	}
	return b, total
}

// Marker is the text that replaces a secret of the given kind.
func Marker(kind string) string { return "[REDACTED:" + kind + "]" }

// apply replaces each span of b (sorted, disjoint) by its marker.
func apply(b []byte, spans []span) []byte {
	n := len(b)
	for _, s := range spans {
		n += len(Marker(s.kind)) - (s.end - s.start)
	}
	out := make([]byte, 0, n)
	at := 0
	for _, s := range spans {
		out = append(out, b[at:s.start]...)
		out = append(out, Marker(s.kind)...)
		at = s.end
	}
	return append(out, b[at:]...)
}

// find returns the secrets in b, sorted and disjoint: first those the
// rules name, then, in the text between them, high-entropy tokens.
func find(b []byte) []span {
	setup.Do(initRules)
	found := appendPEM(nil, b)
	// One pass looks for every rule's literals at once: at each byte,
	// only those that begin with it are tried.
	var last [64]int // per rule, where its last match ended
	for p := range b {
		for _, l := range dispatch[b[p]] {
			if hasPrefix(b[p:], l.lit, rules[l.rule].fold) {
				found = tryRule(found, &rules[l.rule], b, p, &last[l.rule])
			}
		}
	}
	found = merge(found)

	// High-entropy tokens, in each stretch between two secrets found so
	// far: a second look at the output sees the same stretches, as a
	// marker's brackets end a token.
	var all []span
	at := 0
	for _, s := range found {
		all = appendEntropic(all, b, at, s.start)
		all = append(all, s)
		at = s.end
	}
	return appendEntropic(all, b, at, len(b))
}

// A literal of a rule, in the dispatch table by its first byte.
type literal struct {
	rule int
	lit  []byte
}

// dispatch lists the literals by their first byte (both cases for the
// rules that fold); filled by init in rules.go.
var dispatch [256][]literal

// hasPrefix reports whether b starts with lit, ignoring the case of
// ASCII letters if fold is set (lit is then in lower case).
func hasPrefix(b, lit []byte, fold bool) bool {
	if len(b) < len(lit) {
		return false
	}
	if !fold {
		return bytes.Equal(b[:len(lit)], lit)
	}
	for i, c := range lit {
		d := b[i]
		if d >= 'A' && d <= 'Z' {
			d += 'a' - 'A'
		}
		if d != c {
			return false
		}
	}
	return true
}

// tryRule appends the match of r that holds its literal at p, if there
// is one and it does not begin inside r's last match (which ended at
// *last).
func tryRule(found []span, r *rule, b []byte, p int, last *int) []span {
	start := p
	if r.back != "" {
		for start > 0 && p-start < maxBack && strings.IndexByte(r.back, b[start-1]) >= 0 {
			start--
		}
		if start > 0 && strings.IndexByte(r.back, b[start-1]) >= 0 {
			return found // a name longer than any setting's
		}
	}
	if start < *last || start > 0 && r.before != nil && !r.before(b[start-1]) {
		return found
	}
	var vs, ve int
	if r.match != nil {
		var ok bool
		if vs, ve, ok = r.match(b, start, p); !ok {
			return found
		}
		*last = ve
	} else {
		window := b[start:min(len(b), start+r.max)]
		if r.need != nil && !bytes.Contains(window, r.need) {
			return found
		}
		m := r.re.FindSubmatchIndex(window)
		if m == nil {
			return found
		}
		vs, ve = m[0], m[1]
		for g, name := range r.re.SubexpNames() {
			if name == "v" && m[2*g] >= 0 {
				vs, ve = m[2*g], m[2*g+1]
				break
			}
		}
		vs, ve, *last = start+vs, start+ve, start+m[1]
	}
	v := b[vs:ve]
	if len(v) == 0 || marker(v) || (r.keep != nil && r.keep(v)) {
		return found
	}
	return append(found, span{start: vs, end: ve, kind: r.kind, rank: r.rank})
}

// merge sorts spans and joins those that overlap, so no part of a secret
// is left out because another match began inside it. The joined span
// keeps the kind of the best-ranked (then earliest, then longest) one.
func merge(spans []span) []span {
	if len(spans) < 2 {
		return spans
	}
	slices.SortFunc(spans, func(a, b span) int {
		if a.start != b.start {
			return a.start - b.start
		}
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		return b.end - a.end
	})
	out := spans[:1]
	for _, s := range spans[1:] {
		last := &out[len(out)-1]
		if s.start >= last.end {
			out = append(out, s)
			continue
		}
		if s.end > last.end {
			last.end = s.end
		}
		if s.rank < last.rank {
			last.kind, last.rank = s.kind, s.rank
		}
	}
	return out
}
