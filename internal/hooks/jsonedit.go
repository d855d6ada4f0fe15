package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// A settings file is edited in place: jsonNode records where each value
// sits in the source, so adding or removing one member or element touches
// only its own bytes and leaves the rest of the file — other keys, their
// order, formatting, comments (Gemini CLI allows them) — as it was.

type jsonNode struct {
	kind       byte // '{', '[', '"', or 'v' for numbers, true, false, null
	start, end int  // the value's span in the source
	members    []jsonMember
	elems      []*jsonNode
}

type jsonMember struct {
	key      string
	keyStart int
	val      *jsonNode
}

func (n *jsonNode) member(key string) *jsonNode {
	if n == nil || n.kind != '{' {
		return nil
	}
	for _, m := range n.members {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

func (n *jsonNode) memberIndex(key string) int {
	for i, m := range n.members {
		if m.key == key {
			return i
		}
	}
	return -1
}

// str returns a string value's text ("", false for other kinds).
func (n *jsonNode) str(src []byte) (string, bool) {
	if n == nil || n.kind != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(src[n.start:n.end], &s) != nil {
		return "", false
	}
	return s, true
}

type jsonParser struct {
	src []byte
	pos int
}

// parseJSONSpans parses a JSON document that may hold // and /* */
// comments.
func parseJSONSpans(src []byte) (*jsonNode, error) {
	p := &jsonParser{src: src}
	p.space()
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(src) {
		return nil, p.errorf("unexpected %q after the document", src[p.pos])
	}
	return n, nil
}

func (p *jsonParser) errorf(format string, a ...any) error {
	line := 1 + bytes.Count(p.src[:min(p.pos, len(p.src))], []byte{'\n'})
	return fmt.Errorf("line %d: %s", line, fmt.Sprintf(format, a...))
}

// space skips whitespace and comments.
func (p *jsonParser) space() {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.pos++
		case c == '/' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '/':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		case c == '/' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '*':
			end := bytes.Index(p.src[p.pos+2:], []byte("*/"))
			if end < 0 {
				p.pos = len(p.src)
				return
			}
			p.pos += 2 + end + 2
		default:
			return
		}
	}
}

func (p *jsonParser) value(depth int) (*jsonNode, error) {
	if depth > 100 {
		return nil, p.errorf("nested too deeply")
	}
	if p.pos >= len(p.src) {
		return nil, p.errorf("unexpected end of file")
	}
	n := &jsonNode{start: p.pos}
	switch c := p.src[p.pos]; c {
	case '{':
		n.kind = '{'
		p.pos++
		p.space()
		if p.pos < len(p.src) && p.src[p.pos] == '}' {
			p.pos++
			n.end = p.pos
			return n, nil
		}
		seen := map[string]bool{}
		for {
			p.space()
			if p.pos >= len(p.src) || p.src[p.pos] != '"' {
				return nil, p.errorf("want a member name")
			}
			ks := p.pos
			if err := p.string(); err != nil {
				return nil, err
			}
			var key string
			if err := json.Unmarshal(p.src[ks:p.pos], &key); err != nil {
				return nil, p.errorf("member name: %v", err)
			}
			// Agents' JSON readers keep one of two equal keys (which one
			// varies): an edit of either would be a guess.
			if seen[key] {
				p.pos = ks
				return nil, p.errorf("duplicate key %q in an object (the agent reads only one of them)", key)
			}
			seen[key] = true
			p.space()
			if p.pos >= len(p.src) || p.src[p.pos] != ':' {
				return nil, p.errorf("want ':' after %q", key)
			}
			p.pos++
			p.space()
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			n.members = append(n.members, jsonMember{key: key, keyStart: ks, val: v})
			p.space()
			if p.pos >= len(p.src) {
				return nil, p.errorf("unexpected end of file in an object")
			}
			if p.src[p.pos] == ',' {
				p.pos++
				continue
			}
			if p.src[p.pos] == '}' {
				p.pos++
				n.end = p.pos
				return n, nil
			}
			return nil, p.errorf("want ',' or '}' in an object")
		}
	case '[':
		n.kind = '['
		p.pos++
		p.space()
		if p.pos < len(p.src) && p.src[p.pos] == ']' {
			p.pos++
			n.end = p.pos
			return n, nil
		}
		for {
			p.space()
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, v)
			p.space()
			if p.pos >= len(p.src) {
				return nil, p.errorf("unexpected end of file in a list")
			}
			if p.src[p.pos] == ',' {
				p.pos++
				continue
			}
			if p.src[p.pos] == ']' {
				p.pos++
				n.end = p.pos
				return n, nil
			}
			return nil, p.errorf("want ',' or ']' in a list")
		}
	case '"':
		n.kind = '"'
		if err := p.string(); err != nil {
			return nil, err
		}
	default:
		n.kind = 'v'
		for p.pos < len(p.src) && strings.IndexByte(",]} \t\r\n/", p.src[p.pos]) < 0 {
			p.pos++
		}
		var v any
		if err := json.Unmarshal(p.src[n.start:p.pos], &v); err != nil {
			return nil, p.errorf("invalid value %q", p.src[n.start:p.pos])
		}
	}
	n.end = p.pos
	return n, nil
}

func (p *jsonParser) string() error {
	p.pos++ // opening quote
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case '\\':
			p.pos += 2
		case '"':
			p.pos++
			return nil
		case '\n':
			return p.errorf("newline in a string")
		default:
			p.pos++
		}
	}
	return p.errorf("unterminated string")
}

// jsonStyle is how a file is laid out: one indentation level's
// whitespace, or all on one line (compact).
type jsonStyle struct {
	unit    string
	compact bool
}

// detectStyle finds the file's indentation unit: the shortest non-empty
// leading whitespace of a line (tabs if a line starts with one), two
// spaces by default.
func detectStyle(src []byte) jsonStyle {
	if t := bytes.TrimSpace(src); len(t) > 0 && bytes.IndexByte(t, '\n') < 0 {
		return jsonStyle{unit: "  ", compact: true}
	}
	best := ""
	for _, line := range bytes.Split(src, []byte{'\n'}) {
		i := 0
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i == 0 || i == len(line) {
			continue
		}
		if line[0] == '\t' {
			return jsonStyle{unit: "\t"}
		}
		if best == "" || i < len(best) {
			best = string(line[:i])
		}
	}
	if best == "" {
		best = "  "
	}
	return jsonStyle{unit: best}
}

// lineIndent returns the leading whitespace of the line holding pos.
func lineIndent(src []byte, pos int) string {
	ls := bytes.LastIndexByte(src[:pos], '\n') + 1
	i := ls
	for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	return string(src[ls:i])
}

// render encodes v as JSON indented for a value whose line starts with
// indent (on one line in a compact file).
func render(v any, indent string, st jsonStyle) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if !st.compact {
		enc.SetIndent(indent, st.unit)
	}
	enc.Encode(v)
	return bytes.TrimRight(b.Bytes(), "\n")
}

// multiline reports whether a container's first child starts on a new line.
func multiline(src []byte, container *jsonNode, firstStart int) bool {
	return bytes.IndexByte(src[container.start:firstStart], '\n') >= 0
}

// splice returns src with [start, end) replaced by text.
func splice(src []byte, start, end int, text string) []byte {
	out := make([]byte, 0, len(src)-(end-start)+len(text))
	out = append(out, src[:start]...)
	out = append(out, text...)
	return append(out, src[end:]...)
}

// addMember adds "key": v as the last member of object obj.
func addMember(src []byte, obj *jsonNode, key string, v any, st jsonStyle) []byte {
	k, _ := json.Marshal(key)
	if len(obj.members) == 0 && st.compact {
		return splice(src, obj.start+1, obj.end-1, string(k)+":"+string(render(v, "", st)))
	}
	if len(obj.members) == 0 {
		outer := lineIndent(src, obj.start)
		inner := outer + st.unit
		text := "\n" + inner + string(k) + ": " + string(render(v, inner, st)) + "\n" + outer
		return splice(src, obj.start+1, obj.end-1, text)
	}
	last := obj.members[len(obj.members)-1]
	if !multiline(src, obj, obj.members[0].keyStart) {
		var b bytes.Buffer
		json.Compact(&b, render(v, "", st))
		if st.compact {
			return splice(src, last.val.end, last.val.end, ","+string(k)+":"+b.String())
		}
		return splice(src, last.val.end, last.val.end, ", "+string(k)+": "+b.String())
	}
	inner := lineIndent(src, obj.members[0].keyStart)
	return splice(src, last.val.end, last.val.end, ",\n"+inner+string(k)+": "+string(render(v, inner, st)))
}

// addElem appends v to array arr.
func addElem(src []byte, arr *jsonNode, v any, st jsonStyle) []byte {
	if len(arr.elems) == 0 && st.compact {
		return splice(src, arr.start+1, arr.end-1, string(render(v, "", st)))
	}
	if len(arr.elems) == 0 {
		outer := lineIndent(src, arr.start)
		inner := outer + st.unit
		text := "\n" + inner + string(render(v, inner, st)) + "\n" + outer
		return splice(src, arr.start+1, arr.end-1, text)
	}
	last := arr.elems[len(arr.elems)-1]
	if !multiline(src, arr, arr.elems[0].start) {
		var b bytes.Buffer
		json.Compact(&b, render(v, "", st))
		if st.compact {
			return splice(src, last.end, last.end, ","+b.String())
		}
		return splice(src, last.end, last.end, ", "+b.String())
	}
	inner := lineIndent(src, arr.elems[0].start)
	return splice(src, last.end, last.end, ",\n"+inner+string(render(v, inner, st)))
}

// removeItem removes the i-th of a container's items (spans given as
// start, end pairs): with the separator before it, or, for the first, the
// one after it; the only item leaves the container empty.
func removeItem(src []byte, container *jsonNode, starts, ends []int, i int) []byte {
	switch {
	case len(starts) == 1:
		return splice(src, container.start+1, container.end-1, "")
	case i > 0:
		return splice(src, ends[i-1], ends[i], "")
	default:
		return splice(src, starts[0], starts[1], "")
	}
}

func removeMember(src []byte, obj *jsonNode, i int) []byte {
	var starts, ends []int
	for _, m := range obj.members {
		starts, ends = append(starts, m.keyStart), append(ends, m.val.end)
	}
	return removeItem(src, obj, starts, ends, i)
}

func removeElem(src []byte, arr *jsonNode, i int) []byte {
	var starts, ends []int
	for _, e := range arr.elems {
		starts, ends = append(starts, e.start), append(ends, e.end)
	}
	return removeItem(src, arr, starts, ends, i)
}
