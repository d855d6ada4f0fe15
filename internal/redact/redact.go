package redact

import (
	"bytes"
	"slices"
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
	spans := find([]byte(s))
	if len(spans) == 0 {
		return s, 0
	}
	return string(apply([]byte(s), spans)), len(spans)
}

// Bytes is [String] for a byte slice. The result is b itself when
// nothing was found, a new slice otherwise; b is never modified.
func Bytes(b []byte) ([]byte, int) {
	spans := find(b)
	if len(spans) == 0 {
		return b, 0
	}
	return apply(b, spans), len(spans)
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
	var found []span
	var lower []byte // b in lower case, made once for the rules that fold
	for i := range rules {
		r := &rules[i]
		hay := b
		if r.fold {
			if lower == nil {
				lower = bytes.ToLower(b)
			}
			hay = lower
		}
		if !containsAny(hay, r.literals) {
			continue
		}
		found = appendMatches(found, r, b)
	}
	found = merge(found)

	// High-entropy tokens, in each stretch between two secrets found so
	// far: a second pass over the output sees the same stretches, as a
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

func containsAny(b []byte, lits [][]byte) bool {
	for _, l := range lits {
		if bytes.Contains(b, l) {
			return true
		}
	}
	return false
}

// appendMatches appends the matches of r in b: the group named "v" when
// the expression has one (the first that took part in the match), the
// whole match otherwise.
func appendMatches(found []span, r *rule, b []byte) []span {
	names := r.re.SubexpNames()
	for _, m := range r.re.FindAllSubmatchIndex(b, -1) {
		start, end := m[0], m[1]
		for g, name := range names {
			if name == "v" && m[2*g] >= 0 {
				start, end = m[2*g], m[2*g+1]
				break
			}
		}
		if start == end {
			continue
		}
		v := b[start:end]
		if marker(v) || (r.keep != nil && r.keep(v)) {
			continue
		}
		found = append(found, span{start: start, end: end, kind: r.kind, rank: r.rank})
	}
	return found
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
